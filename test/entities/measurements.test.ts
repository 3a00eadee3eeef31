// Measurements of one entity by one actor that arrive before their write runs join that write: the
// entity is written once and journalled as one change holding every instance, each message is still
// answered after the commit, and a joint write that fails is retried message by message.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMeasurementService, createWriteCore, type Measurement, type MeasurementService } from '../../src/entities/index.js';
import { createChangeEmitter } from '../../src/events.js';
import { createFixedClock, uuid } from '../../src/lib/index.js';
import { DEFAULT_CONTEXT_VOCAB as V, anonymousIn, type EntityId, type ObservedInstance } from '../../src/ngsi/index.js';
import type { Store } from '../../src/store/index.js';
import { memoryStore, T0 } from '../store/helpers.js';

const ID = 'urn:ngsi-ld:Device:m1' as EntityId;
const OTHER = 'urn:ngsi-ld:Device:m2' as EntityId;
const TEMP = `${V}temperature`;
const actor = anonymousIn('');

const reading = (value: number, observedAt: number): ObservedInstance => ({
  attr: TEMP, attribute: { kind: 'Property', value, observedAt, createdAt: T0, modifiedAt: T0, sub: {} },
});
const measurement = (id: EntityId, ...instances: ObservedInstance[]): Measurement => ({ entityId: id, types: [`${V}Device`], instances });

describe('measurement writes', () => {
  let store: Store;
  let service: MeasurementService;
  let commits: number;

  beforeEach(() => {
    store = memoryStore();
    const events = createChangeEmitter(() => undefined);
    service = createMeasurementService({ core: createWriteCore({ store, events, clock: createFixedClock(T0) }), newId: uuid });
    commits = 0;
    const write = store.write.bind(store);
    // Counts the writes the store runs (each message alone would be one).
    store.write = (fn) => write((tx) => {
      commits += 1;
      return fn(tx);
    });
  });
  afterEach(() => store.close());

  it('joins the measurements of one entity sent together into one write and one change, with every instance', async () => {
    const before = store.journal.lastSeq();
    const results = await Promise.all([
      service.record(actor, measurement(ID, reading(20, T0 + 1)), { create: true }),
      service.record(actor, measurement(ID, reading(22, T0 + 3)), { create: true }),
      service.record(actor, measurement(ID, reading(21, T0 + 2)), { create: true }),
      service.record(actor, measurement(OTHER, reading(5, T0 + 1)), { create: true }),
    ]);
    expect(results).toEqual([{ created: true }, { created: false }, { created: false }, { created: true }]);
    expect(commits).toBe(2);
    const changes = store.journal.readAfter(before, 100, { instances: true });
    expect(changes.map((c) => [c.id, c.kind, c.instances?.length])).toEqual([[ID, 'entityCreated', 3], [OTHER, 'entityCreated', 1]]);
    // Every instance is history; the newest observedAt is the current state, whatever the arrival order.
    expect(store.history.listForEntity({ tenant: '' }, ID, TEMP).map((i) => i.attribute?.kind === 'Property' && i.attribute.value).sort()).toEqual([20, 21, 22]);
    expect(store.entities.get({ tenant: '' }, ID)?.attrs[TEMP]?.[0]).toMatchObject({ value: 22, observedAt: T0 + 3 });
  });

  it('writes each message alone when the joint write fails, so one bad message fails alone', async () => {
    // An instant no history bucket can hold fails its write (ingestion refuses it before; this service does not).
    const settled = await Promise.allSettled([
      service.record(actor, measurement(ID, reading(20, T0 + 1)), { create: true }),
      service.record(actor, measurement(ID, reading(99, Number.NaN)), { create: true }),
      service.record(actor, measurement(ID, reading(22, T0 + 3)), { create: true }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(store.history.listForEntity({ tenant: '' }, ID, TEMP).map((i) => i.attribute?.kind === 'Property' && i.attribute.value).sort()).toEqual([20, 22]);
    expect(store.entities.get({ tenant: '' }, ID)?.attrs[TEMP]?.[0]).toMatchObject({ value: 22 });
  });

  it('never joins a write that has already run: a later measurement gets a write of its own', async () => {
    await service.record(actor, measurement(ID, reading(20, T0 + 1)), { create: true });
    const second = await service.record(actor, measurement(ID, reading(21, T0 + 2)), { create: true });
    expect(second).toEqual({ created: false });
    expect(commits).toBe(2);
  });

  it('answers an entity that does not exist with 404 for every message of a group that may not create it', async () => {
    const settled = await Promise.allSettled([
      service.record(actor, measurement(ID, reading(20, T0 + 1)), { create: false }),
      service.record(actor, measurement(ID, reading(21, T0 + 2)), { create: false }),
    ]);
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as { status?: number }).status : 'ok'))).toEqual([404, 404]);
  });
});
