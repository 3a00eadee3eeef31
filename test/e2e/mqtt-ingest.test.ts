// End-to-end: measurements streamed over MQTT with QoS 1 into the real process, which is killed with
// SIGKILL mid-stream: after a restart every message that got its PUBACK is in the history.

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { connectClient } from '../helpers/mqtt.js';
import { startBrokerProcess, within } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-ingest-');
afterAll(() => dir.remove());

const ENTITY = 'urn:ngsi-ld:Device:meter1';
const T0 = Date.parse('2026-05-01T00:00:00Z');

describe('MQTT ingestion and kill -9', () => {
  it('loses no acknowledged measurement', async () => {
    const env = { STORAGE_DIR: `${dir.path}/data` };
    const p = await startBrokerProcess(env);
    const client = await connectClient(`mqtt://127.0.0.1:${p.mqttPort}`);
    client.on('error', () => undefined);
    const acked: number[] = [];
    let stop = false;
    // Publishers keep sending until the process dies under them; each PUBACK is recorded.
    const sending = (async () => {
      for (let n = 0; !stop; n++) {
        const sends = Array.from({ length: 20 }, (_, i) => n * 20 + i).map((k) =>
          client.publishAsync('ngsi/default/meter1/attrs', JSON.stringify({ observedAt: new Date(T0 + k * 1000).toISOString(), energy: k }), { qos: 1 })
            .then(() => acked.push(k), () => undefined));
        await Promise.all(sends);
      }
    })();
    await within(new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (acked.length >= 500) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    }), 20_000, '500 acknowledged measurements');
    p.child.kill('SIGKILL');
    await within(p.exited, 10_000, 'killed');
    stop = true;
    client.end(true);
    await sending.catch(() => undefined);
    const ackedNow = [...acked];

    const again = await startBrokerProcess(env);
    try {
      const res = await fetch(`${again.base}/ngsi-ld/v1/temporal/entities/${encodeURIComponent(ENTITY)}?attrs=energy&timerel=after&timeAt=2000-01-01T00:00:00Z&lastN=100000`);
      expect(res.status).toBe(200);
      const body = await res.json() as { energy: Array<{ value: number }> };
      const stored = new Set(body.energy.map((i) => i.value));
      const lost = ackedNow.filter((k) => !stored.has(k));
      expect(lost).toEqual([]);
      expect(stored.size).toBeGreaterThanOrEqual(ackedNow.length);
    } finally {
      again.child.kill('SIGTERM');
      await within(again.exited, 10_000, 'SIGTERM exit');
    }
  }, 60_000);
});
