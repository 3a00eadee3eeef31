import { describe, expect, it } from 'vitest';
import {
  BadRequestDataError, LOCATION, ResourceNotFoundError, appendAttributes, deleteAttribute, mergeEntity, parseAttributeFragment,
  parseAttributes, parseEntity, parseEntityFragment, replaceAttribute, replaceEntity, updateAttributePartial,
  updateAttributes, type Entity,
} from '../../src/ngsi/index.js';
import { EX, T0, T1, dc, mapper } from './fake-mapper.js';

const TEMP = EX + 'temperature';
const entity: Entity = parseEntity({
  id: 'urn:ngsi-ld:Building:1', type: 'Building', scope: '/A',
  temperature: { value: 20, unitCode: 'CEL', accuracy: 0.5, source: 'a' },
  speed: [{ value: 1 }, { value: 2, datasetId: 'urn:d:gps' }],
  rel: { object: 'urn:a:1', objectType: 'Thing' },
  location: { type: 'Point', coordinates: [1, 2] },
}, mapper, { now: T0 });
const frozen = structuredClone(entity);
const attrs = (body: unknown, allowNull = true) => parseAttributes(body, mapper, { now: T1, allowNull });
const merge = (body: unknown) => mergeEntity(entity, parseEntityFragment(body, mapper, { now: T1 }), T1);
const partial = (attr: string, body: unknown) => updateAttributePartial(entity, attr, parseAttributeFragment(body, mapper, { now: T1 }), T1);

describe('appendAttributes [§5.6.3]', () => {
  it('adds new attributes and instances, replaces same-datasetId ones keeping createdAt', () => {
    const out = appendAttributes(entity, attrs({ humidity: 40, speed: { value: 3, datasetId: 'urn:d:gps' }, temperature: 21 }), { noOverwrite: false, now: T1 });
    expect(out.entity.attrs[dc('humidity')]).toMatchObject([{ value: 40, createdAt: T1, modifiedAt: T1 }]);
    expect(out.entity.attrs[dc('speed')]).toMatchObject([{ value: 1, modifiedAt: T0 }, { value: 3, createdAt: T0, modifiedAt: T1 }]);
    expect(out.entity.attrs[TEMP]).toMatchObject([{ value: 21, createdAt: T0, modifiedAt: T1, sub: {} }]);
    expect(out.updated).toEqual([dc('humidity'), dc('speed'), TEMP]);
    expect(out.notUpdated).toEqual([]);
    expect(out.entity.modifiedAt).toBe(T1);
    expect(out.entity.createdAt).toBe(T0);
    expect(out.changes.map((c) => [c.attr, c.instance?.datasetId])).toEqual([[dc('humidity'), undefined], [dc('speed'), 'urn:d:gps'], [TEMP, undefined]]);
    expect(entity).toEqual(frozen);
  });

  it('keeps existing instances with noOverwrite and reports them', () => {
    const out = appendAttributes(entity, attrs({ temperature: 30, speed: { value: 9, datasetId: 'urn:d:new' } }), { noOverwrite: true, now: T1 });
    expect(out.entity.attrs[TEMP]).toEqual(entity.attrs[TEMP]);
    expect(out.entity.attrs[dc('speed')]).toHaveLength(3);
    expect(out.notUpdated).toEqual([{ attr: TEMP, reason: 'attribute already exists and noOverwrite is set' }]);
    expect(out.updated).toEqual([dc('speed')]);
  });

  it('returns the same entity when nothing changed', () => {
    const out = appendAttributes(entity, attrs({ temperature: 30 }), { noOverwrite: true, now: T1 });
    expect(out.entity).toBe(entity);
    expect(out.changes).toEqual([]);
  });
});

describe('updateAttributes [§5.6.2]', () => {
  it('replaces existing instances and reports missing ones with a reason', () => {
    const out = updateAttributes(entity, attrs({
      temperature: { value: 22, accuracy: 0.7 }, humidity: 1, speed: { value: 5, datasetId: 'urn:d:none' },
    }), T1);
    expect(out.entity.attrs[TEMP]).toMatchObject([{ value: 22, createdAt: T0, modifiedAt: T1 }]);
    expect(out.entity.attrs[TEMP]![0]!.sub[dc('accuracy')]).toMatchObject({ value: 0.7, createdAt: T0, modifiedAt: T1 });
    expect(out.entity.attrs[TEMP]![0]!.unitCode).toBeUndefined();
    expect(out.entity.attrs[dc('humidity')]).toBeUndefined();
    expect(out.updated).toEqual([TEMP]);
    expect(out.notUpdated).toEqual([
      { attr: dc('humidity'), reason: 'attribute does not exist' },
      { attr: dc('speed'), reason: 'attribute has no instance with datasetId urn:d:none' },
    ]);
  });

  it('deletes instances given as NGSI-LD Null', () => {
    const out = updateAttributes(entity, attrs({ rel: 'urn:ngsi-ld:null', speed: { value: 'urn:ngsi-ld:null', datasetId: 'urn:d:gps' } }), T1);
    expect(out.entity.attrs[dc('rel')]).toBeUndefined();
    expect(out.entity.attrs[dc('speed')]).toHaveLength(1);
    expect(out.changes).toEqual([{ attr: dc('rel'), deleted: true }, { attr: dc('speed'), datasetId: 'urn:d:gps', deleted: true }]);
  });

  it('reports a deletion of something missing', () => {
    expect(updateAttributes(entity, attrs({ nope: 'urn:ngsi-ld:null' }), T1).notUpdated)
      .toEqual([{ attr: dc('nope'), reason: 'attribute does not exist' }]);
  });
});

describe('mergeEntity [§5.6.17]', () => {
  it('merges given members into the existing instance and keeps the others', () => {
    const out = merge({ temperature: { value: 25, observedAt: '2024-01-01T00:00:00Z', accuracy: 0.9, source: 'urn:ngsi-ld:null', extra: 1 } });
    const [t] = out.entity.attrs[TEMP]!;
    expect(t).toMatchObject({ kind: 'Property', value: 25, unitCode: 'CEL', observedAt: T0, createdAt: T0, modifiedAt: T1 });
    expect(Object.keys(t!.sub)).toEqual([dc('accuracy'), dc('extra')]);
    expect(t!.sub[dc('accuracy')]).toMatchObject({ value: 0.9, createdAt: T0, modifiedAt: T1 });
    expect(t!.sub[dc('extra')]).toMatchObject({ value: 1, createdAt: T1 });
    expect(out.updated).toEqual([TEMP]);
  });

  it('keeps the payload when only metadata is given, and keeps objectType', () => {
    const out = merge({ rel: { unitCode: 'X' }, location: { observedAt: '2024-01-01T00:00:00Z' } });
    expect(out.entity.attrs[dc('rel')]).toMatchObject([{ kind: 'Relationship', object: 'urn:a:1', objectType: dc('Thing'), unitCode: 'X' }]);
    expect(out.entity.attrs[LOCATION]).toMatchObject([{ kind: 'GeoProperty', value: { type: 'Point', coordinates: [1, 2] }, observedAt: T0 }]);
  });

  it('keeps the kind unless type is given', () => {
    expect(merge({ rel: { value: 3 } }).notUpdated).toEqual([{ attr: dc('rel'), reason: "the attribute is a Relationship: give 'type' to change its kind" }]);
    expect(merge({ rel: { type: 'Property', value: 3 } }).entity.attrs[dc('rel')]).toMatchObject([{ kind: 'Property', value: 3 }]);
    expect(merge({ location: { value: 5 } }).notUpdated[0]!.reason).toMatch(/invalid GeoProperty value/);
    expect(merge({ rel: { type: 'Property' } }).notUpdated[0]!.reason).toMatch(/needs a 'value' member/);
  });

  it('adds absent attributes, deletes NGSI-LD Null ones, adds types and replaces scope', () => {
    const out = merge({ type: ['Building', 'Shop'], scope: ['/B', '/C'], fresh: { vocab: 'Open' }, rel: 'urn:ngsi-ld:null', ghost: 'urn:ngsi-ld:null' });
    expect(out.entity.types).toEqual([EX + 'Building', dc('Shop')]);
    expect(out.entity.scope).toEqual(['/B', '/C']);
    expect(out.entity.attrs[dc('fresh')]).toMatchObject([{ kind: 'VocabProperty', vocab: dc('Open'), createdAt: T1 }]);
    expect(out.entity.attrs[dc('rel')]).toBeUndefined();
    expect(out.notUpdated).toEqual([{ attr: dc('ghost'), reason: 'attribute does not exist' }]);
    expect(entity).toEqual(frozen);
  });

  it('removes the scope with NGSI-LD Null and touches modifiedAt for entity-level changes only', () => {
    const out = merge({ scope: 'urn:ngsi-ld:null' });
    expect(out.entity.scope).toBeUndefined();
    expect('scope' in out.entity).toBe(false);
    expect(out.entity.modifiedAt).toBe(T1);
    expect(out.changes).toEqual([]);
    expect(merge({ type: 'Building', scope: '/A' }).entity).toBe(entity);
  });

  it('reports a new attribute that cannot be built', () => {
    expect(merge({ fresh: { unitCode: 'X' } }).notUpdated[0]).toMatchObject({ attr: dc('fresh'), reason: expect.stringMatching(/no value/) });
  });
});

describe('replaceEntity [§5.6.18]', () => {
  it('keeps id and createdAt, takes everything else from the replacement as new', () => {
    const replacement = parseEntity({ id: entity.id, type: 'Shop', other: { value: 1, s: 2 } }, mapper, { now: T0 });
    const out = replaceEntity(entity, replacement, T1);
    expect(out).toEqual({
      id: entity.id, types: [dc('Shop')], createdAt: T0, modifiedAt: T1,
      attrs: { [dc('other')]: [{ kind: 'Property', value: 1, createdAt: T1, modifiedAt: T1, sub: { [dc('s')]: { kind: 'Property', value: 2, createdAt: T1, modifiedAt: T1, sub: {} } } }] },
    });
  });
});

describe('updateAttributePartial [§5.6.4]', () => {
  it('changes only the given members of the selected instance', () => {
    const out = partial(dc('speed'), { value: 7, datasetId: 'urn:d:gps' });
    expect(out.entity.attrs[dc('speed')]).toMatchObject([{ value: 1 }, { value: 7, datasetId: 'urn:d:gps', createdAt: T0, modifiedAt: T1 }]);
    expect(out.changes).toHaveLength(1);
  });

  it('deletes the instance or a sub-attribute with NGSI-LD Null', () => {
    expect(partial(TEMP, { value: 'urn:ngsi-ld:null' }).entity.attrs[TEMP]).toBeUndefined();
    const out = partial(TEMP, { accuracy: 'urn:ngsi-ld:null' });
    expect(out.entity.attrs[TEMP]).toMatchObject([{ value: 20, unitCode: 'CEL' }]);
    expect(Object.keys(out.entity.attrs[TEMP]![0]!.sub)).toEqual([dc('source')]);
  });

  it('throws ResourceNotFound for a missing attribute or datasetId, BadRequestData for a kind clash', () => {
    expect(() => partial(dc('nope'), { value: 1 })).toThrow(ResourceNotFoundError);
    expect(() => partial(dc('speed'), { value: 1, datasetId: 'urn:d:x' })).toThrow(ResourceNotFoundError);
    expect(() => partial(dc('rel'), { value: 1 })).toThrow(BadRequestDataError);
  });
});

describe('replaceAttribute [§5.6.19]', () => {
  it('replaces the instance whole, keeping createdAt', () => {
    const [a] = attrs({ temperature: { value: 1 } }, false)[TEMP]!;
    const out = replaceAttribute(entity, TEMP, a!, T1);
    expect(out.entity.attrs[TEMP]).toEqual([{ kind: 'Property', value: 1, createdAt: T0, modifiedAt: T1, sub: {} }]);
  });

  it('throws ResourceNotFound when the attribute or datasetId is missing', () => {
    const [a] = attrs({ x: { value: 1, datasetId: 'urn:d:x' } }, false)[dc('x')]!;
    expect(() => replaceAttribute(entity, dc('x'), a!, T1)).toThrow(ResourceNotFoundError);
    expect(() => replaceAttribute(entity, dc('speed'), a!, T1)).toThrow(/no instance with datasetId urn:d:x/);
  });
});

describe('deleteAttribute [§5.6.5]', () => {
  it('deletes the default instance, one datasetId, or all', () => {
    expect(deleteAttribute(entity, dc('speed'), { now: T1 }).entity.attrs[dc('speed')]).toMatchObject([{ datasetId: 'urn:d:gps' }]);
    expect(deleteAttribute(entity, dc('speed'), { datasetId: 'urn:d:gps', now: T1 }).entity.attrs[dc('speed')]).toMatchObject([{ value: 1 }]);
    const all = deleteAttribute(entity, dc('speed'), { deleteAll: true, now: T1 });
    expect(all.entity.attrs[dc('speed')]).toBeUndefined();
    expect(all.changes).toEqual([{ attr: dc('speed'), deleted: true }, { attr: dc('speed'), datasetId: 'urn:d:gps', deleted: true }]);
    expect(all.entity.modifiedAt).toBe(T1);
  });

  it('throws ResourceNotFound when nothing matches', () => {
    expect(() => deleteAttribute(entity, dc('nope'), { now: T1 })).toThrow(ResourceNotFoundError);
    expect(() => deleteAttribute(entity, dc('nope'), { deleteAll: true, now: T1 })).toThrow(ResourceNotFoundError);
    expect(() => deleteAttribute(entity, dc('speed'), { datasetId: 'urn:d:x', now: T1 })).toThrow(ResourceNotFoundError);
    expect(() => deleteAttribute(entity, TEMP, { datasetId: 'urn:d:x', now: T1 })).toThrow(ResourceNotFoundError);
  });
});
