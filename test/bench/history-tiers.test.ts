// The check of the rollup benchmark: the hourly aggregation from the hour tier must be the one from
// the raw rows, sums and averages up to floating-point rounding; any other difference is an error.

import { describe, expect, it } from 'vitest';
import { compareAnswers } from '../../bench/history-tiers.js';

const plant = { sensors: 1, days: 1, stepMs: 5_000, start: Date.UTC(2026, 0, 1) };
const hours = 24;
const iso = (h: number): string => new Date(plant.start + h * 3_600_000).toISOString();

/** An answer of the temporal API: every method's periods, with `value(method, hour)` in each. */
function answer(value: (method: string, hour: number) => number): unknown {
  const temperature: Record<string, unknown> = { type: 'Property' };
  for (const method of ['avg', 'min', 'max', 'sum', 'totalCount']) {
    temperature[method] = Array.from({ length: hours }, (_, h) => [value(method, h), iso(h), iso(h + 1)]);
  }
  return { id: 'urn:ngsi-ld:Sensor:s0', type: 'Sensor', temperature };
}

const base = (method: string, h: number): number => (method === 'totalCount' ? 720 : method === 'sum' ? 14_400.1 + h : 20 + h / 10);

describe('compareAnswers', () => {
  it('finds nothing when both answers agree, sums within float rounding', () => {
    const tier = answer((m, h) => (m === 'sum' ? base(m, h) * (1 + 1e-13) : base(m, h)));
    expect(compareAnswers(plant, [answer(base)], [tier])).toEqual([]);
  });

  it('reports a count, a minimum or a sum that differs, and a missing method', () => {
    const tier = answer((m, h) => (h === 3 && m !== 'avg' ? base(m, h) + 1 : base(m, h)));
    const found = compareAnswers(plant, [answer(base)], [tier]);
    expect(found).toHaveLength(4);
    expect(found[0]).toContain('period 3 differs');
    const partial = answer(base) as { temperature: Record<string, unknown> };
    delete partial.temperature.max;
    expect(compareAnswers(plant, [answer(base)], [partial])).toEqual(['urn:ngsi-ld:Sensor:s0 max: missing from the tier answer']);
  });

  it('reports an answer with fewer periods than the window has hours', () => {
    const short = answer(base) as { temperature: Record<string, unknown[]> };
    short.temperature.min = short.temperature.min!.slice(1);
    expect(compareAnswers(plant, [answer(base)], [short]).join('\n')).toContain('24 raw and 23 tier periods');
  });
});
