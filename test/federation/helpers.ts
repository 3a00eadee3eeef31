// Federation test setup: an edge broker (the real app, in-process, listening on loopback) whose
// upstream is a fake cloud, with fast retries so that failure tests need no waiting.

import { defaultConfig, type Config } from '../../src/config/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { waitUntil, type FakeCloud } from '../helpers/fake-cloud.js';

export type FederationPatch = Partial<Omit<Config['federation'], 'upstream' | 'outbox' | 'register'>> & {
  upstream?: Partial<Config['federation']['upstream']>;
  outbox?: Partial<Config['federation']['outbox']>;
  register?: Partial<Config['federation']['register']>;
};

export function federationConfig(url: string, patch: FederationPatch = {}): Config['federation'] {
  const base = defaultConfig().federation;
  return {
    ...base, retryBase: 5, retryMax: 40, timeout: 2_000, ...patch,
    upstream: { ...base.upstream, url, ...patch.upstream },
    outbox: { ...base.outbox, ...patch.outbox },
    register: { ...base.register, ...patch.register },
  };
}

/** An edge broker forwarding to `url`; not listening yet (federation starts with listen()). */
export function startEdge(url: string, patch: FederationPatch = {}, dbPath?: string): Promise<TestBroker> {
  return startTestBroker({ config: { server: { port: 0, host: '127.0.0.1' }, federation: federationConfig(url, patch) }, ...(dbPath !== undefined ? { dbPath } : {}) });
}

export const SENSOR = (id: string, temperature: number, observedAt?: string): Record<string, unknown> => ({
  id, type: 'Sensor', temperature: { type: 'Property', value: temperature, ...(observedAt ? { observedAt } : {}) },
});

/** The federation status as the route answers it. */
export async function statusOf(edge: TestBroker): Promise<any> { // eslint-disable-line -- test convenience
  const res = await edge.request('GET', '/ngsi-ld/v1/federation/status');
  return res.json;
}

/** Waits until the edge has nothing pending and its last attempt succeeded. */
export async function drained(edge: TestBroker, ms = 5_000): Promise<void> {
  await waitUntil(async () => (await statusOf(edge)).outboxDepth === 0, ms, 'outbox drained');
}

export const upserts = (cloud: FakeCloud) => cloud.requests.filter((r) => r.method === 'POST' && r.path.includes('/entityOperations/upsert'));
export const temporals = (cloud: FakeCloud) => cloud.requests.filter((r) => r.method === 'POST' && r.path.includes('/temporal/entities/'));
