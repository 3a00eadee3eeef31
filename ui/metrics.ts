// Reads the Prometheus text exposition of GET /metrics in the page: sample values by metric name and
// labels, nothing more (no types, no histograms beyond their plain samples).

export interface Sample { name: string; labels: Readonly<Record<string, string>>; value: number }

const SAMPLE = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;

function unescapeLabel(v: string): string {
  return v.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

/** The value of a sample: Prometheus writes +Inf, -Inf and NaN besides numbers. */
function parseValue(raw: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  return Number(raw);
}

/** Every sample line of an exposition; comment lines and lines it cannot read are skipped. */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const m = SAMPLE.exec(trimmed);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(LABEL)) labels[l[1] ?? ''] = unescapeLabel(l[2] ?? '');
    out.push({ name: m[1] ?? '', labels, value: parseValue(m[4] ?? '') });
  }
  return out;
}

/** The sum of the samples of `name` whose labels include `match` (undefined when there is none). */
export function metricValue(samples: readonly Sample[], name: string, match: Readonly<Record<string, string>> = {}): number | undefined {
  let sum: number | undefined;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    sum = (sum ?? 0) + s.value;
  }
  return sum;
}
