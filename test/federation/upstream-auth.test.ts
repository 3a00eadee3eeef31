// Upstream authentication: OAuth 2.0 client credentials, the token cached until 30 s before it
// expires, and a 401 upstream answered by one retry with a fresh token.

import { afterEach, describe, expect, it } from 'vitest';
import type { TestBroker } from '../helpers/broker.js';
import { startFakeCloud, type FakeCloud } from '../helpers/fake-cloud.js';
import { SENSOR, drained, startEdge, statusOf } from './helpers.js';

let cloud: FakeCloud;
let edge: TestBroker;

afterEach(async () => {
  await edge?.close();
  await cloud?.close();
});

describe('federation upstream authentication', () => {
  it('fetches a token with the client credentials, reuses it, and renews it after a 401 or before it expires', async () => {
    cloud = await startFakeCloud();
    let issued = 0;
    let revoked = '';
    cloud.answer((r) => {
      if (r.path === '/token') return { status: 200, body: { access_token: `t${++issued}`, expires_in: 300, token_type: 'Bearer' } };
      if (r.headers['authorization'] === revoked) return { status: 401, body: { title: 'expired' } };
      return undefined;
    });
    edge = await startEdge(cloud.url, { upstream: { tokenUrl: `${cloud.url}/token`, clientId: 'edge-1', clientSecret: 's3cret' } });
    await edge.broker.listen();
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:1', 1) });
    await drained(edge);
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:2', 1) });
    await drained(edge);
    const tokenRequests = cloud.requests.filter((r) => r.path === '/token');
    expect(tokenRequests).toHaveLength(1);
    expect(new URLSearchParams(tokenRequests[0]!.body as string).toString()).toBe('grant_type=client_credentials&client_id=edge-1&client_secret=s3cret');
    const upstream = cloud.requests.filter((r) => r.path !== '/token');
    expect(upstream.every((r) => r.headers['authorization'] === 'Bearer t1')).toBe(true);

    // The cloud revokes t1: one 401, a new token, the same request again.
    revoked = 'Bearer t1';
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:3', 1) });
    await drained(edge);
    expect(cloud.requests.filter((r) => r.path === '/token')).toHaveLength(2);
    expect(cloud.requests.at(-1)!.headers['authorization']).toBe('Bearer t2');
    expect((await statusOf(edge)).lastError).toBeNull();

    // 30 s before expires_in runs out the token is renewed.
    edge.clock.advance(271_000);
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:4', 1) });
    await drained(edge);
    expect(cloud.requests.filter((r) => r.path === '/token')).toHaveLength(3);
    expect(cloud.requests.at(-1)!.headers['authorization']).toBe('Bearer t3');
  });

  it('records a token endpoint failure and retries', async () => {
    cloud = await startFakeCloud();
    let down = true;
    cloud.answer((r) => (r.path === '/token' ? (down ? { status: 200, raw: '<html>login</html>' } : { status: 200, body: { access_token: 'ok', expires_in: 60 } }) : undefined));
    edge = await startEdge(cloud.url, { upstream: { tokenUrl: `${cloud.url}/token`, clientId: 'edge-1', clientSecret: 'x' } });
    await edge.broker.listen();
    await edge.request('POST', '/ngsi-ld/v1/entities', { body: SENSOR('urn:ngsi-ld:Sensor:1', 1) });
    await cloud.waitFor((rs) => rs.filter((r) => r.path === '/token').length >= 2);
    expect((await statusOf(edge)).lastError.message).toContain('token endpoint');
    down = false;
    await drained(edge);
    expect(cloud.requests.at(-1)!.headers['authorization']).toBe('Bearer ok');
  });
});
