// A nearly full disk (storage.min-free-bytes above the free space): writes get 507 InsufficientStorage
// ProblemDetails and MQTT measurements are refused (QoS 1: not acknowledged), while reads keep working and the data
// written before stays intact.

import { afterAll, describe, expect, it } from 'vitest';
import { startTestBroker, tempDir } from '../../helpers/broker.js';
import { connectClient } from '../../helpers/mqtt.js';

const dir = tempDir('edgeld-disk-full-');
afterAll(() => dir.remove());

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const ID = 'urn:ngsi-ld:Sensor:s1';

describe('storage.min-free-bytes above the free space', () => {
  it('answers writes 507 InsufficientStorage, refuses MQTT measurements (QoS 1 unacknowledged) with a counter, and keeps reads working', async () => {
    const dbPath = `${dir.path}/edgeld.db`;
    const roomy = await startTestBroker({ dbPath, config: { storage: { minFreeBytes: 0 } } });
    expect((await roomy.request('POST', '/ngsi-ld/v1/entities', { body: { id: ID, type: 'Sensor', t: { type: 'Property', value: 1 } } })).status).toBe(201);
    await roomy.close();

    const b = await startTestBroker({ dbPath, config: { storage: { minFreeBytes: Number.MAX_SAFE_INTEGER }, server: { port: 0, host: '127.0.0.1' } } });
    try {
      const writes = [
        await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Sensor:s2', type: 'Sensor' } }),
        await b.request('PATCH', `/ngsi-ld/v1/entities/${ID}/attrs`, { body: { t: { type: 'Property', value: 2 } } }),
        await b.request('POST', '/ngsi-ld/v1/temporal/entities', {
          body: { id: ID, type: 'Sensor', t: [{ type: 'Property', value: 4, observedAt: '2026-01-01T00:00:00Z' }] },
        }),
        await b.request('DELETE', `/ngsi-ld/v1/entities/${ID}`),
      ];
      for (const res of writes) {
        expect(res.status, res.text).toBe(507);
        expect(res.json).toMatchObject({ type: `${ERR}InsufficientStorage`, status: 507, title: 'Insufficient storage' });
      }
      // A batch reports the refusal per entity (NGSI-LD §5.6.8: 207 with the errors).
      const batch = await b.request('POST', '/ngsi-ld/v1/entityOperations/upsert', { body: [{ id: ID, type: 'Sensor', t: { type: 'Property', value: 3 } }] });
      expect(batch.status).toBe(207);
      expect(batch.json.errors[0].error).toMatchObject({ type: `${ERR}InsufficientStorage`, status: 507 });
      const read = await b.request('GET', `/ngsi-ld/v1/entities/${ID}`);
      expect(read.status).toBe(200);
      expect(read.json.t.value).toBe(1);
      expect((await b.request('GET', '/ngsi-ld/v1/entities?type=Sensor')).json).toHaveLength(1);

      await b.broker.listen();
      // NOTE: MQTT 3.1.1, which has no negative acknowledgement; an MQTT 5 device gets PUBACK 0x97 (test/mqtt/reason-codes.test.ts).
      const client = await connectClient(`mqtt://127.0.0.1:${b.broker.mqttPort}`, { protocolVersion: 4 });
      try {
        // QoS 0: no acknowledgement to withhold: dropped and counted.
        await client.publishAsync('ngsi/default/meter1/attrs', JSON.stringify({ energy: 5 }), { qos: 0 });
        // QoS 1: not acknowledged; the connection ends (the device sends it again later).
        let acked = false;
        client.publish('ngsi/default/meter1/attrs', JSON.stringify({ energy: 6 }), { qos: 1 }, (err) => void (acked = err === undefined || err === null));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('the connection was not closed')), 10_000);
          client.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        expect(acked).toBe(false);
      } finally {
        await client.endAsync(true);
      }
      const stats = b.broker.mqttIngest.stats();
      expect(stats.dropped['disk-full']).toBe(2);
      expect(stats.stored).toBe(0);
      expect((await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Device:meter1')).status).toBe(404);
    } finally {
      await b.close();
    }
  });
});
