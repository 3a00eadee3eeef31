// Subscription management through the HTTP API (NGSI-LD §5.8, §6.10, §6.11): every member round
// trips, 409 on an existing id, paging, 404, update keeps the counters, tenants, persistence.

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import {
  startContextServer, startTestBroker, tempDir, T0, USER_CONTEXT, type ContextServer, type TestBroker,
} from '../../helpers/broker.js';
import { fullSubscription, LD, minimalSubscription } from './fixture.js';

const REL = 'http://www.w3.org/ns/json-ld#context';
const link = (url: string): string => `<${url}>; rel="${REL}"; type="application/ld+json"`;
const SUBS = '/ngsi-ld/v1/subscriptions';

let ctxServer: ContextServer;
let ctxUrl: string;
let b: TestBroker;

beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/ctx.jsonld', USER_CONTEXT);
  ctxUrl = ctxServer.url('/ctx.jsonld');
});
afterAll(() => ctxServer.close());
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

const create = (body: Record<string, unknown>, headers: Record<string, string> = LD) => b.request('POST', SUBS, { body, headers });
const retrieve = async (id: string, headers: Record<string, string> = {}) =>
  b.request('GET', `${SUBS}/${id}`, { headers: { Link: link(ctxUrl), ...headers } });

describe('create and retrieve a subscription [§5.8.1, §5.8.3]', () => {
  it('answers 201 with Location, and every member comes back compacted with the request context', async () => {
    const res = await create(fullSubscription(ctxUrl));
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${SUBS}/urn:ngsi-ld:Subscription:full`);
    const got = await retrieve('urn:ngsi-ld:Subscription:full');
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/json');
    expect(got.headers.get('link')).toContain(ctxUrl);
    const { '@context': _ctx, ...sent } = fullSubscription(ctxUrl);
    const sentNotification = sent.notification as Record<string, unknown>;
    // Never sent: timesSent is left out, as members at their default are.
    expect(got.json).toEqual({ ...sent, notification: sentNotification, status: 'paused' });
  });

  it('generates a urn:ngsi-ld:Subscription id when none is given, with the defaults filled in', async () => {
    const { id: _id, ...body } = minimalSubscription();
    const res = await create(body);
    expect(res.status).toBe(201);
    const location = res.headers.get('location') ?? '';
    expect(location).toMatch(/^\/ngsi-ld\/v1\/subscriptions\/urn:ngsi-ld:Subscription:[0-9a-f-]{36}$/);
    const got = await b.request('GET', location, { headers: { Link: link(ctxUrl) } });
    expect(got.json).toMatchObject({
      type: 'Subscription', entities: [{ type: 'Building' }], status: 'active', notificationTrigger: ['attributeCreated', 'attributeUpdated'],
      notification: { format: 'normalized', endpoint: { accept: 'application/json' } },
    });
    // Members at their default are left out, as Stellio shows them.
    expect(got.json.isActive).toBeUndefined();
    expect(got.json.notification).not.toHaveProperty('sysAttrs');
    expect(got.json.notification).not.toHaveProperty('showChanges');
    expect(got.json.notification).not.toHaveProperty('timesSent');
  });

  it('compacts with the core context when the request names none (expanded names)', async () => {
    await create(minimalSubscription());
    const got = await b.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:min`);
    expect(got.json.entities).toEqual([{ type: 'https://example.org/ns#Building' }]);
  });

  it('accepts application/json with the context in a Link header', async () => {
    const { '@context': _c, ...body } = minimalSubscription();
    const res = await create(body, { Link: link(ctxUrl) });
    expect(res.status).toBe(201);
    expect((await retrieve('urn:ngsi-ld:Subscription:min')).json.entities).toEqual([{ type: 'Building' }]);
  });

  it('serves application/ld+json with @context in the body', async () => {
    await create(minimalSubscription());
    const got = await retrieve('urn:ngsi-ld:Subscription:min', { Accept: 'application/ld+json' });
    expect(got.headers.get('content-type')).toBe('application/ld+json');
    expect(got.json['@context']).toBe(ctxUrl);
  });

  it('shows status expired once expiresAt has passed', async () => {
    await create({ ...minimalSubscription(), expiresAt: '2026-05-01T10:00:05Z' });
    b.clock.advance(10_000);
    expect((await retrieve('urn:ngsi-ld:Subscription:min')).json.status).toBe('expired');
  });

  it('returns 409 AlreadyExists when the id exists [§5.8.1]', async () => {
    expect((await create(minimalSubscription())).status).toBe(201);
    const again = await create(minimalSubscription());
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/AlreadyExists');
  });

  it('returns 404 ResourceNotFound for an unknown id, and 400 for an id that is no URI', async () => {
    const missing = await retrieve('urn:ngsi-ld:Subscription:nope');
    expect(missing.status).toBe(404);
    expect(missing.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
    expect((await b.request('GET', `${SUBS}/not-a-uri`)).status).toBe(400);
  });

  it('refuses unknown query parameters with 400 InvalidRequest', async () => {
    await create(minimalSubscription());
    expect((await b.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:min?foo=1`)).status).toBe(400);
    expect((await b.request('GET', `${SUBS}?type=Building`)).status).toBe(400);
    expect((await b.request('POST', `${SUBS}?x=1`, { body: minimalSubscription(), headers: LD })).status).toBe(400);
  });

  it('keeps tenants apart (NGSILD-Tenant)', async () => {
    const t = { ...LD, 'NGSILD-Tenant': 'plant2' };
    expect((await create(minimalSubscription(), t)).status).toBe(201);
    expect((await retrieve('urn:ngsi-ld:Subscription:min')).status).toBe(404);
    expect((await retrieve('urn:ngsi-ld:Subscription:min', { 'NGSILD-Tenant': 'plant2' })).status).toBe(200);
    // The same id in another tenant is no conflict.
    expect((await create(minimalSubscription())).status).toBe(201);
  });
});

describe('query subscriptions [§5.8.4]', () => {
  beforeEach(async () => {
    for (let i = 1; i <= 5; i++) expect((await create(minimalSubscription(`urn:ngsi-ld:Subscription:${i}`))).status).toBe(201);
  });

  it('lists in creation order, one page at a time, with count and next/prev links', async () => {
    const first = await b.request('GET', `${SUBS}?limit=2&count=true`, { headers: { Link: link(ctxUrl) } });
    expect(first.status).toBe(200);
    expect(first.json.map((s: { id: string }) => s.id)).toEqual(['urn:ngsi-ld:Subscription:1', 'urn:ngsi-ld:Subscription:2']);
    expect(first.headers.get('ngsild-results-count')).toBe('5');
    expect(first.headers.get('link')).toContain('rel="next"');
    expect(first.headers.get('link')).toContain('offset=2');
    const last = await b.request('GET', `${SUBS}?limit=2&offset=4`);
    expect(last.json.map((s: { id: string }) => s.id)).toEqual(['urn:ngsi-ld:Subscription:5']);
    expect(last.headers.get('link')).toContain('rel="prev"');
    expect(last.headers.get('link')).not.toContain('rel="next"');
  });

  it('links pages on the collection path, typed with the media type of the answer [§6.3.4]', async () => {
    const res = await b.request('GET', `${SUBS}/?limit=1&offset=1`, { headers: { Accept: 'application/ld+json' } });
    expect(res.headers.get('link')).toBe([
      `<${SUBS}?limit=1&offset=0>; rel="prev"; type="application/ld+json"`,
      `<${SUBS}?limit=1&offset=2>; rel="next"; type="application/ld+json"`,
    ].join(', '));
  });

  it('answers limit=0&count=true with the count alone, and 403 TooManyResults above the maximum', async () => {
    const counted = await b.request('GET', `${SUBS}?limit=0&count=true`);
    expect(counted.json).toEqual([]);
    expect(counted.headers.get('ngsild-results-count')).toBe('5');
    expect((await b.request('GET', `${SUBS}?limit=5000`)).status).toBe(403);
  });
});

describe('jsonldContext [§5.2.12]', () => {
  it('without one, shows the context notifications are compacted with: an inline context is served by the broker', async () => {
    const inline = { '@context': { Building: 'https://example.org/ns#Building' } };
    const res = await create({ ...minimalSubscription(), '@context': inline['@context'] });
    expect(res.status).toBe(201);
    const got = (await b.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:min`)).json;
    expect(got.jsonldContext).toMatch(/^http:\/\/127\.0\.0\.1\/ngsi-ld\/v1\/jsonldContexts\/[^/]+$/);
    const served = await b.request('GET', new URL(got.jsonldContext as string).pathname);
    expect(served.status).toBe(200);
    expect(JSON.stringify(served.json)).toContain('https://example.org/ns#Building');
  });

  it('without one, a subscription created with a context URL shows that URL', async () => {
    const { '@context': _c, ...body } = minimalSubscription();
    expect((await create(body, { Link: link(ctxUrl) })).status).toBe(201);
    expect((await b.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:min`)).json.jsonldContext).toBe(ctxUrl);
  });

  it('a jsonldContext that cannot be loaded is 503 LdContextNotAvailable, and nothing is created', async () => {
    ctxServer.set('/gone.jsonld', { error: 'gone' }, 404);
    const res = await create({ ...minimalSubscription(), jsonldContext: ctxServer.url('/gone.jsonld') });
    expect(res.status).toBe(503);
    expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/LdContextNotAvailable');
    expect((await b.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:min`)).status).toBe(404);
  });
});

describe('update a subscription [§5.8.2]', () => {
  beforeEach(async () => {
    expect((await create(fullSubscription(ctxUrl))).status).toBe(201);
  });

  it('answers 204 and replaces each member given whole, keeping the others and the counters', async () => {
    b.broker.subscriptions.recordDelivery('', 'urn:ngsi-ld:Subscription:full', { at: T0, ok: true });
    b.clock.advance(1000);
    const res = await b.request('PATCH', `${SUBS}/urn:ngsi-ld:Subscription:full`, {
      body: {
        subscriptionName: 'Renamed', q: 'humidity>50', isActive: true,
        notification: { attributes: ['humidity'], endpoint: { uri: 'https://example.org/hook' } },
        '@context': USER_CONTEXT['@context'],
      },
      headers: LD,
    });
    expect(res.status).toBe(204);
    const got = (await retrieve('urn:ngsi-ld:Subscription:full')).json;
    expect(got).toMatchObject({
      subscriptionName: 'Renamed', q: 'humidity>50', status: 'active', description: 'Tells when a building gets warm',
      watchedAttributes: ['temperature', 'humidity'],
      notification: {
        attributes: ['humidity'], format: 'normalized', endpoint: { uri: 'https://example.org/hook', accept: 'application/json' },
        status: 'ok', timesSent: 1, lastNotification: '2026-05-01T10:00:00.000Z', lastSuccess: '2026-05-01T10:00:00.000Z',
      },
    });
    // isActive true and showChanges false are the defaults: left out.
    expect(got.isActive).toBeUndefined();
    expect(got.notification.showChanges).toBeUndefined();
  });

  it('checks the rules on the result: timeInterval with the stored watchedAttributes is 400', async () => {
    const res = await b.request('PATCH', `${SUBS}/urn:ngsi-ld:Subscription:full`, { body: { timeInterval: 60 } });
    expect(res.status).toBe(400);
    expect(res.json.detail).toContain('timeInterval');
  });

  it('returns 404 for an unknown id and 400 for a bad member', async () => {
    expect((await b.request('PATCH', `${SUBS}/urn:ngsi-ld:Subscription:nope`, { body: { isActive: true } })).status).toBe(404);
    const bad = await b.request('PATCH', `${SUBS}/urn:ngsi-ld:Subscription:full`, { body: { throttling: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.detail).toContain('throttling');
  });
});

describe('delete a subscription [§5.8.5]', () => {
  it('answers 204, then 404 for the id', async () => {
    await create(minimalSubscription());
    expect((await b.request('DELETE', `${SUBS}/urn:ngsi-ld:Subscription:min`)).status).toBe(204);
    expect((await retrieve('urn:ngsi-ld:Subscription:min')).status).toBe(404);
    expect((await b.request('DELETE', `${SUBS}/urn:ngsi-ld:Subscription:min`)).status).toBe(404);
    expect(b.broker.subscriptionRegistry.size()).toBe(0);
  });

  it('answers 405 with Allow for a method the resource lacks', async () => {
    const res = await b.request('PUT', `${SUBS}/urn:ngsi-ld:Subscription:min`, { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE, GET, PATCH');
  });
});

describe('persistence', () => {
  it('keeps subscriptions across a re-open of a file database, and loads them into the registry', async () => {
    const dir = tempDir();
    try {
      const dbPath = join(dir.path, 'edgeld.db');
      const first = await startTestBroker({ dbPath });
      expect((await first.request('POST', SUBS, { body: fullSubscription(ctxUrl), headers: LD })).status).toBe(201);
      first.broker.subscriptions.recordDelivery('', 'urn:ngsi-ld:Subscription:full', { at: T0, ok: false, error: 'HTTP 500' });
      await first.close();
      const second = await startTestBroker({ dbPath });
      try {
        const got = await second.request('GET', `${SUBS}/urn:ngsi-ld:Subscription:full`, { headers: { Link: link(ctxUrl) } });
        expect(got.json).toMatchObject({ q: 'temperature>20;name=="Main hall"', notification: { status: 'failed', timesSent: 1, lastFailureReason: 'HTTP 500' } });
        expect(second.broker.subscriptionRegistry.get('', 'urn:ngsi-ld:Subscription:full')?.delivery.lastFailure).toBe(T0);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});
