// Update rules never mutate the entity they are given (deep-frozen here: any write throws), and they
// keep the instance arrays of attributes they do not touch, which lets the store diff its indexes by
// reference.

import { describe, expect, it } from 'vitest';
import {
  appendAttributes, deleteAttribute, mergeEntity, parseAttributeFragment, parseAttributes, parseEntity, parseEntityFragment,
  replaceAttribute, replaceEntity, updateAttributePartial, updateAttributes, type Entity, type UpdateOutcome,
} from '../../src/ngsi/index.js';
import { EX, T0, T1, dc, mapper } from './fake-mapper.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const entity: Entity = deepFreeze(parseEntity({
  id: 'urn:ngsi-ld:Building:1', type: 'Building', scope: '/A',
  temperature: { value: 20, unitCode: 'CEL', accuracy: 0.5 },
  speed: [{ value: 1 }, { value: 2, datasetId: 'urn:d:gps' }],
  rel: { object: 'urn:a:1' },
  location: { type: 'Point', coordinates: [1, 2] },
}, mapper, { now: T0 }));
const TEMP = EX + 'temperature';
const attrs = (body: unknown) => parseAttributes(body, mapper, { now: T1, allowNull: true });

const rules: Array<[string, () => UpdateOutcome | Entity]> = [
  ['append', () => appendAttributes(entity, attrs({ humidity: 40, temperature: 21 }), { noOverwrite: false, now: T1 })],
  ['update', () => updateAttributes(entity, attrs({ temperature: 22, speed: 'urn:ngsi-ld:null' }), T1)],
  ['merge', () => mergeEntity(entity, parseEntityFragment({ temperature: { value: 23, accuracy: 'urn:ngsi-ld:null' } }, mapper, { now: T1 }), T1)],
  ['replace', () => replaceEntity(entity, parseEntity({ id: entity.id, type: 'Building', a: 1 }, mapper, { now: T1 }), T1)],
  ['partial', () => updateAttributePartial(entity, TEMP, parseAttributeFragment({ value: 24 }, mapper, { now: T1 }), T1)],
  ['replace attribute', () => replaceAttribute(entity, TEMP, attrs({ temperature: 25 })[TEMP]![0]!, T1)],
  ['delete attribute', () => deleteAttribute(entity, dc('speed'), { deleteAll: true, now: T1 })],
];

describe('update rules', () => {
  it.each(rules)('%s leaves its input untouched', (_name, run) => {
    expect(run).not.toThrow();
  });

  it('keep the instance arrays of attributes they do not change', () => {
    const out = updateAttributePartial(entity, TEMP, parseAttributeFragment({ value: 26 }, mapper, { now: T1 }), T1);
    expect(entity.attrs[dc('speed')]).toHaveLength(2);
    expect(entity.attrs[dc('rel')]).toHaveLength(1);
    expect(out.entity.attrs[TEMP]).not.toBe(entity.attrs[TEMP]);
    expect(out.entity.attrs[dc('speed')]).toBe(entity.attrs[dc('speed')]);
    expect(out.entity.attrs[dc('rel')]).toBe(entity.attrs[dc('rel')]);
  });
});
