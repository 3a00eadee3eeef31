// Add @context (NGSI-LD §5.13.2): a client's context stored with kind Hosted, served with and
// without details, usable by URL in later requests, its remote parts cached, and deleted again.

import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { startContextServer, startTestBroker, USER_CONTEXT, type ContextServer, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/jsonldContexts';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const REL = 'http://www.w3.org/ns/json-ld#context';
const INLINE = { A1: 'urn:ngsi-ld:attributes:A1' };

let ctxServer: ContextServer;
let b: TestBroker;
beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/remote.jsonld', USER_CONTEXT);
});
afterAll(() => ctxServer.close());
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

async function add(context: unknown): Promise<string> {
  const res = await b.request('POST', P, { body: { '@context': context } });
  expect(res.status).toBe(201);
  expect(res.text).toBe('');
  const location = res.headers.get('location') ?? '';
  expect(location).toMatch(/^\/ngsi-ld\/v1\/jsonldContexts\/[0-9a-f-]{36}$/);
  return location;
}

describe('POST /jsonldContexts', () => {
  it('stores the context as Hosted: served as given, and in detail', async () => {
    const location = await add(INLINE);
    const served = await b.request('GET', location);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toContain('application/json');
    expect(served.json).toEqual({ '@context': INLINE });
    const details = await b.request('GET', `${location}?details=true`);
    expect(details.json).toMatchObject({ URL: location, localId: location.split('/').pop(), kind: 'Hosted', numberOfHits: 0 });
    expect(Date.parse(details.json.createdAt)).not.toBeNaN();
    const listed = await b.request('GET', `${P}?kind=Hosted`);
    expect(listed.json).toContain(location);
  });

  it('is usable by its URL in a Link header, and counts its uses', async () => {
    const location = await add(INLINE);
    const link = `<http://127.0.0.1${location}>; rel="${REL}"`;
    const created = await b.request('POST', '/ngsi-ld/v1/entities', {
      body: { id: 'urn:x:1', type: 'T', A1: { type: 'Property', value: 1 } }, headers: { Link: link },
    });
    expect(created.status).toBe(201);
    const expanded = await b.request('GET', '/ngsi-ld/v1/entities/urn:x:1');
    expect(expanded.json['urn:ngsi-ld:attributes:A1']).toEqual({ type: 'Property', value: 1 });
    expect((await b.request('GET', `${location}?details=true`)).json.numberOfHits).toBe(1);
  });

  it('caches the remote contexts it names', async () => {
    const remote = ctxServer.url('/remote.jsonld');
    await add([remote, INLINE]);
    const cached = await b.request('GET', `${P}?kind=Cached`);
    expect(cached.json).toContain(remote);
  });

  it('400 InvalidRequest for a body that is no @context document, BadRequestData for a bad context', async () => {
    const noContext = await b.request('POST', P, { body: INLINE });
    expect(noContext.status).toBe(400);
    expect(noContext.json.type).toBe(ERR + 'InvalidRequest');
    for (const bad of [42, ['https://example.org/ctx.jsonld', 7], true]) {
      const res = await b.request('POST', P, { body: { '@context': bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.json.type).toBe(ERR + 'BadRequestData');
    }
    const broken = await b.request('POST', P, { raw: '{"A1": "x" "A2": "y"}', headers: { 'Content-Type': 'application/json' } });
    expect(broken.json.type).toBe(ERR + 'InvalidRequest');
  });
});

describe('DELETE /jsonldContexts/{id}', () => {
  it('deletes a Hosted context; reload is 400 for it and for an unknown id; errors carry a detail', async () => {
    const location = await add(INLINE);
    const reload = await b.request('DELETE', `${location}?reload=true`);
    expect(reload.status).toBe(400);
    expect(reload.json.type).toBe(ERR + 'BadRequestData');
    expect((await b.request('DELETE', location)).status).toBe(204);
    expect((await b.request('GET', location)).status).toBe(404);
    const unknown = await b.request('DELETE', `${P}/nope?reload=true`);
    expect(unknown.status).toBe(400);
    const bad = await b.request('DELETE', `${P}/nope?reload=xxx`);
    expect(bad.status).toBe(400);
    expect(bad.json.type).toBe(ERR + 'BadRequestData');
    expect(typeof bad.json.detail).toBe('string');
    expect((await b.request('DELETE', `${P}/nope`)).status).toBe(404);
  });

  it('lists with a bad kind or details value: 400 with a detail', async () => {
    for (const q of ['kind=Other', 'details=Other']) {
      const res = await b.request('GET', `${P}?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.detail, q).toContain(q.split('=')[1]);
      expect(res.json.type, q).toBe(ERR + 'BadRequestData');
    }
  });
});
