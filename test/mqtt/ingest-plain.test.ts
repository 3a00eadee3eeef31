// A payload object of plain values (numbers, strings, booleans) skips the generic attribute parser:
// the measurement it makes must be exactly the one the generic path makes of the same data written
// as NGSI-LD attributes ({value, observedAt, unitCode}), for every rule the mapping applies.

import { describe, expect, it } from 'vitest';
import { createIngest, type MeasurementTopic } from '../../src/mqtt/ingest.js';
import type { DeviceMapping } from '../../src/devices/index.js';
import type { Measurement } from '../../src/entities/index.js';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import { anonymousIn } from '../../src/ngsi/index.js';
import { mapper } from '../ngsi/fake-mapper.js';

const PUBLISHER = { clientId: 'd1', user: null };
const NOW = Date.UTC(2026, 4, 1, 12, 0, 0, 250);
const DEVICE: DeviceMapping = {
  entityId: 'urn:ngsi-ld:Sensor:d1', entityType: 'Sensor', renames: { t: 'temperature', temp: 'temperature', h: 'humidity' },
  unitCodes: { temperature: 'CEL' }, staticAttributes: {},
};

/** The measurement ingestion hands to the write for one payload (of device d1 when `registered`). */
async function measured(payload: unknown, registered: boolean): Promise<Measurement> {
  let seen: Measurement | undefined;
  const ingest = createIngest({
    clock: createFixedClock(NOW), log: silentLogger, maxPayload: 65_536, defaultEntityType: 'Device', autoprovision: true,
    device: (_tenant, id) => (registered && id === 'd1' ? DEVICE : undefined),
    mapper: () => Promise.resolve(mapper),
    record: (_actor, m) => {
      seen = m;
      return Promise.resolve({ created: false });
    },
  });
  const topic: MeasurementTopic = { kind: 'attrs', tenant: '', deviceId: 'd1' };
  const outcome = await ingest.handle(anonymousIn(''), topic, Buffer.from(JSON.stringify(payload)), PUBLISHER);
  expect(outcome).toMatchObject({ stored: true });
  if (seen === undefined) throw new Error('nothing recorded');
  return seen;
}

/** The same object with each plain value written as a Property (the generic path takes it). */
function asAttributes(plain: Record<string, unknown>, observedAt: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plain)) {
    if (k !== 'observedAt') out[k] = observedAt === undefined ? { value: v } : { value: v, observedAt };
  }
  return out;
}

const CASES: Array<[string, Record<string, unknown>, boolean]> = [
  ['a number with the device\'s observedAt', { observedAt: '2026-05-01T09:00:00Z', temperature: 21.4 }, false],
  ['an observedAt written otherwise than edgeld writes it (kept as given)', { observedAt: '2026-05-01T11:00:00.5+02:00', temperature: -3 }, false],
  ['strings, booleans and zero', { observedAt: '2026-05-01T09:00:00.000Z', state: 'open', alarm: false, count: 0 }, false],
  ['no observedAt: the receive time', { temperature: 21.4, humidity: 40 }, false],
  ['renames and unit codes of a registered device', { observedAt: '2026-05-01T09:00:00Z', t: 21.4, h: 40 }, true],
  ['two keys renamed alike: the later wins', { observedAt: '2026-05-01T09:00:00Z', temp: 19, t: 21.4 }, true],
  ['a name given as an IRI', { observedAt: '2026-05-01T09:00:00Z', 'https://example.org/ns#co2': 410 }, false],
];

describe('plain measurement values', () => {
  it.each(CASES)('%s: the same measurement as the generic path', async (_name, plain, registered) => {
    const given = typeof plain['observedAt'] === 'string' ? plain['observedAt'] : undefined;
    const fast = await measured(plain, registered);
    const generic = await measured(asAttributes(plain, given), registered);
    expect(fast).toEqual(generic);
    expect(fast.instances.length + (fast.received?.length ?? 0)).toBeGreaterThan(0);
  });

  it('leaves what it does not take to the generic path: its drops and its kinds', async () => {
    const ingest = (payload: unknown) => {
      const got: Measurement[] = [];
      const i = createIngest({
        clock: createFixedClock(NOW), log: silentLogger, maxPayload: 65_536, defaultEntityType: 'Device', autoprovision: true,
        device: () => undefined, mapper: () => Promise.resolve(mapper),
        record: (_a, m) => {
          got.push(m);
          return Promise.resolve({ created: false });
        },
      });
      return i.handle(anonymousIn(''), { kind: 'attrs', tenant: '', deviceId: 'd1' }, Buffer.from(JSON.stringify(payload)), PUBLISHER).then((o) => ({ o, got }));
    };
    expect((await ingest({ observedAt: 'yesterday', temperature: 1 })).o).toMatchObject({ stored: false, reason: 'observed-at' });
    expect((await ingest({ observedAt: '2026-05-01T09:00:00Z', 'a<b': 1 })).o).toMatchObject({ stored: false, reason: 'invalid' });
    expect((await ingest({})).o).toMatchObject({ stored: false, reason: 'shape' });
    // A geometry stays a GeoProperty, next to a plain number.
    const { got } = await ingest({ observedAt: '2026-05-01T09:00:00Z', temperature: 1, location: { type: 'Point', coordinates: [1, 2] } });
    expect(got[0]?.instances.map((i) => i.attribute.kind).sort()).toEqual(['GeoProperty', 'Property']);
  });
});
