// The downlink end to end (edge spec §7): a second edgeld process as the cloud, mosquitto as the MQTT
// broker both reach, and an edge edgeld forwarding its valve upstream with federation.downlink on.
// A PATCH of the valve's `open` in the cloud reaches the edge through the subscription the edge keeps
// on the cloud; the cloud sees no echo of it, while a later change at the edge still goes up; a
// restart of the edge renews the same subscription instead of making another. The same with the cloud
// edgeld's own embedded broker (Aedes) as the broker both reach.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMosquitto, type Mosquitto } from '../helpers/mqtt.js';
import { call, edgeldProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import type { BrokerProcess } from '../helpers/process.js';

const nodes = edgeldProcesses('edgeld-e2e-downlink-');
let mosquitto: Mosquitto;

beforeAll(async () => {
  mosquitto = await startMosquitto();
});
afterAll(async () => {
  await mosquitto.remove();
});

const VALVE = 'urn:ngsi-ld:Valve:v1';
const path = `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`;

const edgeEnv = (cloud: BrokerProcess, mqttUrl = mosquitto.url): Record<string, string> => ({
  FEDERATION_UPSTREAM_URL: cloud.base, FEDERATION_LINGER: '0', FEDERATION_RETRY_BASE: '20', FEDERATION_RETRY_MAX: '200',
  FEDERATION_DOWNLINK_TYPES: 'Valve', FEDERATION_DOWNLINK_ATTRIBUTES: 'open', FEDERATION_DOWNLINK_MQTT_URL: mqttUrl,
});

async function downlinkOf(edge: BrokerProcess): Promise<any> { // eslint-disable-line -- test convenience
  return (await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status')).json.downlink;
}

/** The instances of an attribute in the cloud's temporal API. */
async function cloudInstances(cloud: BrokerProcess, attr: string): Promise<unknown[]> {
  const res = await call(cloud.base, 'GET', `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(VALVE)}?attrs=${attr}`);
  if (res.status !== 200) return [];
  const got = res.json[attr];
  return got === undefined ? [] : Array.isArray(got) ? got : [got];
}

async function cloudSubscriptions(cloud: BrokerProcess): Promise<Array<{ id: string }>> {
  return (await call(cloud.base, 'GET', '/ngsi-ld/v1/subscriptions')).json as Array<{ id: string }>;
}

describe('federation.downlink between two edgeld processes and mosquitto', () => {
  it('applies a PATCH made in the cloud at the edge, sends no echo back, still forwards later changes, and keeps its subscription across a restart', async () => {
    const [cloud] = await nodes.start({});
    let [edge] = await nodes.start(edgeEnv(cloud!));
    expect((await call(edge!.base, 'POST', '/ngsi-ld/v1/entities', { id: VALVE, type: 'Valve', open: { type: 'Property', value: false } })).status).toBe(201);
    await waitUntil(async () => (await call(cloud!.base, 'GET', path)).status === 200, 10_000, 'the valve forwarded to the cloud');
    await waitUntil(async () => (await downlinkOf(edge!))?.connected === true && (await downlinkOf(edge!)).subscription.subscribed === true, 10_000, 'downlink up');
    const subs = await cloudSubscriptions(cloud!);
    expect(subs.map((s) => s.id)).toEqual([(await downlinkOf(edge!)).subscription.id]);

    // The cloud writes the valve's command attribute.
    expect((await call(cloud!.base, 'PATCH', `${path}/attrs`, { open: { type: 'Property', value: true } })).status).toBe(204);
    await waitUntil(async () => (await call(edge!.base, 'GET', path)).json.open?.value === true, 10_000, 'the PATCH applied at the edge');
    expect((await downlinkOf(edge!)).applied).toBe(1);
    const written = (await call(cloud!.base, 'GET', `${path}?options=sysAttrs`)).json.open;
    const instances = (await cloudInstances(cloud!, 'open')).length;

    // A later change at the edge (what a command's status is) goes up; the applied `open` does not come back.
    expect((await call(edge!.base, 'POST', `${path}/attrs`, { open_status: { type: 'Property', value: 'OK' } })).status).toBe(204);
    await waitUntil(async () => (await call(cloud!.base, 'GET', path)).json.open_status?.value === 'OK', 10_000, 'the later change forwarded');
    await waitUntil(async () => (await call(edge!.base, 'GET', '/ngsi-ld/v1/federation/status')).json.outboxDepth === 0, 10_000, 'outbox drained');
    // An echo would have written `open` again in the cloud: a new modifiedAt, an observedAt, one more instance.
    expect((await call(cloud!.base, 'GET', `${path}?options=sysAttrs`)).json.open).toEqual(written);
    expect(written.observedAt).toBeUndefined();
    expect(await cloudInstances(cloud!, 'open')).toHaveLength(instances);

    // A restart renews the same subscription.
    const id = (await downlinkOf(edge!)).subscription.id as string;
    expect(await nodes.stop(edge!)).toBe(0);
    [edge] = await nodes.start({ ...edgeEnv(cloud!), STORAGE_DIR: nodes.dataDir(edge!) });
    await waitUntil(async () => (await downlinkOf(edge!))?.subscription.subscribed === true && (await downlinkOf(edge!)).connected === true, 10_000, 'downlink up again');
    expect((await downlinkOf(edge!)).subscription.id).toBe(id);
    expect((await cloudSubscriptions(cloud!)).map((s) => s.id)).toEqual([id]);
    expect((await call(cloud!.base, 'PATCH', `${path}/attrs`, { open: { type: 'Property', value: false } })).status).toBe(204);
    await waitUntil(async () => (await call(edge!.base, 'GET', path)).json.open?.value === false, 10_000, 'the next PATCH applied after the restart');
  });

  it('works with the cloud edgeld\'s embedded MQTT broker as the broker both reach', async () => {
    const [cloud] = await nodes.start({});
    const [edge] = await nodes.start(edgeEnv(cloud!, `mqtt://127.0.0.1:${cloud!.mqttPort}`));
    expect((await call(edge!.base, 'POST', '/ngsi-ld/v1/entities', { id: VALVE, type: 'Valve', open: { type: 'Property', value: false } })).status).toBe(201);
    await waitUntil(async () => (await call(cloud!.base, 'GET', path)).status === 200, 10_000, 'the valve forwarded to the cloud');
    await waitUntil(async () => (await downlinkOf(edge!))?.connected === true && (await downlinkOf(edge!)).subscription.subscribed === true, 10_000, 'downlink up');
    expect((await call(cloud!.base, 'PATCH', `${path}/attrs`, { open: { type: 'Property', value: true } })).status).toBe(204);
    await waitUntil(async () => (await call(edge!.base, 'GET', path)).json.open?.value === true, 10_000, 'the PATCH applied at the edge');
    expect((await downlinkOf(edge!)).applied).toBe(1);
  });
});
