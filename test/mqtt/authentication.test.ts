// The embedded MQTT broker with authentication on: a client's password must be a token the HTTP API
// accepts; anonymous clients and bad tokens are refused at CONNECT (CONNACK 4).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from 'jose';
import { mint, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { connectClient } from '../helpers/mqtt.js';

describe('embedded MQTT broker with authentication', () => {
  let b: AuthBroker;
  let url: string;
  beforeAll(async () => {
    b = await startAuthBroker({ config: { server: { port: 0, host: '127.0.0.1' } } });
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
  });
  afterAll(() => b.close());

  it('accepts a client whose password is a valid token', async () => {
    const client = await connectClient(url, { username: 'dashboard', password: await b.token('alice') });
    expect(client.connected).toBe(true);
    await client.endAsync();
  });

  it('refuses anonymous clients and bad tokens with CONNACK 4', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await mint(privateKey, b.clock.now(), 'alice');
    for (const opts of [{}, { username: 'dashboard' }, { username: 'dashboard', password: 'secret' }, { username: 'dashboard', password: foreign }]) {
      await expect(connectClient(url, opts, 3_000)).rejects.toMatchObject({ code: 4 });
    }
  });
});
