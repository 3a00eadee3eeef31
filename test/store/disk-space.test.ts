// The free-space watch behind storage.min-free-bytes: a threshold against statfs's available bytes,
// and an unknown figure (statfs failed) never refuses writes.

import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import { watchDiskSpace } from '../../src/store/disk-space.js';

const dir = tmpdir();

describe('watchDiskSpace', () => {
  it('has room above the threshold and none below it, with the free bytes of statfs', () => {
    const clock = createFixedClock(0);
    const stats = statfsSync(dir);
    const free = stats.bavail * stats.bsize;
    expect(watchDiskSpace({ dir, minFreeBytes: 1, clock, log: silentLogger }).hasRoom()).toBe(true);
    const full = watchDiskSpace({ dir, minFreeBytes: Number.MAX_SAFE_INTEGER, clock, log: silentLogger });
    expect(full.hasRoom()).toBe(false);
    // Another process may write meanwhile: the figure is close to, not equal to, the one read here.
    expect(Math.abs(full.freeBytes()! - free)).toBeLessThan(free / 10 + 1e8);
  });

  it('never refuses with a threshold of 0 or when statfs fails', () => {
    const clock = createFixedClock(0);
    expect(watchDiskSpace({ dir, minFreeBytes: 0, clock, log: silentLogger }).hasRoom()).toBe(true);
    const missing = watchDiskSpace({ dir: `${dir}/no/such/dir/here`, minFreeBytes: Number.MAX_SAFE_INTEGER, clock, log: silentLogger });
    expect(missing.hasRoom()).toBe(true);
    expect(missing.freeBytes()).toBeUndefined();
  });

});
