// The downlink from the cloud (federation.downlink, edge spec §7) against a fake cloud and a real
// mosquitto: the subscription created upstream, renewed before it expires, created again when the
// cloud forgot it, and reused after a restart; notifications applied through the write core only
// inside the selection and when newer, the rest refused and counted; what came down not forwarded
// up again while a later local change is; the broker down then up.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { defaultConfig, type Config } from '../../src/config/index.js';
import { T0, tempDir, type TestBroker } from '../helpers/broker.js';
import { startFakeCloud, waitUntil, type CloudRequest, type FakeCloud } from '../helpers/fake-cloud.js';
import { parseExposition } from '../helpers/metrics.js';
import { connectClient, endClient, startMosquitto, type Mosquitto } from '../helpers/mqtt.js';
import { ADMIN_ROLE, startAuthBroker } from '../helpers/auth.js';
import { federationConfig, startEdge, statusOf, upserts } from './helpers.js';

const SUBS = '/ngsi-ld/v1/subscriptions';
const MINUTE = 60_000;
const VALVE = 'urn:ngsi-ld:Valve:v1';
const iso = (ms: number): string => new Date(ms).toISOString();

let mosquitto: Mosquitto;
let publisher: MqttClient | undefined;
let cloud: FakeCloud | undefined;
let edge: TestBroker | undefined;
const dir = tempDir('edgeld-downlink-');

beforeAll(async () => {
  mosquitto = await startMosquitto();
});
afterAll(async () => {
  await mosquitto.remove();
  dir.remove();
});
afterEach(async () => {
  if (publisher) await endClient(publisher);
  await edge?.close();
  await cloud?.close();
  publisher = undefined;
  edge = undefined;
  cloud = undefined;
});

const subCalls = (c: FakeCloud, method?: string): CloudRequest[] =>
  c.requests.filter((r) => r.path.split('?')[0]!.startsWith(SUBS) && (method === undefined || r.method === method));

/** Subscriptions as a broker answers them: create (409 when held), merge-patch and get (404 when unknown), delete. */
function answerSubscriptions(c: FakeCloud, held: Map<string, unknown>): void {
  c.answer((req) => {
    const path = req.path.split('?')[0]!;
    if (!path.startsWith(SUBS)) return undefined;
    if (path === SUBS && req.method === 'POST') {
      const id = String(req.body?.id);
      if (held.has(id)) return { status: 409, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists', title: 'exists' } };
      held.set(id, req.body);
      return { status: 201 };
    }
    const id = decodeURIComponent(path.slice(SUBS.length + 1));
    const found = held.get(id);
    if (found === undefined) return { status: 404, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound', title: 'Not found' } };
    if (req.method === 'PATCH') held.set(id, { ...(found as object), ...req.body });
    if (req.method === 'DELETE') held.delete(id);
    return req.method === 'GET' ? { status: 200, body: found } : { status: 204 };
  });
}

type DownlinkPatch = Partial<Config['federation']['downlink']>;

/** An edge with the downlink on (types Valve, attribute open) against the fake cloud and mosquitto. */
async function startDownlinkEdge(patch: DownlinkPatch = {}, dbPath?: string): Promise<TestBroker> {
  const downlink = { ...defaultConfig().federation.downlink, types: 'Valve', attributes: 'open', mqttUrl: mosquitto.url, ...patch };
  const e = await startEdge(cloud!.url, { downlink, linger: 0 }, dbPath);
  edge = e;
  return e;
}

async function downlinkOf(e: TestBroker): Promise<any> { // eslint-disable-line -- test convenience
  return (await statusOf(e)).downlink;
}

async function createValve(e: TestBroker, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await e.request('POST', '/ngsi-ld/v1/entities', {
    body: { id: VALVE, type: 'Valve', open: { type: 'Property', value: false, observedAt: iso(T0 - MINUTE) }, ...extra },
  });
  expect(res.status).toBe(201);
}

/** A notification as the cloud publishes it over MQTT: `{metadata, body}`. */
function notification(entities: unknown[]): string {
  return JSON.stringify({
    metadata: { 'Content-Type': 'application/json' },
    body: { id: 'urn:ngsi-ld:Notification:1', type: 'Notification', subscriptionId: 'x', notifiedAt: iso(T0), data: entities },
  });
}

async function publish(topic: string, payload: string): Promise<void> {
  publisher ??= await connectClient(mosquitto.url);
  await publisher.publishAsync(topic, payload, { qos: 1 });
}

async function connectedTopic(e: TestBroker): Promise<string> {
  await waitUntil(async () => (await downlinkOf(e))?.connected === true && (await downlinkOf(e)).subscription.subscribed === true, 5_000, 'downlink connected and subscribed');
  return (await downlinkOf(e)).subscription.topic as string;
}

describe('federation.downlink: the subscription upstream', () => {
  it('creates it for the selected types and attributes with an MQTT endpoint on the named broker [edge §7, NGSI-LD §5.8.1]', async () => {
    cloud = await startFakeCloud();
    const held = new Map<string, unknown>();
    answerSubscriptions(cloud, held);
    const e = await startDownlinkEdge({ idPattern: '^urn:ngsi-ld:Valve:' });
    await e.broker.listen();
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 1, 5_000, 'subscription created');
    const body = subCalls(cloud, 'POST')[0]!.body;
    const topic = (await connectedTopic(e));
    expect(topic).toMatch(/^edgeld\/downlink\/[A-Za-z0-9]+$/);
    expect(body).toEqual({
      id: expect.stringMatching(/^urn:ngsi-ld:Subscription:edgeld-downlink:/), type: 'Subscription', subscriptionName: `edgeld downlink ${topic}`,
      entities: [{ type: 'Valve', idPattern: '^urn:ngsi-ld:Valve:' }], watchedAttributes: ['open'],
      notification: {
        attributes: ['open'], format: 'normalized', sysAttrs: true,
        endpoint: { uri: `${mosquitto.url}/${topic}`, accept: 'application/json', notifierInfo: [{ key: 'MQTT-QoS', value: '1' }] },
      },
      expiresAt: iso(T0 + 60 * MINUTE),
    });
    expect(subCalls(cloud, 'POST')[0]!.headers['link']).toContain('rel="http://www.w3.org/ns/json-ld#context"');
    const status = await downlinkOf(e);
    expect(status.subscription).toMatchObject({ id: body.id, subscribed: true, expiresAt: iso(T0 + 60 * MINUTE), failures: 0 });
  });

  it('renews it before it expires, and creates it again when the cloud forgot it [NGSI-LD §5.8.2]', async () => {
    cloud = await startFakeCloud();
    const held = new Map<string, unknown>();
    answerSubscriptions(cloud, held);
    const e = await startDownlinkEdge();
    await e.broker.listen();
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 1, 5_000, 'subscription created');
    const id = subCalls(cloud, 'POST')[0]!.body.id as string;
    e.clock.advance(46 * MINUTE);
    await cloud.waitFor(() => subCalls(cloud!, 'PATCH').length === 1, 5_000, 'renewal');
    expect(subCalls(cloud, 'PATCH')[0]!.body).toEqual({ expiresAt: iso(T0 + 106 * MINUTE) });
    expect(subCalls(cloud, 'PATCH')[0]!.path).toBe(`${SUBS}/${encodeURIComponent(id)}`);
    held.clear();
    e.clock.advance(46 * MINUTE);
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 2, 5_000, 'created again after a 404 on renewal');
    expect(subCalls(cloud, 'POST')[1]!.body.id).toBe(id);
    expect(held.has(id)).toBe(true);
  });

  it('creates it again when the periodic check finds it gone', async () => {
    cloud = await startFakeCloud();
    const held = new Map<string, unknown>();
    answerSubscriptions(cloud, held);
    const e = await startDownlinkEdge({ checkInterval: 60_000 });
    await e.broker.listen();
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 1, 5_000, 'subscription created');
    held.clear();
    e.clock.advance(61_000);
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 2, 5_000, 'created again after the check');
    expect(subCalls(cloud, 'GET').length).toBeGreaterThanOrEqual(1);
  });

  it('reuses the stored subscription and topic after a restart instead of making another', async () => {
    cloud = await startFakeCloud();
    const held = new Map<string, unknown>();
    answerSubscriptions(cloud, held);
    const dbPath = `${dir.path}/restart.db`;
    let e = await startDownlinkEdge({}, dbPath);
    await e.broker.listen();
    const topic = await connectedTopic(e);
    const id = subCalls(cloud, 'POST')[0]!.body.id as string;
    await e.close();
    edge = undefined;
    e = await startDownlinkEdge({}, dbPath);
    await e.broker.listen();
    await waitUntil(async () => (await downlinkOf(e)).subscription.subscribed === true, 5_000, 'subscribed after restart');
    expect(subCalls(cloud, 'POST')).toHaveLength(1);
    expect(subCalls(cloud, 'GET').map((r) => r.path)).toContain(`${SUBS}/${encodeURIComponent(id)}`);
    expect((await downlinkOf(e)).subscription).toMatchObject({ id, topic });
    expect(held.size).toBe(1);

    // Another selection: a new subscription, and the old one removed upstream.
    await e.close();
    edge = undefined;
    e = await startDownlinkEdge({ attributes: 'open,setpoint' }, dbPath);
    await e.broker.listen();
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 2, 5_000, 'a new subscription');
    expect(subCalls(cloud, 'DELETE').map((r) => r.path)).toEqual([`${SUBS}/${encodeURIComponent(id)}`]);
    expect([...held.keys()]).toEqual([subCalls(cloud, 'POST')[1]!.body.id]);
    expect(subCalls(cloud, 'POST')[1]!.body.id).not.toBe(id);
  });
});

describe('federation.downlink: notifications', () => {
  it('applies a newer notified attribute through the write core and refuses what is outside the selection or older [edge §7]', async () => {
    cloud = await startFakeCloud();
    answerSubscriptions(cloud, new Map());
    const e = await startDownlinkEdge({ maxBytes: 1_024 });
    await createValve(e, { label: { type: 'Property', value: 'main' } });
    await e.broker.listen();
    const topic = await connectedTopic(e);
    await publish(topic, notification([{
      id: VALVE, type: 'Valve',
      open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) },
      label: { type: 'Property', value: 'hijacked', modifiedAt: iso(T0 + 5 * MINUTE) },
    }, {
      id: 'urn:ngsi-ld:Pump:p1', type: 'Pump', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) },
    }]));
    await waitUntil(async () => (await downlinkOf(e)).applied === 1, 5_000, 'applied');
    const valve = (await e.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`)).json;
    expect(valve.open).toEqual({ type: 'Property', value: true, observedAt: iso(T0 + 5 * MINUTE) });
    expect(valve.label.value).toBe('main');
    let status = await downlinkOf(e);
    expect(status.refused).toMatchObject({ attribute: 1, type: 1, stale: 0 });
    expect(status.lastNotification).toBe(iso(T0));

    // Older than the local state (and the same one again): refused, the value stays.
    await publish(topic, notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: false, modifiedAt: iso(T0 + 4 * MINUTE) } }]));
    await publish(topic, notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) } }]));
    await waitUntil(async () => (await downlinkOf(e)).refused.stale === 2, 5_000, 'older refused');
    // Not held by the gateway, not JSON, not a notification.
    await publish(topic, notification([{ id: 'urn:ngsi-ld:Valve:other', type: 'Valve', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 9 * MINUTE) } }]));
    await publish(topic, 'not json');
    await publish(topic, JSON.stringify({ body: { data: 'nope' } }));
    // No time to compare with, and over federation.downlink.max-bytes.
    await publish(topic, notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: false } }]));
    await publish(topic, notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: 'x'.repeat(2_048), modifiedAt: iso(T0 + 9 * MINUTE) } }]));
    await waitUntil(async () => (await downlinkOf(e)).refused['too-large'] === 1, 5_000, 'too large refused');
    status = await downlinkOf(e);
    expect(status.refused).toEqual({ entity: 1, stale: 2, invalid: 2, attribute: 1, type: 1, untimed: 1, 'too-large': 1 });
    expect(status.applied).toBe(1);
    expect((await e.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`)).json.open.value).toBe(true);

    const metrics = parseExposition((await e.request('GET', '/metrics')).text);
    expect(metrics.value('edgeld_federation_downlink_applied_total')).toBe(1);
    expect(metrics.value('edgeld_federation_downlink_refused_total', { reason: 'stale' })).toBe(2);
    expect(metrics.value('edgeld_federation_downlink_refused_total', { reason: 'type' })).toBe(1);
    expect(metrics.value('edgeld_federation_downlink_connected')).toBe(1);
    expect(metrics.value('edgeld_federation_downlink_subscribed')).toBe(1);
  });

  it('does not forward what came down, while a later local change of the same entity goes up [edge §7 loop guard]', async () => {
    cloud = await startFakeCloud();
    answerSubscriptions(cloud, new Map());
    const e = await startDownlinkEdge();
    await createValve(e);
    await e.broker.listen();
    await cloud.waitFor(() => upserts(cloud!).length === 1, 5_000, 'the valve forwarded');
    const topic = await connectedTopic(e);
    await publish(topic, notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) } }]));
    await waitUntil(async () => (await downlinkOf(e)).applied === 1, 5_000, 'applied');
    // What a command dispatcher does after it: a status written under another subject.
    e.clock.advance(MINUTE);
    const appended = await e.request('POST', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}/attrs`, {
      body: { open_status: { type: 'Property', value: 'PENDING' } },
    });
    expect(appended.status).toBe(204);
    await cloud.waitFor(() => upserts(cloud!).length === 2, 5_000, 'the later change forwarded');
    await waitUntil(async () => (await statusOf(e)).outboxDepth === 0, 5_000, 'outbox drained');
    const sent = upserts(cloud).slice(1).flatMap((r) => r.body as Array<Record<string, unknown>>);
    expect(sent).toHaveLength(1);
    expect(sent[0]!['open_status']).toMatchObject({ value: 'PENDING' });
    expect(sent[0]!['open']).toBeUndefined();
    expect(cloud.requests.filter((r) => r.path.includes('/temporal/entities/') && JSON.stringify(r.body).includes('"open"'))).toHaveLength(0);
  });

  it('reconnects after the MQTT broker was down and takes the next notification', async () => {
    cloud = await startFakeCloud();
    answerSubscriptions(cloud, new Map());
    const e = await startDownlinkEdge();
    await createValve(e);
    await e.broker.listen();
    const topic = await connectedTopic(e);
    if (publisher) await endClient(publisher);
    publisher = undefined;
    await mosquitto.stop();
    await waitUntil(async () => (await downlinkOf(e)).connected === false, 5_000, 'disconnected');
    await mosquitto.start();
    await waitUntil(async () => (await downlinkOf(e)).connected === true, 10_000, 'reconnected');
    expect((await downlinkOf(e)).connectionFailures).toBeGreaterThanOrEqual(1);
    await publish(topic, notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) } }]));
    await waitUntil(async () => (await downlinkOf(e)).applied === 1, 5_000, 'applied after the reconnection');
  });
});

describe('federation.downlink.endpoint: notifications posted to the gateway', () => {
  it('subscribes with the route as endpoint and the token as receiverInfo, and applies what is posted there', async () => {
    cloud = await startFakeCloud();
    answerSubscriptions(cloud, new Map());
    const e = await startDownlinkEdge({ mqttUrl: '', endpoint: 'https://gw.example.com:8443/', endpointToken: 'secret-token' });
    await createValve(e);
    await e.broker.listen();
    await cloud.waitFor(() => subCalls(cloud!, 'POST').length === 1, 5_000, 'subscription created');
    expect(subCalls(cloud, 'POST')[0]!.body.notification.endpoint).toEqual({
      uri: 'https://gw.example.com:8443/edgeld/v1/downlink', accept: 'application/json', receiverInfo: [{ key: 'Authorization', value: 'Bearer secret-token' }],
    });
    const posted = await e.request('POST', '/edgeld/v1/downlink', {
      // HTTP carries the bare notification (no MQTT envelope).
      raw: JSON.stringify(JSON.parse(notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) } }])).body),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(posted.status).toBe(204);
    expect((await e.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`)).json.open.value).toBe(true);
    const status = await downlinkOf(e);
    expect(status).toMatchObject({ transport: 'http', connected: true, broker: 'https://gw.example.com:8443/edgeld/v1/downlink', applied: 1 });
    expect(JSON.stringify(await statusOf(e))).not.toContain('secret-token');
    const garbage = await e.request('POST', '/edgeld/v1/downlink', { raw: '{"data": 1}', headers: { 'Content-Type': 'application/json' } });
    expect(garbage.status).toBe(204);
    expect((await downlinkOf(e)).refused.invalid).toBe(1);
  });
});

describe('federation.downlink.endpoint with authentication on', () => {
  it('takes notifications only from federation.downlink.endpoint-subject (or an administrator)', async () => {
    cloud = await startFakeCloud();
    answerSubscriptions(cloud, new Map());
    const downlink = {
      ...defaultConfig().federation.downlink, types: 'Valve', attributes: 'open', endpoint: 'https://gw.example.com', endpointToken: 't', endpointSubject: 'cloud-broker',
    };
    const e = await startAuthBroker({ config: { server: { port: 0, host: '127.0.0.1' }, federation: federationConfig(cloud.url, { downlink }) } });
    edge = e;
    const created = await e.as('admin', 'POST', '/ngsi-ld/v1/entities', {
      body: { id: VALVE, type: 'Valve', open: { type: 'Property', value: false, observedAt: iso(T0 - MINUTE) } }, claims: { roles: [ADMIN_ROLE] },
    });
    expect(created.status).toBe(201);
    const body = JSON.parse(notification([{ id: VALVE, type: 'Valve', open: { type: 'Property', value: true, modifiedAt: iso(T0 + 5 * MINUTE) } }])).body;
    expect((await e.as(undefined, 'POST', '/edgeld/v1/downlink', { body })).status).toBe(401);
    expect((await e.as('someone', 'POST', '/edgeld/v1/downlink', { body })).status).toBe(403);
    expect((await e.as('admin', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`, { claims: { roles: [ADMIN_ROLE] } })).json.open.value).toBe(false);
    expect((await e.as('cloud-broker', 'POST', '/edgeld/v1/downlink', { body })).status).toBe(204);
    expect((await e.as('admin', 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`, { claims: { roles: [ADMIN_ROLE] } })).json.open.value).toBe(true);
  });
});
