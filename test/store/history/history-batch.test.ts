// Bulk history writes go in several rows to a statement, the instance id decoded by SQLite; one at a
// time they go in row by row, the id encoded in JavaScript. Both must store the very same rows.

import fc from 'fast-check';
import { fuzzRuns } from '../../helpers/fuzz-runs.js';
import { describe, expect, it } from 'vitest';
import type { HistoryInstance, Store } from '../../../src/store/index.js';
import { ROWS_PER_INSERT } from '../../../src/store/history/buckets.js';
import { fileStore, rawRead, T0, tempDir } from '../helpers.js';

const ATTR = 'https://example.org/ns/temperature';
const PREFIX = 'urn:ngsi-ld:Instance:';
const DAY = 86_400_000;

const hex = (n: number, upper: boolean): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...(upper ? '0123456789ABCDEF' : '0123456789abcdef')), { minLength: n, maxLength: n }).map((a) => a.join(''));
const uuid = (upper: boolean): fc.Arbitrary<string> =>
  fc.tuple(hex(8, upper), hex(4, upper), hex(4, upper), hex(4, upper), hex(12, upper)).map((p) => p.join('-'));

/** Ids stored as 16 bytes (canonical) and ids stored as text (every near miss, and anything else). */
const instanceId = fc.oneof(
  { weight: 6, arbitrary: uuid(false).map((u) => PREFIX + u) },
  uuid(true).map((u) => PREFIX + u),
  uuid(false).map((u) => PREFIX + u.replaceAll('-', '_')),
  uuid(false).map((u) => `${PREFIX}${u}0`),
  uuid(false).map((u) => `urn:ngsi-ld:Other:${u}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
);

interface Draft { entity: number; id: string; day: number; offset: number; value: number | string | boolean; plain: boolean; written: number }

const draft = fc.record({
  entity: fc.integer({ min: 0, max: 2 }),
  id: instanceId,
  // Mostly one day (rows of one bucket table in a row fill whole statements), sometimes another
  // month's table mid-batch; instants sometimes repeat.
  day: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, fc.integer({ min: 0, max: 45 })),
  offset: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 100_000 }) }, fc.integer({ min: 0, max: 3 })),
  value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 8 }), fc.boolean()),
  plain: fc.boolean(),
  // Written at different instants (hours apart): the buckets' bounds of createdAt and modifiedAt.
  written: fc.integer({ min: -3, max: 3 }).map((h) => h * 3_600_000),
});

function instanceOf(d: Draft): HistoryInstance {
  const observedAt = T0 + d.day * DAY + d.offset * 1000;
  const extra = d.plain ? {} : { unitCode: 'CEL' };
  return {
    entityId: `urn:ngsi-ld:Device:b${d.entity}`, attr: ATTR, instanceId: d.id, observedAt, createdAt: T0 + d.written, modifiedAt: T0 + 2 * d.written,
    attribute: { kind: 'Property', value: d.value, observedAt, createdAt: T0 + d.written, modifiedAt: T0 + 2 * d.written, sub: {}, ...extra },
  };
}

/**
 * Every stored history row, in bucket and insertion order, with the instance id's type and bytes,
 * then the buckets' catalogued time bounds.
 */
function storedRows(file: string): { rows: unknown[]; buckets: unknown[] } {
  return rawRead(file, (db) => ({
    rows: db.prepare<[], { name: string }>('SELECT name FROM history_buckets ORDER BY start_ms').all().flatMap(({ name }) =>
      db.prepare(`SELECT series, t, observed_at, created_at, modified_at, deleted_at, typeof(instance_id) AS kind, hex(instance_id) AS id,
        value, num, sub FROM ${name} ORDER BY rowid`).all()),
    buckets: db.prepare('SELECT * FROM history_buckets ORDER BY start_ms').all(),
  }));
}

function withStores(run: (bulk: Store, single: Store) => void): { bulk: ReturnType<typeof storedRows>; single: ReturnType<typeof storedRows> } {
  const a = tempDir();
  const b = tempDir();
  try {
    const bulk = fileStore(a.file);
    const single = fileStore(b.file);
    try {
      run(bulk, single);
    } finally {
      bulk.close();
      single.close();
    }
    return { bulk: storedRows(a.file), single: storedRows(b.file) };
  } finally {
    a.cleanup();
    b.cleanup();
  }
}

describe('bulk history rows', () => {
  // Measurements come mostly in time order (an earlier instant of a series ends a statement).
  const inOrder = (drafts: Draft[]): Draft[] => [...drafts].sort((a, b) => a.day - b.day || a.offset - b.offset);
  const writes: Array<[string, (store: Store, instances: HistoryInstance[]) => void]> = [
    ['observed upserts', (store, instances) => store.history.upsertObserved('', instances)],
    ['appends', (store, instances) => store.history.append('', instances)],
  ];
  for (const [name, write] of writes) {
    it(`are the rows that writing each instance alone stores (${name})`, () => {
      fc.assert(fc.property(fc.array(draft, { maxLength: 4 * ROWS_PER_INSERT + 5, size: 'max' }), fc.boolean(), (drafts, sorted) => {
        const instances = (sorted ? inOrder(drafts) : drafts).map(instanceOf);
        const { bulk, single } = withStores((b, s) => {
          write(b, instances);
          for (const i of instances) write(s, [i]);
        });
        expect(bulk).toEqual(single);
      }), { numRuns: fuzzRuns(60), endOnFailure: true });
    });
  }

  it('store a canonical id as its 16 bytes and any other id as its text', () => {
    const ids = Array.from({ length: ROWS_PER_INSERT + 1 }, (_, i) => `${PREFIX}0192f3a4-5b6c-7d8e-9f01-${String(i).padStart(12, '0')}`);
    ids[3] = `${PREFIX}0192F3A4-5B6C-7D8E-9F01-000000000003`;
    const instances = ids.map((id, i) => instanceOf({ entity: 0, id, day: 0, offset: i, value: i, plain: true, written: 0 }));
    const { bulk } = withStores((b) => b.history.upsertObserved('', instances));
    const stored = bulk.rows as Array<{ kind: string; id: string }>;
    expect(stored).toHaveLength(ids.length);
    expect(stored[0]).toMatchObject({ kind: 'blob', id: '0192F3A45B6C7D8E9F01000000000000' });
    expect(stored[3]).toMatchObject({ kind: 'text', id: Buffer.from(ids[3]!).toString('hex').toUpperCase() });
    expect(stored[ROWS_PER_INSERT]).toMatchObject({ kind: 'blob', id: `0192F3A45B6C7D8E9F01${String(ROWS_PER_INSERT).padStart(12, '0')}` });
  });

  it('leave one instance per series and instant, the last given, when a batch repeats an instant', () => {
    const at = (k: number): HistoryInstance => instanceOf({ entity: 0, id: `${PREFIX}0192f3a4-5b6c-7d8e-9f01-${String(k).padStart(12, '0')}`, day: 0, offset: k % 3, value: k, plain: true, written: 0 });
    const instances = Array.from({ length: 2 * ROWS_PER_INSERT }, (_, k) => at(k));
    const { bulk } = withStores((b) => b.history.upsertObserved('', instances));
    expect((bulk.rows as Array<{ num: number }>).map((r) => r.num)).toEqual([2 * ROWS_PER_INSERT - 3, 2 * ROWS_PER_INSERT - 2, 2 * ROWS_PER_INSERT - 1]);
  });
});
