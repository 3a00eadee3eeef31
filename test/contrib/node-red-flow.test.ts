// contrib/node-red/edgeld-flow.json against Node-RED and against the gateway: its nodes are Node-RED
// core nodes, its MQTT topic is a notification topic of the gateway's topic scheme and the
// subscription it creates notifies there, and its command request is a route of the gateway: run
// against a real edgeld process, a notification of a warm room goes through the flow's function and
// its PATCH issues the command (204).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyTopic, mayNotifyOn } from '../../src/mqtt/topic-classes.js';
import { tempDir } from '../helpers/broker.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { killedAfterEach, startBrokerProcess } from '../helpers/process.js';

/**
 * The node types Node-RED's core registers (`RED.nodes.registerType` in
 * node-red/node-red, packages/node_modules/@node-red/nodes/core/**\/*.js, Node-RED 5.0.4), and `tab`,
 * the flow tab of the flow file format.
 */
const CORE_NODE_TYPES = new Set([
  'tab',
  // common/
  'junction', 'inject', 'debug', 'complete', 'catch', 'status', 'link in', 'link out', 'link call', 'comment', 'global-config', 'unknown',
  // function/
  'function', 'switch', 'change', 'range', 'template', 'delay', 'trigger', 'exec', 'rbe',
  // network/
  'tls-config', 'http proxy', 'mqtt-broker', 'mqtt in', 'mqtt out', 'http in', 'http response', 'http request',
  'websocket-listener', 'websocket-client', 'websocket in', 'websocket out', 'tcp in', 'tcp out', 'tcp request', 'udp in', 'udp out',
  // parsers/, sequence/, storage/
  'csv', 'html', 'json', 'xml', 'yaml', 'split', 'join', 'sort', 'batch', 'file', 'file in', 'watch',
]);

/* eslint-disable @typescript-eslint/no-explicit-any -- test convenience: the flow is walked as the JSON it is */
type FlowNode = { id: string; type: string; z?: string; wires?: string[][]; [k: string]: any };
const flow = JSON.parse(readFileSync(fileURLToPath(new URL('../../contrib/node-red/edgeld-flow.json', import.meta.url)), 'utf8')) as FlowNode[];
/* eslint-enable @typescript-eslint/no-explicit-any */
const byId = new Map(flow.map((n) => [n.id, n]));
const one = (type: string, pred: (n: FlowNode) => boolean = () => true): FlowNode => {
  const found = flow.filter((n) => n.type === type && pred(n));
  expect(found, type).toHaveLength(1);
  return found[0]!;
};
const mqttIn = one('mqtt in');
const broker = one('mqtt-broker');
const inject = one('inject');
const post = one('http request', (n) => n.method === 'POST');
const patch = one('http request', (n) => n.method === 'PATCH');
const fn = one('function');
const subscription = JSON.parse(inject['payload'] as string) as { id: string; notification: { endpoint: { uri: string } } };
const endpoint = new URL(subscription.notification.endpoint.uri);
const headersOf = (n: FlowNode): Record<string, string> =>
  Object.fromEntries((n['headers'] as Array<{ keyValue: string; valueValue: string }>).map((h) => [h.keyValue, h.valueValue]));

/** The flow's function as Node-RED runs it: `msg` in, a message or null out (`node.status` recorded). */
function runFunction(msg: { payload: unknown }): { payload: unknown } | null {
  const statuses: unknown[] = [];
  const node = { status: (s: unknown) => statuses.push(s), warn: () => undefined, error: () => undefined };
  return new Function('msg', 'node', fn['func'] as string)(msg, node) as { payload: unknown } | null; // NOTE: the node's code is the flow's, run like Node-RED's function node
}

describe('the Node-RED flow, as Node-RED reads it', () => {
  it('uses only Node-RED core node types, wired to nodes of the flow, on its one tab', () => {
    expect(flow.map((n) => n.type).filter((t) => !CORE_NODE_TYPES.has(t))).toEqual([]);
    const tab = one('tab');
    for (const n of flow) {
      if (n.type === 'tab' || n.type === 'mqtt-broker') continue;
      expect(n.z, n.id).toBe(tab.id);
      for (const target of (n.wires ?? []).flat()) expect(byId.has(target), `${n.id} -> ${target}`).toBe(true);
    }
    expect(new Set(flow.map((n) => n.id)).size).toBe(flow.length);
    expect(mqttIn['broker']).toBe(broker.id);
    // inject -> POST subscription; mqtt in -> function -> PATCH command.
    expect(inject.wires).toEqual([[post.id]]);
    expect(mqttIn.wires).toEqual([[fn.id]]);
    expect(fn.wires).toEqual([[patch.id]]);
  });

  it('listens on a notification topic of the gateway\'s scheme, the one its subscription notifies on', () => {
    const topic = mqttIn['topic'] as string;
    expect(topic.startsWith('edgeld/notify/')).toBe(true);
    expect(classifyTopic(topic)).toEqual({ kind: 'notification', subject: 'node-red' });
    // With authentication on, the subject node-red (a client of the identity provider) may name it.
    expect(mayNotifyOn(topic, 'node-red', false, undefined)).toBe(true);
    expect(mayNotifyOn(topic, 'someone-else', false, undefined)).toBe(false);
    expect(endpoint.protocol).toBe('mqtt:');
    expect(endpoint.pathname.slice(1)).toBe(topic);
    expect(`${endpoint.hostname}:${endpoint.port}`).toBe(`${broker['broker']}:${broker['port']}`);
    expect(mqttIn['datatype']).toBe('json');
    expect(mqttIn['qos']).toBe('1');
  });
});

describe('the Node-RED flow against a running edgeld', () => {
  const running = killedAfterEach();
  const dir = tempDir('edgeld-node-red-');
  afterAll(() => dir.remove());

  it('creates its subscription (201), gets a warm room\'s notification on its topic, and its PATCH issues the command (204)', async () => {
    const edge = await startBrokerProcess({ STORAGE_DIR: dir.path });
    running.add(edge);
    const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<Response> => {
      const { pathname, search } = new URL(url, 'http://gateway');
      return fetch(edge.base + pathname + search, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    };
    const window = 'urn:ngsi-ld:Window:kitchen';
    expect((await call('POST', '/ngsi-ld/v1/entities', { id: 'urn:ngsi-ld:Room:kitchen', type: 'Room', temperature: { type: 'Property', value: 20 } })).status).toBe(201);
    expect((await call('POST', '/ngsi-ld/v1/entities', { id: window, type: 'Window', open: { type: 'Property', value: false } })).status).toBe(201);
    expect((await call('POST', '/edgeld/v1/devices', { deviceId: 'window-1', entityId: window, entityType: 'Window', commands: [{ name: 'open', expires: 'PT5M' }] })).status).toBe(201);

    // The inject node's payload through the POST node, as on deploy; a second deploy finds it. The
    // endpoint names the gateway's MQTT port, here the process's (the flow's 1883 is the default).
    const atThisGateway = { ...subscription, notification: { ...subscription.notification, endpoint: { ...subscription.notification.endpoint, uri: subscription.notification.endpoint.uri.replace(`:${broker['port']}/`, `:${edge.mqttPort}/`) } } };
    expect(atThisGateway.notification.endpoint.uri).toBe(`mqtt://127.0.0.1:${edge.mqttPort}/${mqttIn['topic']}`);
    expect(post['url']).toMatch(/^http:\/\/[^/]+\/ngsi-ld\/v1\/subscriptions$/);
    const created = await call('POST', post['url'] as string, atThisGateway, headersOf(post));
    expect(created.status, await created.text()).toBe(201);
    expect((await call('POST', post['url'] as string, atThisGateway, headersOf(post))).status).toBe(409);

    const client = await connectClient(`mqtt://127.0.0.1:${edge.mqttPort}`, { clientId: broker['clientid'] as string });
    try {
      const next = await subscribe(client, mqttIn['topic'] as string, 1);
      expect((await call('PATCH', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:kitchen/attrs', { temperature: { type: 'Property', value: 27 } })).status).toBe(204);
      const message = await next(10_000);
      const notification = JSON.parse(message.payload.toString()) as { body: { data: Array<Record<string, unknown>> } };
      expect(notification.body.data).toEqual([{ id: 'urn:ngsi-ld:Room:kitchen', type: 'Room', temperature: 27 }]);

      // A cool room sends nothing; the warm one sends the command's body to the PATCH node.
      expect(runFunction({ payload: { ...notification, body: { ...notification.body, data: [{ id: 'urn:ngsi-ld:Room:kitchen', type: 'Room', temperature: 22 }] } } })).toBeNull();
      const out = runFunction({ payload: notification });
      expect(out).not.toBeNull();
      expect(patch['url']).toMatch(/^http:\/\/[^/]+\/ngsi-ld\/v1\/entities\/[^/]+\/attrs\/[^/]+$/);
      const issued = await call(patch['method'] as string, patch['url'] as string, out!.payload, headersOf(patch));
      expect(issued.status, await issued.text()).toBe(204);
    } finally {
      await endClient(client);
    }
    let recent: Array<{ name: string; value: unknown; state: string }> = [];
    await waitUntil(async () => {
      const res = await call('GET', `/edgeld/v1/commands?entity=${encodeURIComponent(window)}`);
      recent = ((await res.json()) as { recent: typeof recent }).recent;
      return recent.length > 0;
    }, 10_000, 'the command recorded');
    expect(recent.map((c) => [c.name, c.value])).toEqual([['open', true]]);
  }, 40_000);
});
