// The listing decoder: hands back a kept decoding only for the version it was read at, and hands out
// frozen entities.

import { describe, expect, it } from 'vitest';
import { createVersionedDecoder, decodeEntity, type VersionedTuple } from '../../../src/store/entities/entity-doc.js';
import { keysInRowidOrder } from '../../../src/store/entities/entity-select.js';

const DOC = JSON.stringify({ types: ['urn:t'], attrs: { 'urn:a': [{ kind: 'Property', value: 1, sub: {} }] } });
const row = (rowid: number, version: number, doc = DOC): VersionedTuple => [rowid, version, `urn:e:${rowid}`, doc, 1, 2, null];

describe('listing decoder', () => {
  it('decodes as decodeEntity does, and keeps the entity for its row and version', () => {
    const decoder = createVersionedDecoder(4);
    const first = decoder.decode(row(1, 7));
    expect(first).toEqual(decodeEntity({ id: 'urn:e:1', doc: DOC, created_at: 1, modified_at: 2, deleted_at: null }));
    expect(decoder.known(1, 7)).toBe(first);
  });

  it('knows nothing of another version or another row', () => {
    const decoder = createVersionedDecoder(4);
    decoder.decode(row(1, 7));
    expect(decoder.known(1, 8)).toBeUndefined();
    expect(decoder.known(1, 6)).toBeUndefined();
    expect(decoder.known(2, 7)).toBeUndefined();
    const changed = decoder.decode(row(1, 8, DOC.replace('"value":1', '"value":2')));
    expect(decoder.known(1, 8)).toBe(changed);
    expect(changed.attrs['urn:a']?.[0]).toMatchObject({ value: 2 });
    expect(decoder.known(1, 7)).toBeUndefined();
  });

  it('hands out deeply frozen entities, so no consumer can change a shared one', () => {
    const entity = createVersionedDecoder(4).decode(row(1, 1));
    expect(Object.isFrozen(entity)).toBe(true);
    expect(Object.isFrozen(entity.attrs['urn:a']?.[0])).toBe(true);
    expect(() => { (entity.types as string[]).push('urn:other'); }).toThrow(TypeError);
  });

  it('keeps at most max decodings', () => {
    const decoder = createVersionedDecoder(2);
    decoder.decode(row(1, 1));
    decoder.decode(row(2, 1));
    decoder.decode(row(3, 1));
    expect(decoder.known(1, 1)).toBeUndefined();
    expect(decoder.known(3, 1)).toBeDefined();
  });
});

describe('page keys in creation order', () => {
  it('reads the pairs of the joined text, and none of no text', () => {
    expect(keysInRowidOrder('3,10,5,2,9,7')).toEqual([3, 10, 5, 2, 9, 7]);
    expect(keysInRowidOrder('4,1')).toEqual([4, 1]);
    expect(keysInRowidOrder(null)).toEqual([]);
  });

  it('puts pairs joined out of order back in rowid order, each rowid with its own version', () => {
    expect(keysInRowidOrder('9,7,3,10,5,2')).toEqual([3, 10, 5, 2, 9, 7]);
    expect(keysInRowidOrder('3,10,9,7,5,2')).toEqual([3, 10, 5, 2, 9, 7]);
  });
});
