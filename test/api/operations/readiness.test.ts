// GET /ready: 503 naming what is not ready (the MQTT listener before listen(), everything once
// closing, the JWKS cache while it holds no key), 200 once the broker serves; /health always 200.

import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/index.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { startAuthBroker } from '../../helpers/auth.js';
import { mint, signingKey, startJwksServer, type JwksServer } from '../../auth/support.js';

const listening = { server: { port: 0, host: '127.0.0.1' } };

let b: TestBroker | undefined;
let jwks: JwksServer | undefined;
afterEach(async () => {
  await b?.close();
  await jwks?.close();
  b = undefined;
  jwks = undefined;
});

describe('GET /ready', () => {
  it('is 503 naming the MQTT listener before listen(), 200 after, and 503 again once closed', async () => {
    b = await startTestBroker({ config: listening });
    let res = await b.request('GET', '/ready');
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: 'not ready', notReady: ['mqtt'] });
    expect((await b.request('GET', '/health')).status).toBe(200);

    await b.broker.listen();
    res = await b.request('GET', '/ready');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready' });

    await b.close();
    res = await b.request('GET', '/ready');
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: 'not ready', notReady: ['shutdown', 'database', 'mqtt'] });
  });

  it('with a JWKS URI, is 503 naming the JWKS until the cache holds keys', async () => {
    const key = await signingKey('ES256', 'k1');
    jwks = await startJwksServer([key.jwk]);
    jwks.answer({ status: 503, body: 'down' });
    const authentication = { ...defaultConfig().application.authentication, enabled: true, jwksUri: jwks.url, jwksRefreshInterval: 1_000 };
    b = await startTestBroker({ config: { ...listening, application: { authentication } } });
    const call = async (): Promise<number> => {
      const token = await mint(key, {}, b!.clock.now());
      return (await b!.request('GET', '/ngsi-ld/v1/entities?type=Room', { headers: { Authorization: `Bearer ${token}` } })).status;
    };
    expect((await b.request('GET', '/ready')).json).toEqual({ status: 'not ready', notReady: ['mqtt', 'jwks'] });

    await b.broker.listen();
    // A request waits for the fetch listen() started: the provider is down, so no key yet.
    expect(await call()).toBe(401);
    const res = await b.request('GET', '/ready');
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: 'not ready', notReady: ['jwks'] });

    jwks.answer('keys');
    b.clock.advance(1_000);
    expect(await call()).toBe(200);
    expect((await b.request('GET', '/ready')).status).toBe(200);
  });

  it('needs no JWKS keys when tokens are verified with a key file only', async () => {
    b = await startAuthBroker({ config: listening });
    await b.broker.listen();
    expect((await b.request('GET', '/ready')).status).toBe(200);
  });
});
