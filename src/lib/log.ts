// Structured JSON-lines logging, one logger per subsystem. Writes to stderr; never throws.

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

export function createLogger(level: LogLevel, subsystem = 'edgeld', sink: LogSink = (stderrSink ??= createStderrSink())): Logger {
  const min = RANK[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void => {
    if (RANK[lvl] < min) return;
    try {
      sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, subsystem, msg, ...serialise(fields) }));
    } catch {
      // A log line that cannot be written must never take a request down.
    }
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (name) => createLogger(level, name, sink),
    isEnabled: (lvl) => RANK[lvl] >= min,
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('silent');
