// End-to-end federation between two real processes: an edge gateway and a second edgeld as the
// cloud. Measurements written (HTTP and MQTT) while the cloud is down all reach its temporal API
// once it is back, in order and exactly once, across a kill -9 of the edge in the middle of the
// drain; the outbox bound drops the oldest changes with a counter in the status.

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { connectClient } from '../helpers/mqtt.js';
import { killedAfterEach, startBrokerProcess, within, type BrokerProcess } from '../helpers/process.js';
import { waitUntil } from '../helpers/fake-cloud.js';

const dir = tempDir('edgeld-e2e-federation-');
const running = killedAfterEach();
afterAll(() => dir.remove());

const T0 = Date.parse('2026-05-01T10:00:00Z');
const HTTP_SENSORS = ['urn:ngsi-ld:Sensor:h0', 'urn:ngsi-ld:Sensor:h1', 'urn:ngsi-ld:Sensor:h2', 'urn:ngsi-ld:Sensor:h3', 'urn:ngsi-ld:Sensor:h4'];
const DEVICES = ['m0', 'm1', 'm2', 'm3', 'm4'];
const PER_ENTITY = 100;

async function start(env: Record<string, string>): Promise<BrokerProcess> {
  const p = await startBrokerProcess({ JOURNAL_PRUNE_SCHEDULE: '0 0 1 1 *', ...env });
  running.add(p);
  return p;
}

async function kill(p: BrokerProcess): Promise<void> {
  p.child.kill('SIGKILL');
  await within(p.exited, 5_000, 'kill -9');
  running.delete(p);
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> { // eslint-disable-line -- test convenience
  const res = await fetch(base + path, {
    method, ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

/** The values of an entity's temperature history in the cloud's temporal API (observedAt order). */
async function cloudHistory(base: string, id: string, attr: string): Promise<Array<{ value: number; observedAt: string }>> {
  const res = await call(base, 'GET', `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(id)}?attrs=${attr}`);
  if (res.status !== 200) return [];
  const instances = res.json[attr];
  return instances === undefined ? [] : Array.isArray(instances) ? instances : [instances];
}

const at = (k: number): string => new Date(T0 + k * 1_000).toISOString();

describe('federation to a second edgeld (processes)', () => {
  it('forwards 1,000 measurements written while the cloud is down, in order and exactly once, across a kill -9 of the edge', async () => {
    const cloudDir = `${dir.path}/cloud`;
    let cloud = await start({ STORAGE_DIR: cloudDir });
    const cloudPort = cloud.port;
    await kill(cloud);

    const edgeEnv = {
      STORAGE_DIR: `${dir.path}/edge`, FEDERATION_UPSTREAM_URL: `http://127.0.0.1:${cloudPort}`, FEDERATION_BATCH_SIZE: '3',
      FEDERATION_RETRY_BASE: '20', FEDERATION_RETRY_MAX: '200', FEDERATION_TIMEOUT: '5000',
    };
    let edge = await start(edgeEnv);
    const client = await connectClient(`mqtt://127.0.0.1:${edge.mqttPort}`);
    try {
      for (let k = 0; k < PER_ENTITY; k++) {
        for (const id of HTTP_SENSORS) {
          const temperature = { type: 'Property', value: k, observedAt: at(k) };
          const res = k === 0
            ? await call(edge.base, 'POST', '/ngsi-ld/v1/entities', { id, type: 'Sensor', temperature })
            : await call(edge.base, 'PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(id)}/attrs`, { temperature });
          expect(res.status).toBeLessThan(300);
        }
        for (const device of DEVICES) {
          await client.publishAsync(`ngsi/default/${device}/attrs`, JSON.stringify({ observedAt: at(k), energy: k }), { qos: 1 });
        }
      }
    } finally {
      await client.endAsync();
    }
    const status = await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status');
    expect(status.json.outboxDepth).toBeGreaterThanOrEqual(2 * 5 * PER_ENTITY);
    expect(status.json.lastError).not.toBeNull();

    // The cloud comes back on the same port with the same data directory.
    cloud = await start({ STORAGE_DIR: cloudDir, SERVER_PORT: String(cloudPort) });
    await waitUntil(async () => (await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status')).json.sent.instances >= 150, 30_000, 'drain under way');
    await kill(edge);
    edge = await start(edgeEnv);
    await waitUntil(async () => (await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status')).json.outboxDepth === 0, 60_000, 'drained after restart');

    const expected = Array.from({ length: PER_ENTITY }, (_, k) => ({ value: k, observedAt: at(k) }));
    const pick = (xs: Array<{ value: number; observedAt: string }>) => xs.map((x) => ({ value: x.value, observedAt: x.observedAt }));
    for (const id of HTTP_SENSORS) expect(pick(await cloudHistory(cloud.base, id, 'temperature')), id).toEqual(expected);
    for (const device of DEVICES) expect(pick(await cloudHistory(cloud.base, `urn:ngsi-ld:Device:${device}`, 'energy')), device).toEqual(expected);
    const current = await call(cloud.base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(HTTP_SENSORS[0]!)}`);
    expect(current.json.temperature.value).toBe(PER_ENTITY - 1);
  }, 150_000);

  it('drops the oldest changes beyond federation.outbox.max-rows, with a counter in the status', async () => {
    const cloudDir = `${dir.path}/cloud-bound`;
    let cloud = await start({ STORAGE_DIR: cloudDir });
    const cloudPort = cloud.port;
    await kill(cloud);
    const edge = await start({
      STORAGE_DIR: `${dir.path}/edge-bound`, FEDERATION_UPSTREAM_URL: `http://127.0.0.1:${cloudPort}`, FEDERATION_OUTBOX_MAX_ROWS: '10',
      FEDERATION_RETRY_BASE: '20', FEDERATION_RETRY_MAX: '200',
    });
    for (let k = 0; k < 30; k++) {
      expect((await call(edge.base, 'POST', '/ngsi-ld/v1/entities', { id: `urn:ngsi-ld:Sensor:b${k}`, type: 'Sensor', temperature: { type: 'Property', value: k } })).status).toBe(201);
    }
    cloud = await start({ STORAGE_DIR: cloudDir, SERVER_PORT: String(cloudPort) });
    await waitUntil(async () => (await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status')).json.outboxDepth === 0, 30_000, 'drained');
    const status = (await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status')).json;
    expect(status.dropped).toBe(20);
    expect(status.sent.entities).toBe(10);
    const inCloud = await call(cloud.base, 'GET', '/ngsi-ld/v1/entities?type=Sensor&limit=100');
    expect(inCloud.json.map((e: { id: string }) => e.id).sort()).toEqual(Array.from({ length: 10 }, (_, k) => `urn:ngsi-ld:Sensor:b${k + 20}`).sort());
  }, 60_000);
});
