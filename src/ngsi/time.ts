// ISO 8601 date-times at the domain boundary: strict parsing to epoch milliseconds and formatting back.
// NGSI-LD §4.6.3 requires a date-time with a time zone; we refuse anything looser.

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const GREGORIAN_CYCLE_MS = 146_097 * 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z. */
const EARLIEST_MS = -62_167_219_200_000;
const LATEST_MS = 253_402_300_799_999;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days of `month` (1-12) in the proleptic Gregorian calendar (years 0000-9999 alike). */
function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1] ?? 0;
}

function offsetMinutes(zone: string): number | undefined {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

/**
 * Epoch milliseconds of an ISO 8601 date-time with zone, or undefined when it is not one or its
 * instant falls outside the years 0000-9999 (UTC).
 */
export function parseDateTime(text: string): number | undefined {
  return isOutputShape(text) ? parseOutputForm(text) : parseDateTimeText(text);
}

/** `text` has the separators of the output form (`YYYY-MM-DDTHH:mm:ss.sssZ`), whatever its other characters. */
const isOutputShape = (text: string): boolean =>
  isOutputForm(text) && text.charCodeAt(4) === 45 && text.charCodeAt(7) === 45 && text.charCodeAt(13) === 58 && text.charCodeAt(16) === 58;

/** The decimal number of text[from, to), or -1 when a character there is not an ASCII digit. */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * parseDateTime of a text shaped like the output form, without the regular expression: the form
 * every measurement's observedAt usually has (this broker writes it, and so do most clients).
 */
function parseOutputForm(text: string): number | undefined {
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  const millis = digits(text, 20, 23);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || millis < 0) return undefined;
  return instantOf(year, month, day, hour, minute, second, millis, 0);
}

/** Epoch ms of a date-time read as fields; undefined when a field is out of range or the instant out of 0000-9999 (UTC). */
function instantOf(year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number, offset: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  // NOTE: Date.UTC reads years 0-99 as 1900-1999: those are taken 400 years (146,097 days, the
  // Gregorian cycle) later, then moved back.
  const utc = year < 100
    ? Date.UTC(year + 400, month - 1, day, hour, minute, second, millis) - GREGORIAN_CYCLE_MS
    : Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // An instant outside 0000-9999 in UTC (9999-12-31T23:00-12:00 is in 10000) has no output form and no history bucket.
  const at = utc - offset * 60_000;
  return at >= EARLIEST_MS && at <= LATEST_MS ? at : undefined;
}

/** parseDateTime by the regular expression: every form it accepts. */
export function parseDateTimeText(text: string): number | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number);
  if (year === undefined || month === undefined || day === undefined || hour === undefined || minute === undefined) {
    return undefined;
  }
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const offset = offsetMinutes(m[8] ?? '');
  if (offset === undefined) return undefined;
  return instantOf(year, month, day, hour, minute, second, millis, offset);
}

/** The broker's output form of an instant: UTC with milliseconds (`toISOString`). */
export const formatDateTime = (ms: number): string => new Date(ms).toISOString();

/**
 * Whether a date-time parseDateTime accepted is already in the output form (formatDateTime of its
 * instant gives it back), without formatting it: `YYYY-MM-DDTHH:mm:ss.sssZ`, upper-case T and Z.
 */
export const isOutputForm = (text: string): boolean =>
  text.length === 24 && text.charCodeAt(10) === 84 && text.charCodeAt(19) === 46 && text.charCodeAt(23) === 90;
