// Date-times: isOutputForm tells, without formatting, whether a parsed date-time is already written
// the way the broker writes it (so a measurement keeps its own text only when it differs).

import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz-runs.js';
import { describe, expect, it } from 'vitest';
import { formatDateTime, isOutputForm, parseDateTime } from '../../src/ngsi/index.js';
import { parseDateTimeText } from '../../src/ngsi/time.js';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
/** 0000-01-01T00:00:00Z and 0100-01-01T00:00:00Z (Date.UTC reads years 0-99 as 1900-1999). */
const EARLIEST = -62_167_219_200_000;
const YEAR_100 = -59_011_459_200_000;

describe('isOutputForm', () => {
  it('agrees with formatting the parsed instant, for date-times written every way the parser accepts', () => {
    const text = fc.record({
      ms: fc.oneof(fc.integer({ min: EARLIEST, max: Date.UTC(9999, 11, 31) }), fc.integer({ min: EARLIEST, max: YEAR_100 })),
      t: fc.constantFrom('T', 't'),
      frac: fc.constantFrom('', '.000', '.5', '.123', '.1234', ',250'),
      zone: fc.constantFrom('Z', 'z', '+00:00', '-0130', '+02'),
      seconds: fc.boolean(),
    }).map(({ ms, t, frac, zone, seconds }) => {
      const d = new Date(ms);
      const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
      const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${seconds ? `:${pad(d.getUTCSeconds())}${frac}` : ''}`;
      return `${date}${t}${time}${zone}`;
    });
    fc.assert(fc.property(fc.oneof(text, fc.integer({ min: 0, max: Date.UTC(9999, 0, 1) }).map(formatDateTime)), (s) => {
      const at = parseDateTime(s);
      // Only an instant pushed out of 0000-9999 by its zone is refused.
      fc.pre(at !== undefined);
      expect(isOutputForm(s)).toBe(formatDateTime(at as number) === s);
    }), { numRuns: fuzzRuns(2_000) });
  });

  it('reads the years 0000 to 0099 as themselves, with the leap day of year 0', () => {
    for (const s of ['0000-02-29T00:00:00.000Z', '0050-01-01T00:00:00.000Z', '0099-12-31T23:59:59.999Z']) {
      expect(formatDateTime(parseDateTime(s) as number)).toBe(s);
    }
    expect(parseDateTime('0100-02-29T00:00:00Z')).toBeUndefined();
    expect(parseDateTime('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseDateTime('2023-02-29T00:00:00Z')).toBeUndefined();
  });

  it('refuses a date-time whose instant falls outside the years 0000-9999 in UTC', () => {
    expect(parseDateTime('9999-12-31T23:00:00-12:00')).toBeUndefined();
    expect(parseDateTime('0000-01-01T00:00:00+01:00')).toBeUndefined();
    expect(parseDateTime('9999-12-31T11:59:59.999-12:00')).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    expect(formatDateTime(parseDateTime('0000-01-01T00:30:00-00:30') as number)).toBe('0000-01-01T01:00:00.000Z');
  });

  it('says yes to the output form and no to the other spellings of the same instant', () => {
    expect(isOutputForm('2026-05-01T09:00:00.000Z')).toBe(true);
    for (const s of ['2026-05-01T09:00:00Z', '2026-05-01t09:00:00.000Z', '2026-05-01T09:00:00.000z', '2026-05-01T11:00:00.000+02:00']) {
      expect(isOutputForm(s), s).toBe(false);
    }
  });
});

describe('parseDateTime of the output form', () => {
  it('reads a text shaped like the output form as the regular expression does, valid or not', () => {
    const digit = fc.constantFrom(...'0123456789');
    const field = (n: number) => fc.array(fc.oneof(digit, digit, digit, fc.constantFrom('a', ' ', '-', '٣', '+')), { minLength: n, maxLength: n }).map((cs) => cs.join(''));
    const shaped = fc.tuple(field(4), field(2), field(2), field(2), field(2), field(2), field(3))
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    const real = fc.integer({ min: EARLIEST, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }).map((ms) => {
      const d = new Date(ms);
      return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}Z`;
    });
    fc.assert(fc.property(fc.oneof(shaped, real), (s) => {
      expect(isOutputForm(s)).toBe(true);
      expect(parseDateTime(s)).toBe(parseDateTimeText(s));
    }), { numRuns: fuzzRuns(20_000) });
  });

  it('gives the instant of output forms at the edges of the years it takes', () => {
    expect(parseDateTime('0000-01-01T00:00:00.000Z')).toBe(EARLIEST);
    expect(parseDateTime('0099-12-31T23:59:59.999Z')).toBe(YEAR_100 - 1);
    expect(parseDateTime('2024-02-29T12:00:00.000Z')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(parseDateTime('2023-02-29T12:00:00.000Z')).toBeUndefined();
    expect(parseDateTime('9999-12-31T23:59:59.999Z')).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    expect(parseDateTime('2024-01-01T24:00:00.000Z')).toBeUndefined();
  });
});
