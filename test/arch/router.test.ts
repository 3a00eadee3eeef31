// Every route of the app fits Hono's RegExpRouter: one ambiguous pair (a static segment beside a
// parameter in the same place) makes the SmartRouter fall back to the trie router for every request.

import { afterEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { startAuthBroker } from '../helpers/auth.js';
import { idpConfig } from '../helpers/identity.js';

const brokers: TestBroker[] = [];
afterEach(async () => {
  for (const b of brokers.splice(0)) await b.close();
});

describe('routing', () => {
  it('runs on the RegExpRouter with the default options', async () => {
    const b = await startTestBroker();
    brokers.push(b);
    expect((await b.request('GET', '/ngsi-ld/v1/types')).status).toBe(200);
    expect(b.broker.app.router.name).toBe('SmartRouter + RegExpRouter');
  });

  it('runs on the RegExpRouter with authentication and the built-in identity provider on', async () => {
    // The identity provider's options, with the authentication options startAuthBroker sets.
    const { authentication: _authentication, ...application } = idpConfig().application ?? {};
    const b = await startAuthBroker({ config: { application } });
    brokers.push(b);
    expect((await b.request('GET', '/ngsi-ld/v1/types')).status).toBe(401);
    // The identity provider's routes are there too.
    expect((await b.request('GET', '/auth/jwks')).status).toBe(200);
    expect(b.broker.app.router.name).toBe('SmartRouter + RegExpRouter');
  });

  it('registers each method of each path once (a second registration would be dead code)', async () => {
    const { authentication: _authentication, ...application } = idpConfig().application ?? {};
    const b = await startAuthBroker({ config: { application } });
    brokers.push(b);
    const seen = new Map<string, number>();
    for (const r of b.broker.app.routes) {
      // Middleware (ALL on a wildcard) and the 405 fallbacks are registered per path by design.
      if (r.method === 'ALL') continue;
      const key = `${r.method} ${r.path}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect(seen.size).toBeGreaterThan(50);
    expect([...seen].filter(([, n]) => n > 1).map(([key]) => key)).toEqual([]);
  });

  it('/auth/permissions/assigned stays a resource of its own beside /auth/permissions/:id', async () => {
    const b = await startTestBroker();
    brokers.push(b);
    for (const base of ['/ngsi-ld/v1/auth/permissions', '/auth/permissions']) {
      expect((await b.request('GET', `${base}/assigned`)).status).toBe(200);
      const post = await b.request('POST', `${base}/assigned`);
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET');
      const put = await b.request('PUT', `${base}/urn:ngsi-ld:Permission:x`);
      expect(put.status).toBe(405);
      expect(put.headers.get('allow')).toBe('DELETE, GET, PATCH');
      expect((await b.request('GET', `${base}/urn:ngsi-ld:Permission:x`)).status).toBe(404);
      // An id that names a member of every object is an id like any other.
      for (const id of ['constructor', '__proto__', 'toString']) {
        const got = await b.request('GET', `${base}/${id}`);
        expect(got.status, id).not.toBe(405);
        expect(got.status, id).toBe((await b.request('GET', `${base}/not-an-id`)).status);
      }
    }
  });
});
