// Date-times of temporal answers, many to an answer and mostly a few per day apart: formatted as
// ngsi's formatDateTime does (`toISOString`), the date part reused while instants stay in one day.

import { formatDateTime } from '../time.js';

const DAY_MS = 86_400_000;
const DIGIT_0 = 48;
const COLON = 58;
const DOT = 46;
const ZULU = 90;
/** `YYYY-MM-DDT`: the date part of a four-digit year (other years take formatDateTime). */
const DATE_LENGTH = 11;

/**
 * A formatter for the instants of one answer, equal to formatDateTime. NOTE: toISOString costs
 * about half a microsecond, a visible share of an answer of 10,000 instances; this one keeps the
 * date of the last day seen and writes the time of day from character codes (one flat string).
 */
export function createDateTimeFormatter(): (ms: number) => string {
  let dayStart = Number.NaN;
  const date: number[] = [];
  return (ms) => {
    const inDay = ms - dayStart;
    if (!(inDay >= 0 && inDay < DAY_MS) || !Number.isInteger(ms)) {
      const text = formatDateTime(ms);
      if (Number.isInteger(ms) && text.length === 24) {
        dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
        for (let i = 0; i < DATE_LENGTH; i++) date[i] = text.charCodeAt(i);
      }
      return text;
    }
    const seconds = Math.floor(inDay / 1000);
    const h = Math.floor(seconds / 3600);
    const m = Math.floor(seconds / 60) % 60;
    const s = seconds % 60;
    const f = inDay % 1000;
    const d = (n: number): number => DIGIT_0 + n;
    return String.fromCharCode(
      date[0]!, date[1]!, date[2]!, date[3]!, date[4]!, date[5]!, date[6]!, date[7]!, date[8]!, date[9]!, date[10]!,
      d(Math.floor(h / 10)), d(h % 10), COLON, d(Math.floor(m / 10)), d(m % 10), COLON, d(Math.floor(s / 10)), d(s % 10), DOT,
      d(Math.floor(f / 100)), d(Math.floor(f / 10) % 10), d(f % 10), ZULU,
    );
  };
}

/**
 * An instant the broker computed rather than stored (aggregation period bounds, Content-Range), in
 * the form of the NGSI-LD examples (GS CIM 009 §4.5.19, §6.3.10): whole seconds without a fraction,
 * milliseconds only when there are some.
 */
export function formatComputedInstant(ms: number): string {
  const text = formatDateTime(ms);
  return text.endsWith('.000Z') ? `${text.slice(0, -5)}Z` : text;
}
