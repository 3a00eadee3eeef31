// Reads a Prometheus text exposition into samples, for assertions on /metrics.

export interface Exposition {
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
  /** The value of one sample; labels must match exactly (every label, any order). */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of a name. */
  samples(name: string): Array<{ labels: Record<string, string>; value: number }>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const all: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!;
    all.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const same = (a: Record<string, string>, b: Record<string, string>): boolean =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);
  return {
    types,
    value: (name, labels = {}) => all.find((s) => s.name === name && same(s.labels, labels))?.value,
    samples: (name) => all.filter((s) => s.name === name).map(({ labels, value }) => ({ labels, value })),
  };
}
