// Counts written for people in the report's notes: 1,000,000 rather than 1000000.

const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatCount(n: number): string {
  return COUNT.format(n);
}
