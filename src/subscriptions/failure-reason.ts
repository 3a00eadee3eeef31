// Why a notification failed, in a few words a subscription's status can show
// (`notification.lastFailureReason`): a refused or reset connection, a timeout, an HTTP status.

/** Short reasons of the network errors a receiver causes, by their Node error code. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EPIPE: 'connection closed',
};

/** Longest reason kept. */
const MAX_REASON = 200;

/** The short reason of a failed send: the first known network code along its causes, else its message. */
export function failureReason(err: unknown): string {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    // Node's system errors carry `code` (not part of the Error type).
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && REASONS[code] !== undefined) return REASONS[code];
  }
  const message = err instanceof Error ? err.message : String(err);
  return message.length > MAX_REASON ? `${message.slice(0, MAX_REASON - 1)}…` : message;
}
