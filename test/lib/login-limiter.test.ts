// The lockout of failed logins: per address and per user name, an exponential wait past each
// threshold, a successful login forgetting its name, old failures forgotten, and memory bounded by
// a fixed number of entries whatever the number of addresses.

import { describe, expect, it } from 'vitest';
import { addressGroup, createFixedClock, createLoginLimiter, silentLogger, type LoginLimits } from '../../src/lib/index.js';

const T0 = Date.parse('2026-05-01T10:00:00Z');
const LIMITS: LoginLimits = { nameFailures: 3, addressFailures: 5, baseDelayMs: 1_000, maxDelayMs: 8_000, forgetAfterMs: 60_000, maxEntries: 100 };

function limiter(limits: Partial<LoginLimits> = {}) {
  const clock = createFixedClock(T0);
  return { clock, l: createLoginLimiter({ limits: { ...LIMITS, ...limits }, clock, log: silentLogger }) };
}
const at = (address: string | undefined, name: string | undefined) => ({ channel: 'http' as const, address, name });

describe('createLoginLimiter', () => {
  it('lets a name fail up to its threshold, then doubles the wait at each failure up to the ceiling', () => {
    const { l, clock } = limiter();
    expect([l.failed(at('10.0.0.1', 'alice')), l.failed(at('10.0.0.2', 'alice'))]).toEqual([0, 0]);
    expect(l.begin(at('10.0.0.3', 'alice'))).toBe(0);
    expect(l.failed(at('10.0.0.3', 'alice'))).toBe(1_000);
    expect(l.begin(at('10.0.0.4', 'alice'))).toBe(1_000);
    clock.advance(400);
    expect(l.begin(at(undefined, 'alice'))).toBe(600);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(l.begin(at(undefined, 'alice')));
      expect(l.begin(at(undefined, 'alice'))).toBe(0);
      waits.push(l.failed(at(undefined, 'alice')));
    }
    expect(waits).toEqual([2_000, 4_000, 8_000, 8_000, 8_000]);
    // Another name from the same addresses is not held back.
    expect(l.begin(at('10.0.0.1', 'bob'))).toBe(0);
    // Each wait above that was not yet over counted as a refusal.
    expect(l.stats()).toMatchObject({ failures: { http: 8, mqtt: 0 }, refused: { http: 7, mqtt: 0 } });
  });

  it('counts attempts still being checked: a parallel burst gets no more than the threshold through', () => {
    const { l } = limiter();
    const admitted = Array.from({ length: 10 }, () => l.begin(at(undefined, 'alice')));
    expect(admitted).toEqual([0, 0, 0, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000]);
    for (let i = 0; i < 3; i++) l.failed(at(undefined, 'alice'));
    expect(l.begin(at(undefined, 'alice'))).toBe(1_000);
    // Attempts that ended without a verdict free their place; a success does too.
    const { l: other } = limiter();
    expect(other.begin(at('10.0.0.1', 'bob'))).toBe(0);
    other.released(at('10.0.0.1', 'bob'));
    expect(other.begin(at('10.0.0.1', 'bob'))).toBe(0);
    other.succeeded(at('10.0.0.1', 'bob'));
    expect(other.stats().entries).toBe(0);
  });

  it('counts an address over every name it tries', () => {
    const { l } = limiter();
    for (let i = 0; i < 4; i++) expect(l.failed(at('10.0.0.9', `user${i}`))).toBe(0);
    expect(l.failed(at('10.0.0.9', 'user4'))).toBe(1_000);
    expect(l.begin(at('10.0.0.9', 'carol'))).toBe(1_000);
    expect(l.begin(at('10.0.0.8', 'carol'))).toBe(0);
  });

  it('forgets the failures of a name at its successful login, not those of the address', () => {
    const { l } = limiter();
    l.failed(at('10.0.0.1', 'alice'));
    l.failed(at('10.0.0.1', 'alice'));
    l.succeeded(at('10.0.0.1', 'alice'));
    // Two more failures of alice: under her threshold again, as the count started over.
    expect(l.failed(at('10.0.0.1', 'alice'))).toBe(0);
    expect(l.failed(at('10.0.0.1', 'alice'))).toBe(0);
    // The address has failed five times: it waits.
    expect(l.failed(at('10.0.0.1', 'dave'))).toBe(1_000);
  });

  it('forgets an address or name whose last failure is older than forgetAfter', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < 3; i++) l.failed(at(undefined, 'alice'));
    expect(l.begin(at(undefined, 'alice'))).toBe(1_000);
    clock.advance(60_001);
    expect(l.begin(at(undefined, 'alice'))).toBe(0);
    expect(l.failed(at(undefined, 'alice'))).toBe(0);
  });

  it('keeps at most maxEntries addresses and names when failures come from 1,000 addresses', () => {
    const { l } = limiter({ maxEntries: 100 });
    for (let i = 0; i < 1_000; i++) l.failed(at(`10.1.${i >> 8}.${i & 255}`, undefined));
    expect(l.stats().entries).toBe(100);
    // The most recent stay tracked, the oldest were forgotten.
    for (let i = 0; i < 4; i++) l.failed(at('10.1.3.231', undefined));
    expect(l.begin(at('10.1.3.231', undefined))).toBe(1_000);
    expect(l.stats().entries).toBe(100);
  });

  it('counts IPv6 addresses by their /64 and IPv4-mapped ones as IPv4', () => {
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('::ffff:192.168.1.7')).toBe('192.168.1.7');
    expect(addressGroup('192.168.1.7')).toBe('192.168.1.7');
    const { l } = limiter();
    for (let i = 0; i < 5; i++) l.failed(at(`2001:db8:1:2::${i + 1}`, undefined));
    expect(l.begin(at('2001:db8:1:2:ffff::9', undefined))).toBe(1_000);
    expect(l.begin(at('2001:db8:1:3::1', undefined))).toBe(0);
  });
});
