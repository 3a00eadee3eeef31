// Mixed write load on a broker process for fault tests: HTTP workers creating entities and MQTT
// publishers sending QoS 1 measurements, recording what was acknowledged (HTTP 2xx, PUBACK), until
// stopped or the process dies under them. Then checks that a broker has every acknowledged write.

import { expect } from 'vitest';
import type { MqttClient } from 'mqtt';
import { connectClient } from './mqtt.js';
import { within } from './process.js';

export const CORE_CONTEXT = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const T0 = Date.parse('2026-05-01T00:00:00Z');

/** Subscribes to every Meter, notified to a receiver on 127.0.0.1:`port` (201 expected). */
export async function subscribeMeters(base: string, port: number): Promise<void> {
  const res = await fetch(`${base}/ngsi-ld/v1/subscriptions`, {
    method: 'POST', headers: { 'Content-Type': 'application/ld+json' },
    body: JSON.stringify({
      id: 'urn:ngsi-ld:Subscription:meters', type: 'Subscription', entities: [{ type: 'Meter' }],
      notification: { endpoint: { uri: `http://127.0.0.1:${port}/notify`, accept: 'application/json' } }, '@context': CORE_CONTEXT,
    }),
  });
  expect(res.status).toBe(201);
}

export interface WriteLoad {
  /** Ids of entities whose create was answered 201. */
  readonly created: string[];
  /** Measurement numbers whose PUBACK arrived, per device. */
  readonly measured: Map<string, number[]>;
  /** HTTP answers of 5xx (must stay empty). */
  readonly serverErrors: string[];
  /** Requests that got no answer (the process died or closed its listener). */
  readonly unanswered: () => number;
  /** Resolves once at least `http` creates and `mqtt` measurements are acknowledged. */
  until(http: number, mqtt: number, ms?: number): Promise<void>;
  /** Stops sending and waits for the workers to end. */
  stop(): Promise<void>;
}

/** Starts `httpWorkers` create loops and one QoS 1 publisher per device; `tag` keeps ids unique per run. */
export async function startWriteLoad(p: { base: string; mqttPort: number }, tag: string, opts: { httpWorkers?: number; devices?: string[] } = {}): Promise<WriteLoad> {
  const created: string[] = [];
  const measured = new Map<string, number[]>();
  const serverErrors: string[] = [];
  let unanswered = 0;
  let stopped = false;
  const http = Array.from({ length: opts.httpWorkers ?? 4 }, async (_, w) => {
    for (let i = 0; !stopped; i++) {
      const id = `urn:ngsi-ld:Meter:${tag}-w${w}-${i}`;
      try {
        const res = await fetch(`${p.base}/ngsi-ld/v1/entities`, {
          method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ id, type: 'Meter', reading: { type: 'Property', value: i } }),
        });
        const text = await res.text();
        if (res.status === 201) created.push(id);
        else if (res.status >= 500) serverErrors.push(`${res.status} ${text}`);
      } catch {
        unanswered++;
        return; // the process is gone or no longer accepts connections
      }
    }
  });
  const clients: MqttClient[] = [];
  const mqtt = (opts.devices ?? [`${tag}-meter`]).map(async (device) => {
    const acked: number[] = [];
    measured.set(device, acked);
    const client = await connectClient(`mqtt://127.0.0.1:${p.mqttPort}`);
    clients.push(client);
    let failed = false;
    client.on('close', () => (failed = true));
    for (let n = 0; !stopped && !failed; n++) {
      // 10 in flight at a time; each PUBACK comes after the measurement's commit.
      await Promise.all(Array.from({ length: 10 }, (_, i) => n * 10 + i).map((k) =>
        client.publishAsync(`ngsi/default/${device}/attrs`, JSON.stringify({ observedAt: new Date(T0 + k * 1000).toISOString(), energy: k }), { qos: 1 })
          .then(() => acked.push(k), () => { failed = true; })));
    }
  });
  const total = (): number => [...measured.values()].reduce((n, a) => n + a.length, 0);
  return {
    created, measured, serverErrors, unanswered: () => unanswered,
    until: (h, m, ms = 20_000) => within((async () => {
      while (created.length < h || total() < m) await new Promise((r) => setTimeout(r, 5));
    })(), ms, `${h} creates and ${m} measurements acknowledged (have ${created.length} and ${total()})`),
    async stop() {
      stopped = true;
      await Promise.all(http);
      for (const c of clients) c.end(true);
      await Promise.allSettled(mqtt);
    },
  };
}

/** Asserts that the broker at `base` has every entity in `created` and every measurement in `measured`. */
export async function expectAcknowledged(base: string, created: readonly string[], measured: ReadonlyMap<string, readonly number[]>): Promise<void> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 1000) {
    const res = await fetch(`${base}/ngsi-ld/v1/entities?type=Meter&limit=1000&offset=${offset}&pick=id`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Array<{ id: string }>;
    for (const e of page) ids.add(e.id);
    if (page.length < 1000) break;
  }
  expect(created.filter((id) => !ids.has(id)), 'acknowledged creates missing').toEqual([]);
  for (const [device, acked] of measured) {
    const entity = encodeURIComponent(`urn:ngsi-ld:Device:${device}`);
    const res = await fetch(`${base}/ngsi-ld/v1/temporal/entities/${entity}?attrs=energy&timerel=after&timeAt=2000-01-01T00:00:00Z&lastN=10000`);
    if (acked.length === 0 && res.status === 404) continue;
    expect(res.status, device).toBe(200);
    const body = (await res.json()) as { energy?: Array<{ value: number }> | { value: number } };
    const instances = body.energy === undefined ? [] : Array.isArray(body.energy) ? body.energy : [body.energy];
    const stored = new Set(instances.map((i) => i.value));
    expect(acked.filter((k) => !stored.has(k)), `acknowledged measurements of ${device} missing`).toEqual([]);
  }
}
