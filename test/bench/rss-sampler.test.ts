// The RSS sampler of the benchmark: the largest RSS over the whole run, and over each window between
// two window() calls (the largest RSS of each scenario).

import { describe, expect, it, vi } from 'vitest';
import { RssSampler } from '../../bench/proc.js';

describe('RssSampler', () => {
  it('gives the largest RSS of each window, never above the largest of the run', async () => {
    const sampler = new RssSampler(process.pid, 5);
    expect(sampler.window()).toBeUndefined();
    sampler.start();
    let first: number | undefined;
    await vi.waitFor(() => {
      first = sampler.window();
      expect(first).toBeGreaterThan(0);
    }, { timeout: 5_000, interval: 10 });
    let second: number | undefined;
    await vi.waitFor(() => {
      second = sampler.window();
      expect(second).toBeGreaterThan(0);
    }, { timeout: 5_000, interval: 10 });
    const max = await sampler.stop();
    expect(max).toBeGreaterThanOrEqual(Math.max(first ?? 0, second ?? 0));
  });
});
