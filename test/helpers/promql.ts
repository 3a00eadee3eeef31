// The metric names a PromQL expression selects: enough of PromQL's lexical rules for the
// expressions of contrib/ (label matchers, ranges, grouping clauses, strings, numbers, functions).

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan', 'atan2']);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // grouping label lists
    .replace(/\boffset\s+-?\d+[a-z]+/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' '); // Grafana variables
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?:\d+(?:\.\d+)?(?:e[+-]?\d+)?)|([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (name === undefined || call !== undefined || KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}
