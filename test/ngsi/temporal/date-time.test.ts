// The date-time formatter of temporal answers against ngsi's formatDateTime: instants in order, out of
// order, across days and years, and the ones it leaves to formatDateTime (odd years, fractions).

import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../src/ngsi/index.js';
import { createDateTimeFormatter } from '../../../src/ngsi/temporal/date-time.js';

const DAY = 86_400_000;

describe('createDateTimeFormatter', () => {
  it('formats like formatDateTime through days, in and out of order', () => {
    const format = createDateTimeFormatter();
    const base = Date.UTC(2024, 1, 28, 23, 59, 58, 997);
    const instants: number[] = [];
    for (let i = 0; i < 5000; i++) instants.push(base + i * 997);
    for (let i = 0; i < 2000; i++) instants.push(base + ((i * 7919) % 400) * DAY + ((i * 104_729) % DAY));
    instants.push(0, DAY - 1, DAY, -1, -DAY, -DAY - 1, Date.UTC(1969, 11, 31, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    for (const t of instants) expect(format(t), String(t)).toBe(formatDateTime(t));
  });

  it('leaves six-digit years and fractions of a millisecond to formatDateTime', () => {
    const format = createDateTimeFormatter();
    for (const t of [Date.UTC(10000, 0, 1), Date.UTC(-1, 5, 1, 12), Date.UTC(2024, 0, 1) + 0.5, Date.UTC(2024, 0, 1) + 1.75, -0.5]) {
      expect(format(t), String(t)).toBe(formatDateTime(t));
      expect(format(Date.UTC(2024, 0, 1, 3)), String(t)).toBe('2024-01-01T03:00:00.000Z');
    }
  });
});
