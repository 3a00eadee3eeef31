// Structured logging, one logger per subsystem: a JSON object per line (journald, log shippers) or a
// human form on a terminal. Writes to stderr; never throws.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(subsystem: string): Logger;
  isEnabled(level: LogLevel): boolean;
}

export type LogSink = (line: string) => void;

/** How a line is written: `json` (one object per line) or `pretty` (for a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/** The format for a `log.format` setting: `auto` is pretty when stderr is a terminal, else JSON. */
export function resolveLogFormat(setting: 'auto' | LogFormat, isTty: boolean = process.stderr.isTTY === true): LogFormat {
  return setting === 'auto' ? (isTty ? 'pretty' : 'json') : setting;
}

/**
 * Lines of one event-loop turn go to stderr in one write: with a line per request, a write each
 * was a system call per request. Whatever is pending is written at exit, crashes included.
 */
function createStderrSink(): LogSink {
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    process.stderr.write(text);
  };
  process.on('exit', flush);
  return (line) => {
    pending += line + '\n';
    if (pending.length >= 65_536) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush).unref();
    }
  };
}

let stderrSink: LogSink | undefined;

function serialise(fields: LogFields | undefined): LogFields {
  if (!fields) return {};
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
  }
  return out;
}

/** A field value in the pretty form: bare when it is a plain word, else JSON. */
function prettyValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** `10:00:00.123 INFO  http request method=GET status=200`, and an error's stack on the lines below. */
function formatPretty(time: Date, lvl: string, subsystem: string, msg: string, fields: LogFields): string {
  let line = `${time.toISOString().slice(11, 23)} ${lvl.toUpperCase().padEnd(5)} ${subsystem} ${msg}`;
  let stacks = '';
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) {
      line += ` ${k}=${prettyValue(`${v.name}: ${v.message}`)}`;
      if (v.stack) stacks += '\n    ' + v.stack.split('\n').slice(1).map((s) => s.trim()).join('\n    ');
    } else {
      line += ` ${k}=${prettyValue(v)}`;
    }
  }
  return line + stacks;
}

export function createLogger(
  level: LogLevel, subsystem = 'edgeld', sink: LogSink = (stderrSink ??= createStderrSink()), format: LogFormat = 'json',
): Logger {
  const min = RANK[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void => {
    if (RANK[lvl] < min) return;
    try {
      const time = new Date();
      sink(format === 'pretty'
        ? formatPretty(time, lvl, subsystem, msg, fields ?? {})
        : JSON.stringify({ time: time.toISOString(), level: lvl, subsystem, msg, ...serialise(fields) }));
    } catch {
      // A log line that cannot be written must never take a request down.
    }
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (name) => createLogger(level, name, sink, format),
    isEnabled: (lvl) => RANK[lvl] >= min,
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('silent');
