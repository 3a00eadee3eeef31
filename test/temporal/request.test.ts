// Temporal request parsing (NGSI-LD §6.18.3.1, §4.11, §4.5.19) and ISO 8601 durations: what is
// accepted, its domain value, and the 400/501 for everything else.

import { describe, expect, it } from 'vitest';
import { addDuration, parseDuration } from '../../src/temporal/duration.js';
import { parseAggregation, parseTemporalFormat, parseTemporalQuery } from '../../src/temporal/request.js';

const AT = '2026-04-01T00:00:00Z';
const AT_MS = Date.parse(AT);
const END = '2026-04-02T00:00:00Z';

describe('parseTemporalQuery', () => {
  it('reads timerel with its instants, timeproperty (default observedAt) and the slicing', () => {
    expect(parseTemporalQuery({})).toEqual({ timeproperty: 'observedAt', offsetN: 0 });
    expect(parseTemporalQuery({ timerel: 'between', timeAt: AT, endTimeAt: END, timeproperty: 'modifiedAt', lastN: '3', offsetN: '2' }))
      .toEqual({ timerel: 'between', timeAt: AT_MS, endTimeAt: Date.parse(END), timeproperty: 'modifiedAt', lastN: 3, offsetN: 2 });
    expect(parseTemporalQuery({ timerel: 'before', timeAt: '2026-04-01T02:00:00+02:00', firstN: '1' }))
      .toMatchObject({ timerel: 'before', timeAt: AT_MS, firstN: 1 });
  });

  it.each([
    [{ timerel: 'after' }, 'timerel needs timeAt'],
    [{ timeAt: AT }, 'timeAt needs timerel'],
    [{ timerel: 'between', timeAt: AT }, 'timerel=between needs endTimeAt'],
    [{ timerel: 'after', timeAt: AT, endTimeAt: END }, 'endTimeAt is only used with timerel=between'],
    [{ timerel: 'between', timeAt: END, endTimeAt: AT }, 'endTimeAt must be after timeAt'],
    [{ timerel: 'during', timeAt: AT }, "'timerel' must be one of before, after, between"],
    [{ timerel: 'after', timeAt: '2026-04-01' }, "'timeAt' must be an ISO 8601 date-time with a time zone"],
    [{ timeproperty: 'seenAt' }, "'timeproperty' must be one of observedAt, createdAt, modifiedAt, deletedAt"],
    [{ lastN: '0' }, "'lastN' must be an integer >= 1"],
    [{ lastN: '2', firstN: '2' }, 'lastN and firstN exclude each other'],
    [{ offsetN: '-1' }, "'offsetN' must be an integer >= 0"],
  ])('refuses %j with 400', (raw, message) => {
    expect(() => parseTemporalQuery(raw)).toThrow(expect.objectContaining({ status: 400, message }));
  });
});

describe('parseTemporalFormat and parseAggregation', () => {
  it('lets format win over options and maps simplified to temporalValues', () => {
    expect(parseTemporalFormat([], undefined)).toEqual({ format: 'normalized', sysAttrs: false, audit: false, optionsAggregate: false });
    expect(parseTemporalFormat(['temporalValues', 'sysAttrs', 'audit'], undefined))
      .toEqual({ format: 'temporalValues', sysAttrs: true, audit: true, optionsAggregate: false });
    expect(parseTemporalFormat(['temporalValues'], 'aggregatedValues').format).toBe('aggregatedValues');
    expect(parseTemporalFormat([], 'simplified').format).toBe('temporalValues');
    // NGSI-LD §6.3.12: an unknown option or format is an invalid request.
    const invalid = expect.objectContaining({ status: 400, errorType: 'InvalidRequest' });
    expect(() => parseTemporalFormat(['keyValues'], undefined)).toThrow(invalid);
    expect(() => parseTemporalFormat([], 'invalidFormat')).toThrow(invalid);
    expect(() => parseTemporalFormat([], 'concise')).toThrow(expect.objectContaining({ status: 501 }));
    expect(() => parseTemporalFormat(['temporalValues', 'aggregatedValues'], undefined)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('needs aggrMethods with aggregatedValues, and allows them nowhere else', () => {
    expect(parseAggregation('aggregatedValues', { aggrMethods: 'sum,avg,sum', aggrPeriodDuration: 'PT1H' }))
      .toEqual({ methods: ['sum', 'avg'], period: { years: 0, months: 0, fixedMs: 3_600_000 } });
    expect(parseAggregation('aggregatedValues', { aggrMethods: 'max', aggrPeriodDuration: 'PT0S' })).toEqual({ methods: ['max'] });
    expect(() => parseAggregation('aggregatedValues', {})).toThrow(expect.objectContaining({ status: 400, message: 'aggregatedValues needs aggrMethods' }));
    expect(() => parseAggregation('aggregatedValues', { aggrMethods: 'median' })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => parseAggregation('aggregatedValues', { aggrMethods: 'sum', aggrPeriodDuration: '1 day' })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => parseAggregation('normalized', { aggrMethods: 'sum' })).toThrow(expect.objectContaining({ status: 400 }));
    // format=temporalValues won over options=aggregatedValues: its aggrMethods go unused (§6.3.12).
    expect(parseAggregation('temporalValues', { aggrMethods: 'sum' }, true)).toEqual({ methods: [] });
  });
});

describe('ISO 8601 durations', () => {
  it('parses every part, weeks and fractional seconds, and refuses the rest', () => {
    expect(parseDuration('P1Y2M3W4DT5H6M7.5S')).toEqual({ years: 1, months: 2, fixedMs: ((3 * 7 + 4) * 24 * 3600 + 5 * 3600 + 6 * 60 + 7.5) * 1000 });
    expect(parseDuration('P90D')).toEqual({ years: 0, months: 0, fixedMs: 90 * 86_400_000 });
    for (const bad of ['P', 'PT', 'P1H', '1D', 'P-1D', 'PT1.5', 'P1DT']) expect(parseDuration(bad)).toBeUndefined();
  });

  it('adds calendar months and years in UTC, and fixed parts in milliseconds', () => {
    const jan31 = Date.UTC(2024, 0, 31, 6);
    expect(new Date(addDuration(jan31, parseDuration('P1M')!)).toISOString()).toBe('2024-03-02T06:00:00.000Z');
    expect(new Date(addDuration(Date.UTC(2024, 1, 29), parseDuration('P1Y')!)).toISOString()).toBe('2025-03-01T00:00:00.000Z');
    expect(new Date(addDuration(Date.UTC(2024, 0, 1), parseDuration('P1M1D')!, 2)).toISOString()).toBe('2024-03-03T00:00:00.000Z');
    expect(addDuration(1000, parseDuration('PT1S')!, -1)).toBe(0);
  });
});
