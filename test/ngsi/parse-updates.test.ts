import { describe, expect, it } from 'vitest';
import {
  BadRequestDataError, isDeletion, parseAttribute, parseAttributeFragment, parseAttributes, parseEntityFragment,
  assertSameEntityId,
} from '../../src/ngsi/index.js';
import { EX, T0, dc, mapper } from './fake-mapper.js';

const opts = { now: T0, allowNull: true };

describe('parseAttributes: bodies of append and update [§5.6.2, §5.6.3]', () => {
  it('reads whole attributes and ignores entity members', () => {
    const attrs = parseAttributes({ id: 'urn:x:1', type: 'T', '@context': 'c', temperature: 20, s: { object: 'urn:a:1' } }, mapper, opts);
    expect(Object.keys(attrs)).toEqual([EX + 'temperature', dc('s')]);
    expect(attrs[EX + 'temperature']).toMatchObject([{ kind: 'Property', value: 20, createdAt: T0 }]);
  });

  it.each([
    ['a concise NGSI-LD Null', 'urn:ngsi-ld:null', [{ deleted: true }]],
    ['a Property value', { type: 'Property', value: 'urn:ngsi-ld:null' }, [{ deleted: true }]],
    ['an instance with datasetId', { value: 'urn:ngsi-ld:null', datasetId: 'urn:d:1' }, [{ deleted: true, datasetId: 'urn:d:1' }]],
    ['a Relationship object', { type: 'Relationship', object: 'urn:ngsi-ld:null' }, [{ deleted: true }]],
    ['a languageMap', { languageMap: { '@none': 'urn:ngsi-ld:null' } }, [{ deleted: true }]],
    ['a vocab', { vocab: 'urn:ngsi-ld:null' }, [{ deleted: true }]],
    ['a json', { json: 'urn:ngsi-ld:null' }, [{ deleted: true }]],
    ['a valueList', { valueList: ['urn:ngsi-ld:null'] }, [{ deleted: true }]],
    ['an objectList', { objectList: [{ object: 'urn:ngsi-ld:null' }] }, [{ deleted: true }]],
  ])('reads NGSI-LD Null in %s as a deletion', (_what, raw, expected) => {
    const attrs = parseAttributes({ t: raw }, mapper, opts);
    expect(attrs[dc('t')]).toEqual(expected);
    expect(attrs[dc('t')]!.every(isDeletion)).toBe(true);
  });

  it('refuses NGSI-LD Null without allowNull', () => {
    expect(() => parseAttributes({ t: 'urn:ngsi-ld:null' }, mapper, { now: T0, allowNull: false })).toThrow(/only allowed in updates/);
  });

  it('applies the multi-attribute rules to deletions too', () => {
    expect(() => parseAttributes({ t: [{ value: 'urn:ngsi-ld:null' }, { value: 2 }] }, mapper, opts)).toThrow(/more than one instance/);
  });

  it('checks the multi-attribute rules across names that expand to the same IRI', () => {
    expect(() => parseAttributes({ temperature: 1, [EX + 'temperature']: 2 }, mapper, opts)).toThrow(/more than one instance/);
  });

  it('refuses a body that is not an object', () => {
    expect(() => parseAttributes([1], mapper, opts)).toThrow(BadRequestDataError);
  });
});

describe('parseEntityFragment: the merge body [§5.6.17]', () => {
  it('reads id, types, scope and fragments that keep only what was given', () => {
    const f = parseEntityFragment({
      id: 'urn:x:1', type: 'Shop', scope: '/A', t: { observedAt: '2024-01-01T00:00:00Z', s: 'urn:ngsi-ld:null' }, g: 'urn:ngsi-ld:null',
    }, mapper, { now: T0 });
    expect(f.id).toBe('urn:x:1');
    expect(f.types).toEqual([dc('Shop')]);
    expect(f.scope).toEqual(['/A']);
    expect(f.attrs[dc('t')]).toEqual([{ observedAt: T0, observedAtText: '2024-01-01T00:00:00Z', sub: { [dc('s')]: { deleted: true } } }]);
    expect(f.attrs[dc('g')]).toEqual([{ deleted: true }]);
  });

  it('reads NGSI-LD Null scope as removal', () => {
    expect(parseEntityFragment({ scope: 'urn:ngsi-ld:null' }, mapper, { now: T0 }).scope).toBe('deleted');
  });

  it('keeps both readings of a value until the target decides', () => {
    const [f] = parseEntityFragment({ g: { value: { type: 'Point', coordinates: [1, 2] } } }, mapper, { now: T0 }).attrs[dc('g')]!;
    expect(f).toMatchObject({ value: { looksGeo: true, geometry: { ok: true }, property: { type: 'Point', [dc('coordinates')]: [1, 2] } } });
  });

  it('refuses an id that is not a URI', () => {
    expect(() => parseEntityFragment({ id: 'x' }, mapper, { now: T0 })).toThrow(/absolute URI/);
  });
});

describe('parseAttributeFragment and parseAttribute [§5.6.4, §5.6.19]', () => {
  it('reads a partial fragment with only the given members', () => {
    expect(parseAttributeFragment({ value: 5, datasetId: 'urn:d:1' }, mapper, { now: T0 })).toMatchObject({ datasetId: 'urn:d:1', sub: {} });
    expect(parseAttributeFragment({ unitCode: 'CEL' }, mapper, { now: T0 })).toEqual({ unitCode: 'CEL', sub: {} });
  });

  it('reads NGSI-LD Null as deletion of the selected instance', () => {
    expect(parseAttributeFragment({ value: 'urn:ngsi-ld:null', datasetId: 'urn:d:1' }, mapper, { now: T0 }))
      .toEqual({ deleted: true, datasetId: 'urn:d:1' });
  });

  it('names the attribute in errors and refuses several instances', () => {
    expect(() => parseAttributeFragment({ value: null }, mapper, { now: T0, attr: EX + 'temperature' }))
      .toThrow(/at temperature\.value/);
    expect(() => parseAttributeFragment([{ value: 1 }], mapper, { now: T0 })).toThrow(/single instance/);
  });

  it('reads a whole attribute for replace, inferring from the attribute name', () => {
    expect(parseAttribute({ value: { type: 'Point', coordinates: [1, 2] } }, dc('where'), mapper, { now: T0 }))
      .toMatchObject({ kind: 'GeoProperty' });
    expect(() => parseAttribute('urn:ngsi-ld:null', dc('x'), mapper, { now: T0 })).toThrow(/only allowed in updates/);
  });
});

describe('assertSameEntityId', () => {
  it('accepts a missing or equal id and refuses another', () => {
    expect(() => assertSameEntityId(undefined, 'urn:x:1')).not.toThrow();
    expect(() => assertSameEntityId('urn:x:1', 'urn:x:1')).not.toThrow();
    expect(() => assertSameEntityId('urn:x:2', 'urn:x:1')).toThrow(BadRequestDataError);
  });
});
