// JSON narrowing shared by the benchmark's scenarios and its ceiling server.

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
