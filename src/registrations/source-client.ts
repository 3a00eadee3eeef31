// The client of context sources (NGSI-LD §4.3.6, §6.3.18): one request to a registration's endpoint
// with its tenant, its contextSourceInfo headers and the `Via` chain, under the registration's
// timeout capped by a global bound, its reply read bounded. A source that fails is skipped for its
// management.cooldown. Replies are untrusted: every failure becomes a warning (§6.3.17), never a throw.

import { deadline, TokenEndpointError, type Clock, type Deadline, type Transport, type TransportReply } from '../lib/index.js';
import { NGSI_LD } from '../ngsi/index.js';
import type { Registration } from './model.js';
import { OAUTH2_KEYS, type SourceAuth } from './source-auth.js';

/** `localOnly` written as a member of the registration itself rather than of its management. */
const LOCAL_ONLY = `${NGSI_LD}localOnly`;

/** NGSI-LD §6.3.17 Table 6.3.17-1: why a source's data is not in the answer (RFC 7234 warn-codes). */
export interface SourceWarning {
  /** 111 invalid payload, 199 no answer in time or unreachable, 299 an error response. */
  code: 111 | 199 | 299;
  /** host[:port] of the endpoint. */
  agent: string;
  text: string;
}

export interface SourceRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path below the endpoint, starting with /ngsi-ld/v1/. */
  path: string;
  /** Query parameters, in the caller's terms. */
  query?: URLSearchParams;
  /** A JSON body (compacted; its @context removed or kept as the request asks). */
  body?: unknown;
  /** The context URL the path, query and body are compacted with (sent as Link). */
  context: string | undefined;
  /** The `Via` header of the incoming request. */
  via: string | undefined;
  /** The incoming request's headers. */
  incoming: Incoming;
  signal?: AbortSignal;
  /** The entity tag of the reply held from the last time (asked as If-None-Match). */
  ifNoneMatch?: string;
}

/** Reads a header of the incoming request; undefined for work of the broker's own. */
export type Incoming = ((name: string) => string | undefined) | undefined;

/** NGSI-LD §4.3.6.6: a contextSourceInfo value that copies the triggering request's header of the same name. */
const FROM_REQUEST = 'urn:ngsi-ld:request';

export type SourceOutcome =
  /** status 304: the reply held from the last time (its tag was `ifNoneMatch`) still holds; no body. */
  | { ok: true; status: number; body: unknown; link: string | undefined; bytes?: Buffer; etag?: string; relayed?: string[] }
  | { ok: false; warning: SourceWarning; status?: number };

export interface SourceClientOptions {
  transport: Transport;
  clock: Clock;
  /** This broker's identifier in `Via` (§6.3.18); read per request (the HTTP port is known once listening). */
  viaId: () => string;
  /** Global bound of one request (ms). */
  timeoutMs: number;
  maxReplyBytes: number;
  /** A registration without `tenant` forwards the tenant it was made in (else none: NGSI-LD §4.14). */
  forwardTenant: boolean;
  /** Tokens of the registrations that ask for OAuth 2.0 client credentials. */
  auth?: SourceAuth;
}

export interface SourceClient {
  send(tenant: string, reg: Registration, req: SourceRequest): Promise<SourceOutcome>;
  /** Whether an incoming `Via` already names this broker (a forwarded request came back). */
  isLoop(via: string | undefined): boolean;
}

/** contextSourceInfo keys that steer the request rather than become headers (NGSI-LD §4.3.6.6). */
const RESERVED_KEYS = new Set(['jsonldcontext', 'contenttype', 'accept', ...OAUTH2_KEYS]);
/** Headers a contextSourceInfo pair may not set: they are the request's own. */
const OWN_HEADERS = new Set(['content-length', 'host', 'via', 'ngsild-tenant', 'link', 'connection', 'transfer-encoding']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const agentOf = (endpoint: string): string => {
  try {
    return new URL(endpoint).host;
  } catch {
    return 'unknown';
  }
};

/** A warn-text: a quoted string without quotes, backslashes or control characters. */
const quoted = (text: string): string => `"${text.replace(/[\\"\u0000-\u001f\u007f-\uffff]/g, ' ').slice(0, 200)}"`;

/** NGSI-LD §6.3.17: one `NGSILD-Warning` header value per warning. */
export function formatWarning(w: SourceWarning): string {
  return `${w.code} ${w.agent} ${quoted(w.text)}`;
}

/** The contextSourceInfo value of a key, case-insensitively. */
function sourceInfo(reg: Registration, key: string): string | undefined {
  const lower = key.toLowerCase();
  return reg.contextSourceInfo?.find((p) => p.key.toLowerCase() === lower)?.value;
}

/**
 * NGSI-LD §4.14: the registration's tenant; "if no Tenant information is present in the Context
 * Source Registration, no Tenant information is to be used" (the source's default tenant), unless
 * distributed.forward-tenant passes on the tenant the registration was made in, as Orion-LD does.
 */
function tenantFor(reg: Registration, tenant: string, forward: boolean): string | undefined {
  if (reg.tenant !== undefined) return reg.tenant;
  return forward && tenant !== '' ? tenant : undefined;
}

function headersOf(reg: Registration, req: SourceRequest, via: string, tenant: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, value } of reg.contextSourceInfo ?? []) {
    const lower = key.toLowerCase();
    if (RESERVED_KEYS.has(lower) || OWN_HEADERS.has(lower) || !TOKEN.test(key)) continue;
    const sent = value === FROM_REQUEST ? req.incoming?.(key) : value;
    if (sent === undefined || /[\r\n\0]/.test(sent)) continue;
    headers[key] = sent;
  }
  headers['Accept'] = sourceInfo(reg, 'accept') ?? 'application/json';
  headers['Via'] = via;
  const context = sourceInfo(reg, 'jsonldContext') ?? req.context;
  const inline = sourceInfo(reg, 'contentType') === 'application/ld+json';
  if (req.body !== undefined) headers['Content-Type'] = inline ? 'application/ld+json' : 'application/json';
  if (context !== undefined && !(inline && req.body !== undefined)) {
    headers['Link'] = `<${context}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;
  }
  if (req.ifNoneMatch !== undefined) headers['If-None-Match'] = req.ifNoneMatch;
  if (tenant !== undefined) headers['NGSILD-Tenant'] = tenant;
  return headers;
}

function bodyText(reg: Registration, req: SourceRequest): string | undefined {
  if (req.body === undefined) return undefined;
  const context = sourceInfo(reg, 'jsonldContext') ?? req.context;
  const inline = sourceInfo(reg, 'contentType') === 'application/ld+json';
  const attach = (doc: unknown): unknown =>
    inline && doc !== null && typeof doc === 'object' && !Array.isArray(doc) && context !== undefined ? { ...doc, '@context': context } : doc;
  return JSON.stringify(Array.isArray(req.body) ? req.body.map(attach) : attach(req.body));
}

function urlOf(reg: Registration, req: SourceRequest): string {
  const query = new URLSearchParams(req.query);
  // NGSI-LD §4.3.6.4, §5.2.34: a localOnly registration is asked for its own data only.
  if (reg.management?.localOnly === true || reg.properties[LOCAL_ONLY] === true) query.set('local', 'true');
  const search = query.toString();
  return `${reg.endpoint.replace(/\/+$/, '')}${req.path}${search === '' ? '' : `?${search}`}`;
}

function parseReply(agent: string, status: number, bytes: Buffer, link: string | undefined, etag: string | undefined): SourceOutcome {
  if (status === 404 || status === 304) return { ok: true, status, body: undefined, link };
  if (status >= 300) return { ok: false, status, warning: { code: 299, agent, text: `error response ${status} from the registration endpoint` } };
  if (bytes.length === 0) return { ok: true, status, body: undefined, link };
  // NOTE: parsed when first read: a reply the same as the last one of its source is never parsed
  // (see remembered() in distributed.ts); one that is not JSON throws there, and becomes a 111 warning.
  let parsed: { value: unknown } | undefined;
  return {
    ok: true, status, link, bytes, ...(etag !== undefined ? { etag } : {}),
    get body(): unknown {
      parsed ??= { value: parseJson(bytes) };
      return parsed.value;
    },
  };
}

/** Most warnings of a source's reply passed on, and their longest text. */
const MAX_RELAYED = 8;
const MAX_RELAYED_CHARS = 512;

/**
 * NGSI-LD §6.3.17: the warnings a source's answer carries (what its own sources did not answer, a
 * loop it detected) are passed on with ours; bounded, and only those shaped as warn-values.
 */
function relay(outcome: SourceOutcome, header: string | undefined): SourceOutcome {
  if (!outcome.ok || header === undefined) return outcome;
  const relayed = (header.match(/\d{3} [^\s",]+ "[^"]*"/g) ?? []).slice(0, MAX_RELAYED).filter((w) => w.length <= MAX_RELAYED_CHARS);
  if (relayed.length === 0) return outcome;
  // NOTE: the body getter of a parsed reply is kept (a spread would read it).
  return Object.defineProperty(outcome, 'relayed', { value: relayed, enumerable: true });
}

/** A reply's JSON; throws ReplyPayloadError when it is not JSON. */
function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (err) {
    throw new ReplyPayloadError('the payload of the registration endpoint is not JSON', { cause: err });
  }
}

/** A context source's reply that is not what NGSI-LD says it is. */
class ReplyPayloadError extends Error {
  override name = 'ReplyPayloadError';
}

export function createSourceClient(opts: SourceClientOptions): SourceClient {
  /** Registrations skipped until an instant, after a failure (management.cooldown). */
  const cooling = new Map<string, number>();

  const fail = (key: string, reg: Registration, outcome: SourceOutcome): SourceOutcome => {
    const cooldown = reg.management?.cooldown;
    if (cooldown !== undefined && cooldown > 0) cooling.set(key, opts.clock.now() + cooldown);
    return outcome;
  };
  return {
    isLoop: (via) => via !== undefined && via.split(',').some((hop) => hop.trim().split(/\s+/)[1] === opts.viaId()),
    async send(tenant, reg, req) {
      const key = `${tenant}\u0000${reg.id}`;
      const agent = agentOf(reg.endpoint);
      const until = cooling.get(key);
      if (until !== undefined) {
        if (opts.clock.now() < until) return { ok: false, warning: { code: 199, agent, text: 'the registration endpoint is cooling down after a failure' } };
        cooling.delete(key);
      }
      const own = `1.1 ${opts.viaId()}`;
      const via = req.via === undefined || req.via.trim() === '' ? own : `${req.via}, ${own}`;
      const timeout = Math.min(opts.timeoutMs, reg.management?.timeout ?? opts.timeoutMs);
      const limit = deadline(req.signal, timeout);
      try {
        const reply = await exchange(opts, reg, { ...req, via }, limit, tenantFor(reg, tenant, opts.forwardTenant));
        if (reply.bytes === undefined) {
          return fail(key, reg, { ok: false, warning: { code: 111, agent, text: `reply larger than ${opts.maxReplyBytes} bytes` } });
        }
        const outcome = relay(parseReply(agent, reply.status, reply.bytes, reply.link, reply.etag), reply.warning);
        return !outcome.ok && reply.status >= 500 ? fail(key, reg, outcome) : outcome;
      } catch (err) {
        if (err instanceof TokenEndpointError && !limit.timedOut) return fail(key, reg, { ok: false, warning: { code: 299, agent, text: `no token for the registration endpoint: ${err.message}` } });
        const text = limit.timedOut ? `no answer within ${timeout} ms` : `unreachable: ${err instanceof Error ? err.message : String(err)}`;
        return fail(key, reg, { ok: false, warning: { code: 199, agent, text } });
      } finally {
        limit.done();
      }
    },
  };
}

/**
 * One request to the source (its `via` the full chain), with the registration's bearer token when it
 * asks for one; once more with a fresh token after a 401 (the cached one was revoked or expired early).
 */
async function exchange(
  opts: SourceClientOptions, reg: Registration, req: SourceRequest & { via: string }, limit: Deadline, tenant: string | undefined,
): Promise<TransportReply> {
  const body = bodyText(reg, req);
  const headers = headersOf(reg, req, req.via, tenant);
  const auth = opts.auth !== undefined && opts.auth.asks(reg) ? opts.auth : undefined;
  const send = async (): Promise<TransportReply> => {
    const authorization = auth === undefined ? undefined : await auth.authorization(reg, limit.signal);
    return opts.transport(urlOf(reg, req), {
      method: req.method, signal: limit.signal, maxBytes: opts.maxReplyBytes,
      headers: authorization === undefined ? headers : { ...headers, Authorization: authorization }, ...(body !== undefined ? { body } : {}),
    });
  };
  const reply = await send();
  if (reply.status !== 401 || auth === undefined) return reply;
  auth.refused(reg);
  return send();
}
