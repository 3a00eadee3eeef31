// OAuth 2.0 client credentials per registration [RFC 6749 §4.4; contextSourceInfo keys of edgeld's
// own]: the real app, a token endpoint and a context source that wants the bearer, both node:http
// servers on loopback. The token is fetched once and cached until it expires, fetched again once
// after a 401; the credentials never reach the source as headers and the secret is never shown; a
// token endpoint that fails costs a bounded wait and a warning, never a 500.

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody } from '../../helpers/receiver.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const V1 = '/ngsi-ld/v1';

interface Seen { method: string; url: string; headers: IncomingHttpHeaders; body: unknown }

async function serve(handle: (req: Seen, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => readBody(req, (body) => {
    const one = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    seen.push(one);
    handle(one, res);
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const port = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is AddressInfo
  return { url: `http://127.0.0.1:${port}`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** A token endpoint that issues tok-1, tok-2, … to client `gw` with secret `s3cret` (form fields as RFC 6749 §4.4.2). */
async function tokenEndpoint(expiresIn = 3_600) {
  let issued = 0;
  const endpoint = await serve((req, res) => {
    const form = new URLSearchParams(String(req.body ?? ''));
    if (form.get('grant_type') !== 'client_credentials' || form.get('client_id') !== 'gw' || form.get('client_secret') !== 's3cret') {
      json(res, 401, { error: 'invalid_client' });
      return;
    }
    json(res, 200, { access_token: `tok-${++issued}`, token_type: 'Bearer', expires_in: expiresIn });
  });
  return { ...endpoint, issued: () => issued };
}

/** A source that answers its sensor to the bearer of `valid()` only, else 401. */
async function protectedSource(valid: () => string) {
  return serve((req, res) => {
    if (req.headers.authorization !== `Bearer ${valid()}`) {
      json(res, 401, { type: 'https://uri.etsi.org/ngsi-ld/errors/Unauthorized', title: 'Unauthorized' });
      return;
    }
    json(res, 200, [{ id: 'urn:ngsi-ld:Sensor:remote', type: 'Sensor', temperature: { type: 'Property', value: 7 } }]);
  });
}

async function broker(): Promise<TestBroker> {
  const b = await startTestBroker();
  closers.push(() => b.close());
  const local = await b.request('POST', `${V1}/entities`, { body: { id: 'urn:ngsi-ld:Sensor:local', type: 'Sensor', temperature: { type: 'Property', value: 1 } } });
  expect(local.status).toBe(201);
  return b;
}

const credentials = (tokenUrl: string, extra: Array<{ key: string; value: string }> = []) => [
  { key: 'oauth2TokenUrl', value: tokenUrl }, { key: 'oauth2ClientId', value: 'gw' }, { key: 'oauth2ClientSecret', value: 's3cret' }, ...extra,
];

async function register(b: TestBroker, endpoint: string, contextSourceInfo: unknown, management?: unknown): Promise<string> {
  const res = await b.request('POST', `${V1}/csourceRegistrations`, { body: {
    type: 'ContextSourceRegistration', information: [{ entities: [{ type: 'Sensor' }] }], endpoint, contextSourceInfo,
    ...(management !== undefined ? { management } : {}),
  } });
  expect(res.status, res.text).toBe(201);
  return res.headers.get('location')!.split('/').pop()!;
}

const ids = (json: unknown): string[] => (json as Array<{ id: string }>).map((e) => e.id).sort();

describe('a registration with OAuth 2.0 client credentials', () => {
  it('fetches one token, sends it as bearer on every request, and never sends the credentials as headers', async () => {
    const tokens = await tokenEndpoint();
    const source = await protectedSource(() => 'tok-1');
    const b = await broker();
    await register(b, source.url, credentials(tokens.url, [{ key: 'oauth2Scope', value: 'ngsi-ld:read' }, { key: 'X-Site', value: 'north' }]));

    for (let i = 0; i < 3; i++) {
      const res = await b.request('GET', `${V1}/entities?type=Sensor`);
      expect(res.status).toBe(200);
      expect(res.headers.get('ngsild-warning')).toBeNull();
      expect(ids(res.json)).toEqual(['urn:ngsi-ld:Sensor:local', 'urn:ngsi-ld:Sensor:remote']);
    }
    expect(tokens.issued()).toBe(1);
    expect(new URLSearchParams(String(tokens.seen[0]!.body)).get('scope')).toBe('ngsi-ld:read');
    expect(source.seen).toHaveLength(3);
    const headers = source.seen[0]!.headers;
    expect(headers['x-site']).toBe('north');
    expect(Object.keys(headers).filter((h) => h.startsWith('oauth2'))).toEqual([]);
    expect(JSON.stringify(headers)).not.toContain('s3cret');
  });

  it('fetches a new token once when the source answers 401, and again when the cached one expires', async () => {
    const tokens = await tokenEndpoint(60);
    let valid = 'tok-1';
    const source = await protectedSource(() => valid);
    const b = await broker();
    await register(b, source.url, credentials(tokens.url));
    expect(ids((await b.request('GET', `${V1}/entities?type=Sensor`)).json)).toContain('urn:ngsi-ld:Sensor:remote');

    // The source revokes tok-1: one 401, one new token, the request again.
    valid = 'tok-2';
    const res = await b.request('GET', `${V1}/entities?type=Sensor`);
    expect(res.headers.get('ngsild-warning')).toBeNull();
    expect(ids(res.json)).toContain('urn:ngsi-ld:Sensor:remote');
    expect(tokens.issued()).toBe(2);
    expect(source.seen.map((s) => s.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2']);

    // 60 s tokens are renewed 30 s early.
    valid = 'tok-3';
    b.clock.advance(31_000);
    expect(ids((await b.request('GET', `${V1}/entities?type=Sensor`)).json)).toContain('urn:ngsi-ld:Sensor:remote');
    expect(tokens.issued()).toBe(3);
    expect(source.seen.at(-1)!.headers.authorization).toBe('Bearer tok-3');
    expect(source.seen).toHaveLength(4);
  });

  it('answers a source that refuses the new token too with its 401 as a warning, asking for one token only', async () => {
    const tokens = await tokenEndpoint();
    const source = await protectedSource(() => 'never');
    const b = await broker();
    await register(b, source.url, credentials(tokens.url));
    const res = await b.request('GET', `${V1}/entities?type=Sensor`);
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual(['urn:ngsi-ld:Sensor:local']);
    expect(res.headers.get('ngsild-warning')).toMatch(/^299 127\.0\.0\.1:\d+ "error response 401/);
    expect(tokens.issued()).toBe(2);
    expect(source.seen).toHaveLength(2);
  });

  it('answers with the local data and a warning when the token endpoint refuses, fails or never answers', async () => {
    const refusing = await serve((_req, res) => json(res, 401, { error: 'invalid_client' }));
    const failing = await serve((_req, res) => res.writeHead(500).end('oops'));
    const garbage = await serve((_req, res) => json(res, 200, { token: 'no' }));
    const silent = await serve(() => undefined);
    const source = await protectedSource(() => 'tok-1');
    for (const [tokenUrl, warning] of [
      [refusing.url, /^299 127\.0\.0\.1:\d+ "no token for the registration endpoint: token endpoint: 401/],
      [failing.url, /^299 127\.0\.0\.1:\d+ "no token for the registration endpoint: token endpoint: 500 oops"/],
      [garbage.url, /"no token for the registration endpoint: token endpoint: not a token response"/],
      [silent.url, /^199 127\.0\.0\.1:\d+ "no answer within 300 ms"/],
      ['http://127.0.0.1:1/token', /"no token for the registration endpoint: token endpoint unreachable: /],
    ] as const) {
      const b = await broker();
      await register(b, source.url, credentials(tokenUrl), { timeout: 300 });
      const started = Date.now();
      const res = await b.request('GET', `${V1}/entities?type=Sensor`);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(res.status).toBe(200);
      expect(ids(res.json)).toEqual(['urn:ngsi-ld:Sensor:local']);
      expect(res.headers.get('ngsild-warning'), tokenUrl).toMatch(warning);
    }
    expect(source.seen).toHaveLength(0);
  });

  it('never shows the client secret: GET and the registration listing leave it out', async () => {
    const b = await broker();
    const id = await register(b, 'http://127.0.0.1:9/src', credentials('http://127.0.0.1:9/token'));
    const one = await b.request('GET', `${V1}/csourceRegistrations/${id}`);
    expect(one.json.contextSourceInfo).toEqual([{ key: 'oauth2TokenUrl', value: 'http://127.0.0.1:9/token' }, { key: 'oauth2ClientId', value: 'gw' }]);
    const all = await b.request('GET', `${V1}/csourceRegistrations?type=Sensor`);
    expect(all.text).not.toContain('s3cret');
  });

  it('refuses incomplete credentials and a token endpoint that is not http(s) with 400', async () => {
    const b = await broker();
    for (const contextSourceInfo of [
      [{ key: 'oauth2TokenUrl', value: 'http://127.0.0.1:9/token' }, { key: 'oauth2ClientId', value: 'gw' }],
      credentials('ftp://127.0.0.1/token'),
      credentials('not a url'),
    ]) {
      const res = await b.request('POST', `${V1}/csourceRegistrations`, { body: {
        type: 'ContextSourceRegistration', information: [{ entities: [{ type: 'Sensor' }] }], endpoint: 'http://127.0.0.1:9/src', contextSourceInfo,
      } });
      expect(res.status, JSON.stringify(contextSourceInfo)).toBe(400);
      expect(res.json.detail).toMatch(/oauth2/);
    }
  });
});
