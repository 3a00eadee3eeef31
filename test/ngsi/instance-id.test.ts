// Instance ids that carry the instant their row is stored under (a version-7 UUID layout).

import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz-runs.js';
import { describe, expect, it } from 'vitest';
import { INSTANCE_PREFIX, instanceIdAt, instantOfInstanceId } from '../../src/ngsi/index.js';

const UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('instanceIdAt', () => {
  it('puts the instant in the first 48 bits of a version-7 UUID and reads it back', () => {
    const at = Date.parse('2026-05-01T10:00:00.123Z');
    const id = instanceIdAt(at, UUID);
    expect(id).toMatch(/^urn:ngsi-ld:Instance:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.endsWith(UUID.slice(20))).toBe(true);
    expect(instantOfInstanceId(id)).toBe(at);
    expect(instantOfInstanceId(instanceIdAt(0, UUID))).toBe(0);
  });

  it('keeps the random UUID for instants it cannot carry, and reads no instant from other ids', () => {
    expect(instanceIdAt(-1, UUID)).toBe(INSTANCE_PREFIX + UUID);
    expect(instanceIdAt(2 ** 48, UUID)).toBe(INSTANCE_PREFIX + UUID);
    expect(instantOfInstanceId(INSTANCE_PREFIX + UUID)).toBeUndefined();
    expect(instantOfInstanceId('urn:x:1')).toBeUndefined();
  });
});

describe('instanceIdAt, written into a buffer', () => {
  /** The template-string form it replaced. */
  const reference = (at: number, uuid: string): string => {
    if (!Number.isSafeInteger(at) || at < 0 || at >= 2 ** 48 || uuid.length !== 36) return INSTANCE_PREFIX + uuid;
    const hex = at.toString(16).padStart(12, '0');
    const variant = '89ab'[parseInt(uuid[19] ?? '0', 16) & 3] ?? '8';
    return `${INSTANCE_PREFIX}${hex.slice(0, 8)}-${hex.slice(8)}-7${uuid.slice(15, 18)}-${variant}${uuid.slice(20)}`;
  };

  it('makes the same id as the template string, for any instant and any 36 characters', () => {
    const uuid = fc.oneof(fc.uuid(), fc.string({ minLength: 36, maxLength: 36, unit: 'binary-ascii' }), fc.string({ minLength: 36, maxLength: 36, unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }), fc.string({ maxLength: 40 }));
    const at = fc.oneof(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.integer({ min: -5, max: 5 }), fc.constant(2 ** 48), fc.double());
    fc.assert(fc.property(at, uuid, (t, u) => {
      expect(instanceIdAt(t, u)).toBe(reference(t, u));
    }), { numRuns: fuzzRuns(20_000) });
  });

  it('returns a string of its own each time, not a view of its buffer', () => {
    const a = instanceIdAt(1, UUID);
    const b = instanceIdAt(2, UUID);
    expect(a).not.toBe(b);
    expect(instantOfInstanceId(a)).toBe(1);
  });
});
