// ISO 8601 durations of a fixed length (weeks, days, hours, minutes, seconds; no months or years):
// how long an issued command stays valid (edge.md §6).

const FIXED = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Milliseconds of a fixed ISO 8601 duration (`PT5M`, `P1DT2H`), or undefined when the text is none. */
export function parseFixedDuration(text: string): number | undefined {
  const m = FIXED.exec(text);
  if (m === null || text === 'P' || text.endsWith('T')) return undefined;
  const n = (i: number): number => (m[i] === undefined ? 0 : Number(m[i]));
  const ms = Math.round(((((n(1) * 7 + n(2)) * 24 + n(3)) * 60 + n(4)) * 60 + n(5)) * 1000);
  return Number.isSafeInteger(ms) ? ms : undefined;
}
