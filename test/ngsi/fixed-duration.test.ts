// Fixed ISO 8601 durations (how long a command stays valid, edge.md §6).

import { describe, expect, it } from 'vitest';
import { parseFixedDuration } from '../../src/ngsi/index.js';

describe('parseFixedDuration', () => {
  it.each([
    ['PT1M', 60_000], ['PT5M', 300_000], ['PT1.5S', 1_500], ['P1DT2H', 93_600_000], ['P1W', 604_800_000], ['P7D', 604_800_000], ['PT0S', 0],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseFixedDuration(text)).toBe(ms);
  });

  it.each(['', 'P', 'PT', 'P1M', 'P1Y', '1M', 'PT-1S', 'pt1m', 'P1DT'])('refuses %j (no fixed duration)', (text) => {
    expect(parseFixedDuration(text)).toBeUndefined();
  });
});
