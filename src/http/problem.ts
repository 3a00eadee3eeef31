// The single place where an error becomes an HTTP response: NGSI-LD ProblemDetails (§5.5.3).
// Unknown errors become a generic 500 InternalError; the real error is logged with the request id.

import { InternalError, NgsiError } from '../ngsi/index.js';
import type { Logger } from '../lib/index.js';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/**
 * ProblemDetails body of an NGSI-LD error (also used per entity in batch results). Every body has a
 * `detail`: the error's own, else the title again (clients read `detail` for the message).
 */
export function problemOf(err: NgsiError): ProblemDetails {
  return { type: err.typeUri, title: err.message, status: err.status, detail: err.detail ?? err.message };
}

export function toNgsiError(err: unknown, log: Logger, requestId: string): NgsiError {
  if (err instanceof NgsiError) return err;
  log.error('unexpected error', { requestId, err });
  return new InternalError('Internal error', `An unexpected error occurred (request ${requestId})`);
}

export function problemResponse(err: NgsiError, headers: Record<string, string> = {}): Response {
  const extra: Record<string, string> = { ...headers };
  if (err.status === 401 && !extra['WWW-Authenticate']) extra['WWW-Authenticate'] = 'Bearer';
  return new Response(JSON.stringify(problemOf(err)), {
    status: err.status,
    headers: { 'Content-Type': 'application/json', ...extra },
  });
}
