// End-to-end: notifications of the real process survive kill -9. Writes acknowledged while the
// receiver is down leave notifications pending (queued, or not even matched yet); after kill -9 and
// a restart, the receiver, back up, gets every one of them, in order.

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { startBrokerProcess, within } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { freePort } from '../helpers/mqtt.js';

const dir = tempDir('edgeld-e2e-notify-');
afterAll(() => dir.remove());

const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';

async function send(base: string, method: string, path: string, body: unknown, type = 'application/json'): Promise<number> {
  const res = await fetch(base + path, { method, headers: { 'Content-Type': type }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

describe('notification durability', () => {
  it('delivers every notification pending at a kill -9 after the restart, in order', async () => {
    // The receiver's port is reserved but nothing listens there until after the kill.
    const port = await freePort();
    const env = {
      STORAGE_DIR: `${dir.path}/notify`, NOTIFICATIONS_RETRY_BASE: '20', NOTIFICATIONS_RETRY_MAX: '100', NOTIFICATIONS_MAX_ATTEMPTS: '1000',
    };
    const p = await startBrokerProcess(env);
    expect(await send(p.base, 'POST', '/ngsi-ld/v1/subscriptions', {
      id: 'urn:ngsi-ld:Subscription:e2e', type: 'Subscription', entities: [{ type: 'Meter' }],
      notification: { endpoint: { uri: `http://127.0.0.1:${port}/notify`, accept: 'application/json' } }, '@context': CORE,
    }, 'application/ld+json')).toBe(201);
    const id = 'urn:ngsi-ld:Meter:m1';
    expect(await send(p.base, 'POST', '/ngsi-ld/v1/entities', { id, type: 'Meter', reading: { type: 'Property', value: 0 } })).toBe(201);
    for (let v = 1; v <= 30; v++) {
      expect(await send(p.base, 'PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, { reading: { type: 'Property', value: v } })).toBe(204);
    }
    p.child.kill('SIGKILL');
    expect(await within(p.exited, 5000, 'kill -9')).toBe('SIGKILL');

    const receiver = await startReceiver(port);
    const q = await startBrokerProcess(env);
    try {
      const got = await receiver.waitFor(31, { ms: 15_000 });
      const values = got.map((r) => r.body.data[0].reading.value);
      expect(values).toEqual(Array.from({ length: 31 }, (_, i) => i));
    } finally {
      q.child.kill('SIGTERM');
      expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
      await receiver.close();
    }
  });
});
