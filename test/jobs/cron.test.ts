// The UTC walk over node-cron's parsed fields fires exactly when node-cron's own matcher (in UTC)
// says, on random expressions of every field form and token it accepts, from random instants.

import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz-runs.js';
import cron from 'node-cron';
import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/jobs/cron.js';

/** node-cron's own answer: the next match of its matcher in UTC. */
function oracle(expression: string): (after: number) => number {
  const task = cron.createTask(expression, () => undefined, { timezone: 'UTC' }) as unknown as {
    timeMatcher: { getNextMatch(date: Date): Date };
  };
  return (after) => task.timeMatcher.getNextMatch(new Date(after)).getTime();
}

const numberField = (min: number, max: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant('*'),
    fc.integer({ min, max }).map(String),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.integer({ min: 1, max: Math.max(2, Math.floor((max - min) / 2)) }).map((step) => `*/${step}`),
    fc.uniqueArray(fc.integer({ min, max }), { minLength: 2, maxLength: 4 }).map((list) => list.join(',')),
  );

const dayOfMonth = fc.oneof(numberField(1, 31), fc.constantFrom('L', 'LW', '15W', '1W', '31W', 'L-3', 'L-30'));
const dayOfWeek = fc.oneof(numberField(0, 7), fc.constantFrom('mon-fri', 'sun', 'sat,sun', '5L', '0L', '2#3', '7#1', '1#5'));
const month = fc.oneof(numberField(1, 12), fc.constantFrom('feb', 'jan,jul', 'nov-dec'));

const expression = fc
  .tuple(fc.option(numberField(0, 59), { nil: undefined }), numberField(0, 59), numberField(0, 23), dayOfMonth, month, dayOfWeek)
  .map(([second, ...rest]) => (second === undefined ? rest : [second, ...rest]).join(' '));

// 2000-01-01 … 2100-01-01, with the milliseconds node-cron drops.
const instant = fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 });

describe('cron schedule in UTC', () => {
  it('fires when node-cron fires, for any expression it accepts', () => {
    fc.assert(
      fc.property(expression, instant, (text, after) => {
        let schedule;
        try {
          schedule = parseCron(text);
        } catch {
          return; // refused by node-cron's parser; its validation is not ours to test
        }
        const expected = (() => {
          try {
            return oracle(text)(after);
          } catch {
            return 'never';
          }
        })();
        const actual = (() => {
          try {
            return schedule.next(after);
          } catch {
            return 'never';
          }
        })();
        expect(actual).toBe(expected);
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it('fires strictly after the given instant and at whole seconds', () => {
    const every5 = parseCron('*/5 * * * *');
    const at = Date.UTC(2026, 10, 27, 10, 5, 0);
    expect(every5.next(at - 1)).toBe(at);
    expect(every5.next(at)).toBe(at + 5 * 60_000);
    expect(parseCron('* * * * * *').next(at + 400)).toBe(at + 1000);
    expect(parseCron('0 0 29 2 *').next(Date.UTC(2027, 0, 1))).toBe(Date.UTC(2028, 1, 29));
    expect(parseCron('0 12 L * *').next(Date.UTC(2026, 1, 3))).toBe(Date.UTC(2026, 1, 28, 12));
  });

  it("refuses what node-cron refuses, with node-cron's message", () => {
    expect(() => parseCron('0 0 32 * *')).toThrow(/day of month/);
    expect(() => parseCron('every hour')).toThrow();
    expect(() => parseCron('0 0 31 2 *')).toThrow(/impossible/);
    expect(() => parseCron('0 0 1 * 1#5').next(0)).toThrow(/never fires/); // the 1st is never a fifth Monday
  });
});
