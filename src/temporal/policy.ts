// The history policy from the configuration: whether rollups are kept, and how long each level of
// history (raw rows, minute and hour summaries) is kept by default and for some tenants or types.

import { DEFAULT_CONTEXT_VOCAB } from '../ngsi/index.js';
import { parseDuration } from './duration.js';
import type { LevelRetention, RetentionRule } from './retention.js';
import type { Duration } from './types.js';

export interface HistoryPolicy {
  rollups: boolean;
  retention: LevelRetention;
  rules: RetentionRule[];
}

/** What the policy is read from: the history options, durations as ISO 8601 text ('' for ever). */
export interface HistoryPolicyOptions {
  rollups: boolean;
  retention: string;
  minuteRetention: string;
  hourRetention: string;
  rules: ReadonlyArray<{ tenant: string; type?: string | undefined; raw?: string | undefined; minute?: string | undefined; hour?: string | undefined }>;
}

/** A duration the configuration schema accepted; one too large to add to an instant stops the start. */
function durationOf(text: string | undefined, option: string): Duration | undefined {
  if (text === undefined || text === '') return undefined;
  const d = parseDuration(text);
  if (d === undefined) throw new Error(`${option}: '${text}' is too large a duration`);
  return d;
}

function levels(raw: Duration | undefined, minute: Duration | undefined, hour: Duration | undefined): LevelRetention {
  const out: LevelRetention = {};
  if (raw) out.raw = raw;
  if (minute) out.minute = minute;
  if (hour) out.hour = hour;
  return out;
}

/** A type as a rule names it: an IRI, or a term of the default vocabulary. */
const typeIri = (type: string): string => (type.includes(':') ? type : DEFAULT_CONTEXT_VOCAB + type);

export function historyPolicyOf(o: HistoryPolicyOptions): HistoryPolicy {
  const rules = o.rules.map((r): RetentionRule => {
    const rule: RetentionRule = {
      tenant: r.tenant,
      retention: levels(durationOf(r.raw, 'history.retention-rules'), durationOf(r.minute, 'history.retention-rules'), durationOf(r.hour, 'history.retention-rules')),
    };
    if (r.type !== undefined) rule.type = typeIri(r.type);
    return rule;
  });
  return {
    rollups: o.rollups,
    retention: levels(durationOf(o.retention, 'history.retention'), durationOf(o.minuteRetention, 'history.minute-retention'),
      durationOf(o.hourRetention, 'history.hour-retention')),
    rules,
  };
}

/** Whether the policy removes any history (the retention job has work). */
export const removesHistory = (p: HistoryPolicy): boolean =>
  Object.keys(p.retention).length > 0 || p.rules.some((r) => Object.keys(r.retention).length > 0);
