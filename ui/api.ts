// The page's only way to the broker's data: the public NGSI-LD API under /ngsi-ld/v1, edgeld's own
// reads under /edgeld/v1 (the commands of a device's entity), plus /metrics and /ready. Sends the
// bearer token and tenant, and turns every error answer into an ApiError that says what the broker
// said (ProblemDetails), so a 401 or 403 is shown as such.

import type { Session } from './session.js';

export const BASE = '/ngsi-ld/v1';
const EDGELD = '/edgeld/v1';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(readonly status: number, readonly title: string, readonly detail: string) {
    super(`${status === 0 ? 'No answer' : status} ${title}${detail && detail !== title ? `: ${detail}` : ''}`);
  }
}

export interface Answer<T = unknown> { status: number; headers: Headers; body: T }

export interface Api {
  /** GET of an API path (`/entities`), with query parameters; undefined values are left out. */
  get(path: string, params?: Readonly<Record<string, string | undefined>>): Promise<Answer>;
  send(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, opts?: { keepalive?: boolean }): Promise<Answer>;
  /**
   * GET of one of edgeld's own paths (`/commands`). For an optional part of a page: a 401 there is
   * that part's own error, not a reason to sign in again.
   */
  edgeld(path: string, params?: Readonly<Record<string, string | undefined>>): Promise<Answer>;
  /** GET of a path outside the API (/metrics, /ready) as text, any status. */
  text(path: string): Promise<{ status: number; text: string }>;
  /** Called on every 401: the token is missing, expired or refused. */
  onUnauthorized(cb: (err: ApiError) => void): void;
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const p = JSON.parse(text) as { title?: unknown; detail?: unknown }; // NOTE: ProblemDetails, checked member by member
    const title = typeof p.title === 'string' ? p.title : res.statusText;
    return new ApiError(res.status, title, typeof p.detail === 'string' ? p.detail : '');
  } catch {
    return new ApiError(res.status, res.statusText || 'Error', text.slice(0, 200));
  }
}

export function createApi(session: Session): Api {
  const listeners: Array<(err: ApiError) => void> = [];
  const headers = (json: boolean): Record<string, string> => {
    const out: Record<string, string> = { Accept: 'application/json' };
    const token = session.token();
    if (token !== undefined) out['Authorization'] = `Bearer ${token}`;
    if (session.tenant() !== '') out['NGSILD-Tenant'] = session.tenant();
    if (json) out['Content-Type'] = 'application/json';
    return out;
  };
  const call = async (url: string, init: RequestInit, optional = false): Promise<Answer> => {
    let res: Response;
    try {
      res = await fetch(url, init);
    } catch (err) {
      throw new ApiError(0, 'The broker did not answer', err instanceof Error ? err.message : String(err));
    }
    if (!res.ok) {
      const err = await errorOf(res);
      if (res.status === 401 && !optional) for (const l of listeners) l(err);
      throw err;
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new ApiError(res.status, 'Not JSON', text.slice(0, 200));
    }
    return { status: res.status, headers: res.headers, body };
  };
  const url = (base: string, path: string, params: Readonly<Record<string, string | undefined>>): string => {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
    const qs = query.toString();
    return `${base}${path}${qs ? `?${qs}` : ''}`;
  };
  return {
    get: (path, params = {}) => call(url(BASE, path, params), { headers: headers(false) }),
    edgeld: (path, params = {}) => call(url(EDGELD, path, params), { headers: headers(false) }, true),
    send: (method, path, body, opts = {}) => call(`${BASE}${path}`, {
      method, headers: headers(body !== undefined), ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(opts.keepalive ? { keepalive: true } : {}),
    }),
    text: async (path) => {
      try {
        const res = await fetch(path, { headers: { Accept: 'text/plain, application/json' } });
        return { status: res.status, text: await res.text() };
      } catch (err) {
        throw new ApiError(0, 'The broker did not answer', err instanceof Error ? err.message : String(err));
      }
    },
    onUnauthorized: (cb) => {
      listeners.push(cb);
    },
  };
}

/** An entity id (or any URI) as one path segment. */
export const segment = (id: string): string => encodeURIComponent(id);
