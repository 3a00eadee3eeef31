// The built-in identity provider's endpoints, outside /ngsi-ld/: the OAuth 2.0 token endpoint
// (RFC 6749 §3.2), its JWK Set and OpenID Connect discovery metadata. Errors take the RFC 6749 §5.2
// shape, not ProblemDetails: OAuth clients read `error`. Repeated failed logins from one address or
// for one name make further attempts wait: 429 with Retry-After, before any credential is checked,
// answered late; a login beyond the bound on password checks in progress: 429 at once.

import { z } from 'zod';
import { SecretCheckBusyError, TokenRequestError, type ClientCredentials, type IdentityProvider, type TokenErrorCode, type TokenGrant } from '../../auth/index.js';
import type { LoginAttempt, LoginLimiter } from '../../lib/index.js';
import { PayloadTooLargeError } from '../../ngsi/index.js';
import { resource, type App, type AppContext } from '../app-env.js';
import { readBytes } from '../body.js';
import { APP_JSON } from '../media.js';
import { peerAddressOf } from '../peer-address.js';

const FORM = 'application/x-www-form-urlencoded';
/** A token request is a few short fields. */
const MAX_FORM_BYTES = 8_192;
const GRANT_TYPES = ['client_credentials', 'password'] as const;
// RFC 6749 §5.1: token responses, and so their errors, must not be cached.
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const field = z.string().min(1).max(1_024);
// NOTE: `scope` is accepted, as many clients always send it, and not used: a token carries the
// subject's roles and groups, whatever the scope asked for.
const common = { client_id: field.optional(), client_secret: field.optional(), scope: z.string().max(1_024).optional() };
const tokenForm = z.discriminatedUnion('grant_type', [
  z.strictObject({ grant_type: z.literal('client_credentials'), ...common }),
  z.strictObject({ grant_type: z.literal('password'), username: field, password: field, ...common }),
]);

/** JSON of our own making (tokens, keys, metadata), not NGSI-LD payloads. */
function sendJson(payload: object, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(payload), { status, headers: { 'Content-Type': APP_JSON, ...headers } });
}

function oauthError(code: TokenErrorCode, description: string): Response {
  // RFC 6749 §5.2: invalid_client is 401, and names the scheme the client may authenticate with.
  const status = code === 'invalid_client' ? 401 : 400;
  const headers: Record<string, string> = code === 'invalid_client' ? { ...NO_STORE, 'WWW-Authenticate': 'Basic realm="edgeld"' } : NO_STORE;
  return sendJson({ error: code, error_description: description }, status, headers);
}

/** RFC 6749 §2.3.1: HTTP Basic credentials, each half form-urlencoded; undefined without the header. */
function basicCredentials(header: string | undefined): ClientCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) throw new TokenRequestError('invalid_client', 'Only HTTP Basic client authentication is supported');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new TokenRequestError('invalid_client', 'Malformed Basic credentials');
  try {
    const unescape = (s: string): string => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: unescape(decoded.slice(0, colon)), clientSecret: unescape(decoded.slice(colon + 1)) };
  } catch {
    throw new TokenRequestError('invalid_client', 'Malformed Basic credentials');
  }
}

/** The form's fields; RFC 6749 §3.2: a parameter may not be sent twice. */
function readForm(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(out, name)) throw new TokenRequestError('invalid_request', `Parameter ${name} is repeated`);
    out[name] = value;
  }
  return out;
}

/** The grant a token request asks for, its client from the form or from Basic authentication. */
function parseGrant(form: Record<string, string>, basic: ClientCredentials | undefined): TokenGrant {
  const grantType = form['grant_type'];
  if (grantType === undefined) throw new TokenRequestError('invalid_request', 'grant_type is missing');
  if (!GRANT_TYPES.some((g) => g === grantType)) throw new TokenRequestError('unsupported_grant_type', `Supported: ${GRANT_TYPES.join(', ')}`);
  const parsed = tokenForm.safeParse(form);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const detail = issue?.code === 'unrecognized_keys' ? `Unknown parameter ${issue.keys.join(', ')}` : `Invalid ${issue?.path.join('.') ?? 'request'}`;
    throw new TokenRequestError('invalid_request', detail);
  }
  const { client_id: clientId, client_secret: clientSecret } = parsed.data;
  // RFC 6749 §2.3: a client uses one authentication method per request.
  if (basic && (clientId !== undefined || clientSecret !== undefined)) {
    throw new TokenRequestError('invalid_request', 'Client credentials both in the Authorization header and in the body');
  }
  if (clientId === undefined && clientSecret !== undefined) throw new TokenRequestError('invalid_request', 'client_secret without client_id');
  if (clientId !== undefined && clientSecret === undefined) throw new TokenRequestError('invalid_client', 'Client authentication failed');
  const client = basic ?? (clientId !== undefined && clientSecret !== undefined ? { clientId, clientSecret } : undefined);
  if (parsed.data.grant_type === 'password') {
    const { username, password } = parsed.data;
    return client ? { grantType: 'password', username, password, client } : { grantType: 'password', username, password };
  }
  if (!client) throw new TokenRequestError('invalid_client', 'Client authentication failed');
  return { grantType: 'client_credentials', client };
}

async function readTokenRequest(req: Request): Promise<TokenGrant> {
  const mediaType = (req.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== FORM) throw new TokenRequestError('invalid_request', `The body must be ${FORM}`);
  let text: string;
  try {
    text = await readBytes(req, MAX_FORM_BYTES);
  } catch (err) {
    if (err instanceof PayloadTooLargeError) throw new TokenRequestError('invalid_request', `The body is over ${MAX_FORM_BYTES} bytes`);
    throw err;
  }
  return parseGrant(readForm(text), basicCredentials(req.headers.get('authorization') ?? undefined));
}

/** The login a grant attempts: its address, and the user name (password grant) or the client id. */
function loginOf(c: AppContext, grant: TokenGrant): LoginAttempt {
  const name = grant.grantType === 'password' ? grant.username : grant.client.clientId;
  return { channel: 'http', address: peerAddressOf(c), name };
}

/** RFC 6585 §4 Too Many Requests, in the RFC 6749 §5.2 shape; Retry-After in whole seconds (RFC 9110 §10.2.3). */
function tooManyAttempts(waitMs: number, why = 'Too many failed logins'): Response {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return sendJson(
    { error: 'temporarily_unavailable', error_description: `${why}; retry after ${seconds} s` },
    429, { ...NO_STORE, 'Retry-After': String(seconds) },
  );
}

/**
 * The answer, after `ms` or as soon as the client goes: an attacker guessing passwords gets one answer
 * per wait, its connection idle meanwhile, instead of asking again at once (as the MQTT refusals).
 */
function heldBack(signal: AbortSignal, ms: number, answer: Response): Response | Promise<Response> {
  if (ms <= 0 || signal.aborted) return answer;
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(answer);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** When a login refused for want of a free password check may come back. */
const BUSY_RETRY_MS = 1_000;

/** A refusal that checked credentials, and so counts as a failed login. */
const isCredentialFailure = (err: TokenRequestError): boolean => err.code === 'invalid_grant' || err.code === 'invalid_client';

export function registerIdentityRoutes(app: App, identity: IdentityProvider, limiter?: LoginLimiter): void {
  resource(app, '/auth/token', {
    // RFC 6749 §4.3.2 password grant, §4.4.2 client credentials grant; §5.1 and §5.2 answers
    POST: async (c) => {
      /** The admitted login being checked, which must be ended once (undefined without a limiter). */
      let login: LoginAttempt | undefined;
      try {
        const grant = await readTokenRequest(c.req.raw);
        if (limiter !== undefined) {
          const attempt = loginOf(c, grant);
          const wait = limiter.begin(attempt);
          if (wait > 0) return heldBack(c.req.raw.signal, limiter.answerDelay(wait), tooManyAttempts(wait));
          login = attempt;
        }
        const token = await identity.issueToken(grant);
        if (login !== undefined) limiter?.succeeded(login);
        login = undefined;
        return sendJson(token, 200, NO_STORE);
      } catch (err) {
        if (err instanceof TokenRequestError && login !== undefined && isCredentialFailure(err)) {
          limiter?.failed(login);
          login = undefined;
        }
        if (err instanceof TokenRequestError) return oauthError(err.code, err.message);
        // The gateway's password checks are all taken: the attempt was not heard (the limiter releases
        // it). Held back as a lockout refusal is: answered at once, a flood from many addresses would
        // come straight back and keep the event loop busy answering it.
        if (err instanceof SecretCheckBusyError) {
          return heldBack(c.req.raw.signal, limiter?.answerDelay(BUSY_RETRY_MS) ?? 0, tooManyAttempts(BUSY_RETRY_MS, 'Too many logins in progress'));
        }
        throw err;
      } finally {
        if (login !== undefined) limiter?.released(login);
      }
    },
  });
  // RFC 7517 §5 JWK Set: public keys only.
  resource(app, '/auth/jwks', { GET: () => sendJson(identity.publicJwks()) });
  // OpenID Connect Discovery 1.0 §4: endpoints named at the origin the client used.
  resource(app, '/.well-known/openid-configuration', {
    GET: (c) => sendJson(identity.openidConfiguration(new URL(c.req.url).origin)),
  });
}
