// Entity repository: round trip, soft delete and re-create, AlreadyExists, type/attribute indexes, reopen.

import { beforeEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError } from '../../../src/ngsi/index.js';
import { entity, everyKind, fileStore, memoryStore, NS, property, rawRead, T0, tempDir } from '../helpers.js';

const ROOM = NS + 'Room';
const id = (n: number): string => `urn:ngsi-ld:Room:${n}`;

describe('store entities: CRUD', () => {
  it('round-trips an entity with every attribute kind to an equal object', () => {
    const store = memoryStore();
    const e = { ...entity(id(1), [ROOM, NS + 'Place'], everyKind()), scope: ['/Madrid/Gardens', '/Paris'] };
    store.entities.insert('', e);
    expect(store.entities.get({ tenant: '' }, id(1))).toEqual(e);
    store.close();
  });

  it('answers exists, get and getMany for live entities only', () => {
    const store = memoryStore();
    store.entities.insert('', entity(id(1), [ROOM]));
    store.entities.insert('', entity(id(2), [ROOM]));
    expect(store.entities.exists({ tenant: '' }, id(1))).toBe(true);
    expect(store.entities.exists({ tenant: '' }, id(3))).toBe(false);
    expect(store.entities.get({ tenant: '' }, id(3))).toBeUndefined();
    const many = store.entities.getMany({ tenant: '' }, [id(1), id(2), id(3)]);
    expect([...many.keys()].sort()).toEqual([id(1), id(2)]);
    expect(store.entities.markDeleted('', id(2), T0 + 1)).toBe(true);
    expect(store.entities.getMany({ tenant: '' }, [id(1), id(2)]).has(id(2))).toBe(false);
    expect(store.entities.getMany({ tenant: '' }, []).size).toBe(0);
    store.close();
  });

  it('throws AlreadyExistsError when a live entity has the id', () => {
    const store = memoryStore();
    store.entities.insert('', entity(id(1), [ROOM]));
    expect(() => store.entities.insert('', entity(id(1), [NS + 'Other']))).toThrow(AlreadyExistsError);
    expect(store.entities.get({ tenant: '' }, id(1))?.types).toEqual([ROOM]);
    store.close();
  });

  it('keeps tenants apart', () => {
    const store = memoryStore();
    store.entities.insert('a', entity(id(1), [ROOM]));
    store.entities.insert('b', entity(id(1), [NS + 'Other']));
    expect(store.entities.get({ tenant: 'a' }, id(1))?.types).toEqual([ROOM]);
    expect(store.entities.get({ tenant: 'b' }, id(1))?.types).toEqual([NS + 'Other']);
    expect(store.entities.get({ tenant: '' }, id(1))).toBeUndefined();
    store.close();
  });

  it('soft-deletes, then lets the same id be created again', () => {
    const store = memoryStore();
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)] }));
    expect(store.entities.markDeleted('', id(1), T0 + 10)).toBe(true);
    expect(store.entities.markDeleted('', id(1), T0 + 11)).toBe(false);
    expect(store.entities.get({ tenant: '' }, id(1))).toBeUndefined();
    expect(store.entities.exists({ tenant: '' }, id(1))).toBe(false);
    expect(store.entities.update('', entity(id(1), [ROOM]))).toBe(false);
    const again = entity(id(1), [NS + 'Other'], { [NS + 'b']: [property('x')] }, T0 + 20);
    store.entities.insert('', again);
    expect(store.entities.get({ tenant: '' }, id(1))).toEqual(again);
    expect(() => store.entities.insert('', again)).toThrow(AlreadyExistsError);
    store.close();
  });

  it('replaces the document on update and reports a missing entity', () => {
    const store = memoryStore();
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)] }));
    const next = { ...entity(id(1), [NS + 'Other'], { [NS + 'b']: [property(2)] }), modifiedAt: T0 + 5 };
    expect(store.entities.update('', next)).toBe(true);
    expect(store.entities.get({ tenant: '' }, id(1))).toEqual(next);
    expect(store.entities.update('', entity(id(9), [ROOM]))).toBe(false);
    store.close();
  });
});

describe('store entities: type and attribute indexes', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
    return tmp.cleanup;
  });

  const indexRows = (table: string, column = 'iri'): Array<[string, string]> =>
    rawRead(tmp.file, (db) =>
      db.prepare<[], { id: string; iri: string }>(
        `SELECT DISTINCT e.id, i.iri FROM ${table} x JOIN entities e ON e.rowid = x.entity JOIN iris i ON i.id = x.${column} ORDER BY e.id, i.iri`,
      ).all().map((r): [string, string] => [r.id, r.iri]));

  it('stores each IRI once and keeps the type and attribute indexes in step with updates', () => {
    const store = fileStore(tmp.file);
    store.entities.insert('', entity(id(1), [ROOM], { [NS + 'a']: [property(1)], [NS + 'b']: [property(2)] }));
    store.entities.insert('', entity(id(2), [ROOM, NS + 'Place'], { [NS + 'a']: [property(3)] }));
    store.entities.update('', entity(id(1), [NS + 'Place'], { [NS + 'b']: [property(2)], [NS + 'c']: [property(4)] }));
    store.close();
    expect(indexRows('entity_types')).toEqual([[id(1), NS + 'Place'], [id(2), NS + 'Place'], [id(2), ROOM]]);
    expect(indexRows('entity_attr_kinds', 'attr')).toEqual([[id(1), NS + 'b'], [id(1), NS + 'c'], [id(2), NS + 'a']]);
    const iris = rawRead(tmp.file, (db) => db.prepare<[], string>('SELECT iri FROM iris ORDER BY iri').pluck().all());
    expect(iris).toEqual([NS + 'Place', ROOM, NS + 'a', NS + 'b', NS + 'c'].sort());
  });

  it('keeps the JSON document free of the members stored in columns', () => {
    const store = fileStore(tmp.file);
    store.entities.insert('', entity(id(1), [ROOM]));
    store.close();
    const doc = rawRead(tmp.file, (db) => db.prepare<[], string>('SELECT doc FROM entities').pluck().get());
    expect(doc).toBe(`{"types":["${ROOM}"],"attrs":{}}`);
  });

  it('persists entities across close and reopen', () => {
    const e = entity(id(1), [ROOM], everyKind());
    const first = fileStore(tmp.file);
    first.entities.insert('', e);
    first.close();
    const second = fileStore(tmp.file);
    expect(second.entities.get({ tenant: '' }, id(1))).toEqual(e);
    second.close();
  });
});
