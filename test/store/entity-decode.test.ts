// The listing decoder: reuses a decoding only for identical stored rows, and hands out frozen entities.

import { describe, expect, it } from 'vitest';
import { createTupleDecoder, decodeEntityTuple, type EntityTuple } from '../../src/store/entity-doc.js';

const DOC = JSON.stringify({ types: ['urn:t'], attrs: { 'urn:a': [{ kind: 'Property', value: 1, sub: {} }] } });

describe('listing decoder', () => {
  it('decodes as decodeEntityTuple does, and reuses the decoding of an identical row', () => {
    const decode = createTupleDecoder(4);
    const row: EntityTuple = ['urn:e:1', DOC, 1, 2, null];
    const first = decode(row);
    expect(first).toEqual(decodeEntityTuple(row));
    expect(decode(['urn:e:1', String(DOC), 1, 2, null])).toBe(first);
  });

  it('decodes again when the document or a column changed', () => {
    const decode = createTupleDecoder(4);
    const first = decode(['urn:e:1', DOC, 1, 2, null]);
    const changedDoc = DOC.replace('"value":1', '"value":2');
    expect(decode(['urn:e:1', changedDoc, 1, 2, null]).attrs['urn:a']?.[0]).toMatchObject({ value: 2 });
    expect(decode(['urn:e:1', DOC, 1, 3, null])).not.toBe(first);
    expect(decode(['urn:e:1', DOC, 1, 3, 4]).deletedAt).toBe(4);
  });

  it('hands out deeply frozen entities, so no consumer can change a shared one', () => {
    const entity = createTupleDecoder(4)(['urn:e:1', DOC, 1, 2, null]);
    expect(Object.isFrozen(entity)).toBe(true);
    expect(Object.isFrozen(entity.attrs['urn:a']?.[0])).toBe(true);
    expect(() => { (entity.types as string[]).push('urn:other'); }).toThrow(TypeError);
  });

  it('keeps at most max decodings, forgetting the least recently used', () => {
    const decode = createTupleDecoder(2);
    const one = decode(['urn:e:1', DOC, 1, 2, null]);
    decode(['urn:e:2', DOC, 1, 2, null]);
    decode(['urn:e:3', DOC, 1, 2, null]);
    expect(decode(['urn:e:1', DOC, 1, 2, null])).not.toBe(one);
  });
});
