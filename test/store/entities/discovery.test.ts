// The discovery repository and the attribute-kinds index: answers follow inserts, updates, soft
// deletes and re-creates; tenants stay apart; migration 4 backfills entities written before it.

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import type { Attribute } from '../../../src/ngsi/index.js';
import type { Store } from '../../../src/store/index.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import { entity, everyKind, memoryStore, NS, property, T0 } from '../helpers.js';

const ROOM = NS + 'Room';
const PLACE = NS + 'Place';
const id = (n: number): string => `urn:ngsi-ld:Room:${n}`;
const geo = (): Attribute => ({ kind: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] }, createdAt: T0, modifiedAt: T0, sub: {} });
const rel = (datasetId?: string): Attribute => ({
  kind: 'Relationship', object: 'urn:x', createdAt: T0, modifiedAt: T0, sub: {}, ...(datasetId ? { datasetId } : {}),
});

let store: Store;
beforeEach(() => {
  store = memoryStore();
});
afterEach(() => store.close());

describe('discovery: types', () => {
  it('lists the types of live entities once each, with their attributes', () => {
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)] }));
    store.entities.insert('', entity(id(2), [ROOM, PLACE], { [NS + 'b']: [property(2)] }));
    store.entities.insert('', entity(id(3), [NS + 'Empty']));
    expect(store.discovery.types({ tenant: '' })).toEqual([NS + 'Empty', PLACE, ROOM]);
    expect(store.discovery.typesWithAttributes({ tenant: '' })).toEqual([
      { type: NS + 'Empty', attrs: [] },
      { type: PLACE, attrs: [NS + 'b'] },
      { type: ROOM, attrs: [NS + 'a', NS + 'b'] },
    ]);
  });

  it('gives the entity count and the kinds of each attribute of one type', () => {
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)], [NS + 'loc']: [geo()] }));
    store.entities.insert('', entity(id(2), [ROOM], { [NS + 'a']: [rel()] }));
    store.entities.insert('', entity(id(3), [PLACE], { [NS + 'z']: [property(1)] }));
    expect(store.discovery.typeInfo({ tenant: '' }, ROOM)).toEqual({
      type: ROOM, entityCount: 2,
      attrs: [{ attr: NS + 'a', kinds: ['Property', 'Relationship'] }, { attr: NS + 'loc', kinds: ['GeoProperty'] }],
    });
    expect(store.discovery.typeInfo({ tenant: '' }, NS + 'Unknown')).toBeUndefined();
  });

  it('forgets a type when its last entity is deleted, and learns it again on re-create', () => {
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)] }));
    store.entities.insert('', entity(id(2), [ROOM]));
    store.entities.markDeleted('', id(1), T0 + 1);
    expect(store.discovery.typeInfo({ tenant: '' }, ROOM)).toEqual({ type: ROOM, entityCount: 1, attrs: [] });
    store.entities.markDeleted('', id(2), T0 + 1);
    expect(store.discovery.types({ tenant: '' })).toEqual([]);
    expect(store.discovery.typeInfo({ tenant: '' }, ROOM)).toBeUndefined();
    expect(store.discovery.attributes({ tenant: '' })).toEqual([]);
    store.entities.insert('', entity(id(1), [PLACE], { [NS + 'b']: [property(1)] }));
    expect(store.discovery.types({ tenant: '' })).toEqual([PLACE]);
    expect(store.discovery.attributes({ tenant: '' })).toEqual([NS + 'b']);
  });

  it('follows updates that change types and attributes', () => {
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)], [NS + 'b']: [property(2)] }));
    store.entities.update('', entity(id(1), [PLACE], { [NS + 'b']: [rel()], [NS + 'c']: [property(3)] }));
    expect(store.discovery.types({ tenant: '' })).toEqual([PLACE]);
    expect(store.discovery.typeInfo({ tenant: '' }, PLACE)?.attrs).toEqual([
      { attr: NS + 'b', kinds: ['Relationship'] }, { attr: NS + 'c', kinds: ['Property'] },
    ]);
  });

  it('keeps tenants apart', () => {
    store.entities.insert('a', entity(id(1), [ROOM], { [NS + 'x']: [property(1)] }));
    store.entities.insert('b', entity(id(1), [PLACE]));
    expect(store.discovery.types({ tenant: 'a' })).toEqual([ROOM]);
    expect(store.discovery.types({ tenant: 'b' })).toEqual([PLACE]);
    expect(store.discovery.attributes({ tenant: 'b' })).toEqual([]);
    expect(store.discovery.typeInfo({ tenant: 'b' }, ROOM)).toBeUndefined();
  });
});

describe('discovery: attributes', () => {
  it('gives kinds, entity types and the number of instances of each attribute', () => {
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1), property(2, { datasetId: 'urn:ds:1' })] }));
    store.entities.insert('', entity(id(2), [PLACE, ROOM], { [NS + 'a']: [rel('urn:ds:2')], [NS + 'b']: [geo()] }));
    expect(store.discovery.attributes({ tenant: '' })).toEqual([NS + 'a', NS + 'b']);
    expect(store.discovery.attributeInfos({ tenant: '' })).toEqual([
      { attr: NS + 'a', kinds: ['Property', 'Relationship'], types: [PLACE, ROOM], instanceCount: 3 },
      { attr: NS + 'b', kinds: ['GeoProperty'], types: [PLACE, ROOM], instanceCount: 1 },
    ]);
    expect(store.discovery.attributeInfos({ tenant: '' }, NS + 'b')).toEqual([
      { attr: NS + 'b', kinds: ['GeoProperty'], types: [PLACE, ROOM], instanceCount: 1 },
    ]);
    expect(store.discovery.attributeInfos({ tenant: '' }, NS + 'never')).toEqual([]);
  });

  it('recounts instances when a multi-attribute gains or loses one', () => {
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)] }));
    store.entities.update('', entity(id(1), [ROOM], { [NS + 'a']: [property(1), property(2, { datasetId: 'urn:ds:1' })] }));
    expect(store.discovery.attributeInfos({ tenant: '' }, NS + 'a')[0]?.instanceCount).toBe(2);
    store.entities.update('', entity(id(1), [ROOM], { [NS + 'a']: [property(2, { datasetId: 'urn:ds:1' })] }));
    expect(store.discovery.attributeInfos({ tenant: '' }, NS + 'a')[0]?.instanceCount).toBe(1);
    store.entities.markDeleted('', id(1), T0 + 1);
    expect(store.discovery.attributeInfos({ tenant: '' }, NS + 'a')).toEqual([]);
  });

  it('knows every attribute kind', () => {
    store.entities.insert('', entity(id(1), [ROOM], everyKind()));
    const kinds = new Set(store.discovery.attributeInfos({ tenant: '' }).flatMap((i) => i.kinds));
    expect([...kinds].sort()).toEqual([
      'GeoProperty', 'JsonProperty', 'LanguageProperty', 'ListProperty', 'ListRelationship', 'Property', 'Relationship', 'VocabProperty',
    ]);
  });
});

describe('migration 4', () => {
  it('backfills the kinds of live entities written before it', () => {
    const db = new Database(':memory:');
    try {
      runMigrations(db, MIGRATIONS.slice(0, 3), silentLogger);
      const doc = (attrs: Record<string, Attribute[]>): string => JSON.stringify({ types: [ROOM], attrs });
      db.prepare('INSERT INTO iris (id, iri) VALUES (1, ?), (2, ?)').run(NS + 'a', NS + 'b');
      const insert = db.prepare('INSERT INTO entities (rowid, tenant, id, doc, created_at, modified_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
      insert.run(1, '', id(1), doc({ [NS + 'a']: [property(1), rel('urn:ds:1')], [NS + 'b']: [geo()] }), T0, T0, null);
      insert.run(2, '', id(2), doc({ [NS + 'a']: [property(1)] }), T0, T0, T0 + 1);
      runMigrations(db, MIGRATIONS, silentLogger);
      const rows = db.prepare('SELECT entity, attr, kind, instances FROM entity_attr_kinds ORDER BY entity, attr, kind').all();
      expect(rows).toEqual([
        { entity: 1, attr: 1, kind: 1, instances: 1 },
        { entity: 1, attr: 1, kind: 2, instances: 1 },
        { entity: 1, attr: 2, kind: 3, instances: 1 },
      ]);
    } finally {
      db.close();
    }
  });
});
