// When a cron expression next fires, in UTC. node-cron parses and validates the expression (its
// grammar, its error messages); the walk over the parsed fields is done here because node-cron reads
// every date it considers through Intl.DateTimeFormat, and the first such call maps ICU's locale and
// calendar data into the process for good: 12 MiB of resident memory on an idle broker, measured,
// against a budget of 90. Date's UTC fields need none of it. The matching rules are node-cron's: the
// day of the month and the day of the week must both match, and its tokens L, L-n, nW, LW, dL and d#n
// mean what they mean there; test/jobs/cron.test.ts holds the two equal on random expressions.

import cron from 'node-cron';

type DayField = ReadonlyArray<number | string>;

export interface CronSchedule {
  /** The first firing strictly after `after` (epoch ms), at a whole second. */
  next(after: number): number;
}

/** Parses a 5- or 6-field cron expression; throws node-cron's message when it is invalid. */
export function parseCron(expression: string): CronSchedule {
  const fields = cron.parse(expression) as {
    second: number[];
    minute: number[];
    hour: number[];
    dayOfMonth: DayField;
    month: number[];
    dayOfWeek: DayField;
  };
  const seconds = ascending(fields.second);
  const minutes = ascending(fields.minute);
  const hours = ascending(fields.hour);
  const months = new Set(fields.month);
  const dayMatches = (year: number, month: number, day: number): boolean =>
    months.has(month) && matchesDayOfMonth(fields.dayOfMonth, year, month, day) && matchesDayOfWeek(fields.dayOfWeek, year, month, day);

  return {
    next(after) {
      const start = new Date(Math.floor(after / 1000) * 1000 + 1000);
      let bound: [number, number, number] | undefined = [start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds()];
      let day = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
      for (let i = 0; i < MAX_DAYS; i++, day += DAY_MS, bound = undefined) {
        const date = new Date(day);
        if (!dayMatches(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) continue;
        const time = firstTimeOfDay(hours, minutes, seconds, bound);
        if (time !== undefined) return day + time * 1000;
      }
      throw new Error(`cron expression '${expression}' never fires`);
    },
  };
}

const DAY_MS = 86_400_000;
const MAX_DAYS = 366 * 100; // node-cron's horizon: 31 February never comes

/** Seconds into the day of the first (hour, minute, second) at or after `bound`, if any. */
function firstTimeOfDay(hours: number[], minutes: number[], seconds: number[], bound: [number, number, number] | undefined): number | undefined {
  const least = bound ? bound[0] * 3600 + bound[1] * 60 + bound[2] : 0;
  for (const h of hours) {
    if (h * 3600 + 3599 < least) continue;
    for (const m of minutes) {
      if (h * 3600 + m * 60 + 59 < least) continue;
      for (const s of seconds) {
        const time = h * 3600 + m * 60 + s;
        if (time >= least) return time;
      }
    }
  }
  return undefined;
}

function ascending(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

const lastDayOfMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();
const weekdayOf = (year: number, month: number, day: number): number => new Date(Date.UTC(year, month - 1, day)).getUTCDay();

/** The weekday (Monday to Friday) nearest to `target` within its month, as node-cron's nW. */
function nearestWeekday(year: number, month: number, target: number): number {
  const last = lastDayOfMonth(year, month);
  if (target < 1 || target > last) return -1;
  const weekday = weekdayOf(year, month, target);
  if (weekday === 6) return target === 1 ? target + 2 : target - 1;
  if (weekday === 0) return target === last ? target - 2 : target + 1;
  return target;
}

function matchesDayOfMonth(field: DayField, year: number, month: number, day: number): boolean {
  for (const value of field) {
    if (value === day) return true;
    if (typeof value !== 'string') continue;
    if (value === 'L') {
      if (day === lastDayOfMonth(year, month)) return true;
      continue;
    }
    const weekday = /^(\d{1,2}|L)W$/.exec(value);
    if (weekday) {
      const target = weekday[1] === 'L' ? lastDayOfMonth(year, month) : Number(weekday[1]);
      if (nearestWeekday(year, month, target) === day) return true;
      continue;
    }
    const offset = /^L-(\d{1,2})$/.exec(value);
    if (offset && day === lastDayOfMonth(year, month) - Number(offset[1])) return true;
  }
  return false;
}

function matchesDayOfWeek(field: DayField, year: number, month: number, day: number): boolean {
  const weekday = weekdayOf(year, month, day);
  for (const value of field) {
    if (value === weekday) return true;
    if (typeof value !== 'string') continue;
    const nth = /^([0-7])#([1-5])$/.exec(value);
    if (nth) {
      if (Number(nth[1]) % 7 === weekday && Math.floor((day - 1) / 7) + 1 === Number(nth[2])) return true;
      continue;
    }
    const last = /^([0-7])L$/i.exec(value);
    if (last && Number(last[1]) % 7 === weekday && day + 7 > lastDayOfMonth(year, month)) return true;
  }
  return false;
}
