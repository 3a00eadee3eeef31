// Temporal instances of plain values ({type: "Property", value, observedAt}) skip the generic
// attribute parser: what they make must be exactly what the generic parser makes of the same body,
// instance by instance, and a body the short way does not take must fail as the generic one does.

import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz-runs.js';
import { describe, expect, it } from 'vitest';
import { BadRequestDataError, ENTITY_CORE_MEMBERS, parseAttributes, type TermMapper } from '../../src/ngsi/index.js';
import { parseTemporalAttributes, type TemporalInstanceInput } from '../../src/temporal/parse.js';
import { mapper } from '../ngsi/fake-mapper.js';

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0, 5);

/** Every instance through the generic parser, as the temporal body parser did before its short way. */
function generic(body: Record<string, unknown>, m: TermMapper, now: number): TemporalInstanceInput[] {
  const out: TemporalInstanceInput[] = [];
  for (const [key, raw] of Object.entries(body)) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    const items = Array.isArray(raw) && raw.length > 0 && raw.every((x) => typeof x === 'object' && x !== null && !Array.isArray(x)) ? raw : [raw];
    items.forEach((item, i) => {
      const parsed = parseAttributes({ [key]: item }, m, { now, allowNull: false });
      for (const [attr, list] of Object.entries(parsed)) {
        for (const a of list) {
          if ('deleted' in a) throw new BadRequestDataError(`NGSI-LD Null is not a temporal instance (at ${key}[${i}])`);
          if (a.observedAt === undefined) throw new BadRequestDataError(`Every temporal instance needs observedAt (at ${key}[${i}])`);
          out.push({ attr, attribute: { ...a, observedAt: a.observedAt } });
        }
      }
    });
  }
  if (out.length === 0) throw new BadRequestDataError('No attribute instance given');
  return out;
}

const outcome = (f: () => unknown): unknown => {
  try {
    return { ok: f() };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
};

const observedAt = fc.oneof(
  fc.integer({ min: 0, max: 4_102_444_800_000 }).map((t) => new Date(t).toISOString()),
  fc.constantFrom('2024-01-01T00:00:00Z', '2024-01-01T00:00:00.5+02:00', '2024-02-30T00:00:00Z', '2024-01-01', 'yesterday', ''),
  fc.integer(),
);
const value = fc.oneof(fc.double(), fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.constant(-0), fc.constant({ a: 1 }), fc.constant([1, 2]));
const instance = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant('Property'), value, observedAt }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('Property', 'Relationship', 'GeoProperty', 'property'), value, observedAt }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Property'), value, observedAt, unitCode: fc.constant('CEL') }) },
  { weight: 1, arbitrary: fc.record({ value, observedAt }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Property'), value }) },
);
const name = fc.constantFrom('temperature', 'humidity', 'location', 'https://example.org/ns#x', 'bad name', '@id', 'id');

describe('temporal instances of plain values', () => {
  it('make exactly what the generic parser makes of the same body, and fail as it fails', () => {
    fc.assert(fc.property(fc.dictionary(name, fc.array(instance, { minLength: 1, maxLength: 6 }), { maxKeys: 3 }), (body) => {
      expect(outcome(() => parseTemporalAttributes(body, mapper, NOW))).toEqual(outcome(() => generic(body, mapper, NOW)));
    }), { numRuns: fuzzRuns(3_000) });
  });

  it('takes the short way for the usual ingest body', () => {
    const body = { temperature: Array.from({ length: 3 }, (_, i) => ({ type: 'Property', value: 20 + i, observedAt: new Date(NOW - i * 1000).toISOString() })) };
    const parsed = parseTemporalAttributes(body, mapper, NOW);
    expect(parsed).toEqual(generic(body, mapper, NOW));
    expect(parsed.map((p) => p.attribute.observedAt)).toEqual([NOW, NOW - 1000, NOW - 2000]);
  });
});
