// With authentication on, what the broker fetched (Cached contexts, NGSI-LD §5.13) is listed and
// served only to callers with a token; the contexts clients gave (Hosted, ImplicitlyCreated) stay
// served without one, so notification receivers can still dereference them.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContextServer, USER_CONTEXT, type ContextServer } from '../../helpers/broker.js';
import { startAuthBroker, type AuthBroker } from '../../helpers/auth.js';

const CONTEXTS = '/ngsi-ld/v1/jsonldContexts';

let ctxServer: ContextServer;
let b: AuthBroker;
let url: string;
let hostedPath: string;
let cachedId: string;

beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/ctx.jsonld', USER_CONTEXT);
  url = ctxServer.url('/ctx.jsonld');
  // NOTE: cast because the patch names one option of the authentication group; startAuthBroker fills the rest.
  b = await startAuthBroker({ config: { application: { authentication: { allowPublicPermission: true } } } } as Parameters<typeof startAuthBroker>[0]);
  // Adding a context that names a remote one caches the remote one (kind Cached).
  const added = await b.as('alice', 'POST', CONTEXTS, { body: { '@context': url } });
  expect(added.status).toBe(201);
  hostedPath = new URL(added.headers.get('location') ?? '', 'http://127.0.0.1').pathname;
  const cached = await b.as('alice', 'GET', `${CONTEXTS}?kind=Cached&details=true`);
  expect(cached.json).toEqual([expect.objectContaining({ URL: url, kind: 'Cached' })]);
  cachedId = cached.json[0].localId;
});
afterAll(async () => {
  await b.close();
  await ctxServer.close();
});

describe('a Cached context with authentication on', () => {
  it('is not served to a caller without a token: 404, as if unknown, with or without details', async () => {
    for (const path of [`${CONTEXTS}/${cachedId}`, `${CONTEXTS}/${cachedId}?details=true`, `${CONTEXTS}/${encodeURIComponent(url)}`]) {
      const res = await b.as(undefined, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('example.org/ns#');
    }
  });

  it('is not listed to a caller without a token (public access on)', async () => {
    const res = await b.as(undefined, 'GET', CONTEXTS);
    expect(res.status).toBe(200);
    expect(res.json).not.toContain(url);
    expect((await b.as(undefined, 'GET', `${CONTEXTS}?kind=Cached`)).json).toEqual([]);
  });

  it('is listed and served to a caller with a token', async () => {
    expect((await b.as('bob', 'GET', CONTEXTS)).json).toContain(url);
    const served = await b.as('bob', 'GET', `${CONTEXTS}/${cachedId}`);
    expect(served.status).toBe(200);
    expect(served.json).toEqual(USER_CONTEXT);
  });
});

describe('contexts clients gave, with authentication on', () => {
  it('are served without a token (a Hosted one)', async () => {
    const res = await b.as(undefined, 'GET', hostedPath);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ '@context': url });
  });
});
