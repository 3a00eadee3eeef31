// Instance ids that carry the instant their row is stored under (a version-7 UUID layout).

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
