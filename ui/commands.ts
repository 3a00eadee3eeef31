// The pure parts of the commands card: reading the broker's answer of GET /edgeld/v1/commands, the
// value typed to send (JSON, or a bare word taken as a string), and a refresh that runs at most once
// per interval however many notifications ask for it.

/** One command the device declares. */
export interface DeclaredCommand { name: string; expires: string }

/** One command issued through the entity. */
export interface RecentCommand { id: string; name: string; value: unknown; state: string; issuedAt: string; expiresAt: string }

/** The commands of a device's entity, as the card shows them. */
export interface EntityCommands {
  entityId: string;
  deviceId: string;
  commands: DeclaredCommand[];
  writable: boolean;
  /** Newest first. */
  recent: RecentCommand[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';

/** The answer of GET /edgeld/v1/commands, or undefined when it is not of that shape. */
export function readEntityCommands(body: unknown): EntityCommands | undefined {
  if (!isObject(body) || !isString(body['entityId']) || !isString(body['deviceId']) || typeof body['writable'] !== 'boolean') return undefined;
  const { commands, recent } = body;
  if (!Array.isArray(commands) || !Array.isArray(recent)) return undefined;
  const declared = commands.filter((c): c is DeclaredCommand => isObject(c) && isString(c['name']) && isString(c['expires']));
  const issued = recent.filter((r): r is RecentCommand => isObject(r) && isString(r['id']) && isString(r['name']) && isString(r['state'])
    && isString(r['issuedAt']) && isString(r['expiresAt']));
  return { entityId: body['entityId'], deviceId: body['deviceId'], commands: declared, writable: body['writable'], recent: issued };
}

/** The value typed for a command: JSON, else the text itself as a string (a bare word: `open`). */
export function parseCommandValue(text: string): { value: unknown } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { error: 'Enter a value (JSON, or a word taken as a string)' };
  try {
    return { value: JSON.parse(trimmed) as unknown };
  } catch {
    if (/^[^\s"'{}[\],:]+$/.test(trimmed)) return { value: trimmed };
    return { error: `Not JSON, nor a single word: ${trimmed.length > 40 ? `${trimmed.slice(0, 39)}…` : trimmed}` };
  }
}

/** Runs `run` on request, at most once every `gapMs`: a request inside the gap runs once at its end. */
export function boundedRefresh(run: () => void, gapMs: number, now: () => number = Date.now): { request(): void; cancel(): void } {
  let last = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = (): void => {
    timer = undefined;
    last = now();
    run();
  };
  return {
    request() {
      if (timer !== undefined) return;
      const wait = last + gapMs - now();
      if (wait <= 0) fire();
      else timer = setTimeout(fire, wait);
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
