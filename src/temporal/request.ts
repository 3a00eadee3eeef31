// Temporal request parameters (NGSI-LD §6.18.3.1, §5.2.21 TemporalQuery): timerel, timeAt, endTimeAt,
// timeproperty, lastN/firstN/offsetN, representation and aggregation, from URL or temporalQ text.

import { BadRequestDataError, InvalidRequestError, NotImplementedError, parseDateTime } from '../ngsi/index.js';
import { isZeroDuration, parseDuration } from './duration.js';
import {
  AGGR_METHODS, type AggrMethod, type Duration, type TemporalFormat, type TemporalQuery, type TimeProperty, type Timerel,
} from './types.js';

export type RawTemporalParams = {
  [K in 'timerel' | 'timeAt' | 'endTimeAt' | 'timeproperty' | 'lastN' | 'firstN' | 'offsetN' | 'aggrMethods' | 'aggrPeriodDuration']?:
    string | undefined;
};

const TIMERELS: readonly Timerel[] = ['before', 'after', 'between'];
const TIME_PROPERTIES: readonly TimeProperty[] = ['observedAt', 'createdAt', 'modifiedAt', 'deletedAt'];

function oneOf<T extends string>(name: string, raw: string | undefined, values: readonly T[]): T | undefined {
  if (raw === undefined) return undefined;
  const hit = values.find((v) => v === raw);
  if (hit === undefined) throw new BadRequestDataError(`'${name}' must be one of ${values.join(', ')}`, raw);
  return hit;
}

function instant(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const at = parseDateTime(raw);
  if (at === undefined) throw new BadRequestDataError(`'${name}' must be an ISO 8601 date-time with a time zone`, raw);
  return at;
}

function count(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min) {
    throw new InvalidRequestError(`'${name}' must be an integer >= ${min}`, raw);
  }
  return n;
}

/** The time filter and slicing; NGSI-LD §4.11: timerel needs timeAt, between needs endTimeAt after it. */
export function parseTemporalQuery(raw: RawTemporalParams): TemporalQuery {
  const timerel = oneOf('timerel', raw.timerel, TIMERELS);
  const timeAt = instant('timeAt', raw.timeAt);
  const endTimeAt = instant('endTimeAt', raw.endTimeAt);
  if (timerel !== undefined && timeAt === undefined) throw new BadRequestDataError('timerel needs timeAt');
  if (timerel === undefined && timeAt !== undefined) throw new BadRequestDataError('timeAt needs timerel');
  if (timerel === 'between' && endTimeAt === undefined) throw new BadRequestDataError('timerel=between needs endTimeAt');
  if (timerel !== 'between' && endTimeAt !== undefined) throw new BadRequestDataError('endTimeAt is only used with timerel=between');
  if (timerel === 'between' && endTimeAt !== undefined && timeAt !== undefined && endTimeAt <= timeAt) {
    throw new BadRequestDataError('endTimeAt must be after timeAt');
  }
  const lastN = count('lastN', raw.lastN, 1);
  const firstN = count('firstN', raw.firstN, 1);
  if (lastN !== undefined && firstN !== undefined) throw new BadRequestDataError('lastN and firstN exclude each other');
  const q: TemporalQuery = {
    timeproperty: oneOf('timeproperty', raw.timeproperty, TIME_PROPERTIES) ?? 'observedAt',
    offsetN: count('offsetN', raw.offsetN, 0) ?? 0,
  };
  if (timerel !== undefined) q.timerel = timerel;
  if (timeAt !== undefined) q.timeAt = timeAt;
  if (endTimeAt !== undefined) q.endTimeAt = endTimeAt;
  if (lastN !== undefined) q.lastN = lastN;
  if (firstN !== undefined) q.firstN = firstN;
  return q;
}

const OPTIONS = ['temporalValues', 'aggregatedValues', 'sysAttrs', 'audit', 'normalized'] as const;
const FORMATS = ['normalized', 'temporalValues', 'aggregatedValues', 'simplified', 'keyValues', 'concise'] as const;

/**
 * `options` and `format` (NGSI-LD §6.3.7, §6.3.12, §4.5.9): format wins over options; the simplified
 * temporal representation is temporalValues. Concise is not implemented for temporal results. An
 * unknown value of either is a syntax error of the request: InvalidRequest (§6.3.12).
 */
export function parseTemporalFormat(options: readonly string[], format: string | undefined):
  { format: TemporalFormat; sysAttrs: boolean; audit: boolean; optionsAggregate: boolean } {
  for (const o of options) {
    if (!OPTIONS.some((known) => known === o)) throw new InvalidRequestError(`Unknown option '${o}'`, `Allowed: ${OPTIONS.join(', ')}`);
  }
  if (options.includes('temporalValues') && options.includes('aggregatedValues')) {
    throw new BadRequestDataError('temporalValues and aggregatedValues exclude each other');
  }
  const given = format === undefined ? undefined : FORMATS.find((f) => f === format);
  if (format !== undefined && given === undefined) throw new InvalidRequestError(`'format' must be one of ${FORMATS.join(', ')}`, format);
  if (given === 'concise') throw new NotImplementedError('The concise temporal representation is not implemented');
  const fromOptions: TemporalFormat = options.includes('aggregatedValues') ? 'aggregatedValues'
    : options.includes('temporalValues') ? 'temporalValues' : 'normalized';
  const chosen: TemporalFormat = given === undefined ? fromOptions
    : given === 'simplified' || given === 'keyValues' ? 'temporalValues' : given;
  return { format: chosen, sysAttrs: options.includes('sysAttrs'), audit: options.includes('audit'), optionsAggregate: options.includes('aggregatedValues') };
}

/**
 * aggrMethods and aggrPeriodDuration (NGSI-LD §4.5.19): required and allowed with aggregatedValues
 * only. `optionsAggregate`: options asked for aggregatedValues but format chose another
 * representation (§6.3.12: format takes precedence); the aggregation parameters then go unused.
 */
export function parseAggregation(format: TemporalFormat, raw: RawTemporalParams, optionsAggregate = false):
  { methods: AggrMethod[]; period?: Duration } {
  if (format !== 'aggregatedValues') {
    if (!optionsAggregate && (raw.aggrMethods !== undefined || raw.aggrPeriodDuration !== undefined)) {
      throw new BadRequestDataError('aggrMethods and aggrPeriodDuration need the aggregatedValues representation');
    }
    return { methods: [] };
  }
  if (raw.aggrMethods === undefined || raw.aggrMethods.trim() === '') {
    throw new BadRequestDataError('aggregatedValues needs aggrMethods', `One or more of ${AGGR_METHODS.join(', ')}`);
  }
  const methods: AggrMethod[] = [];
  for (const name of raw.aggrMethods.split(',').map((s) => s.trim())) {
    const method = AGGR_METHODS.find((m) => m === name);
    if (method === undefined) throw new BadRequestDataError(`Unknown aggregation method '${name}'`, `Allowed: ${AGGR_METHODS.join(', ')}`);
    if (!methods.includes(method)) methods.push(method);
  }
  if (raw.aggrPeriodDuration === undefined) return { methods };
  const period = parseDuration(raw.aggrPeriodDuration);
  if (!period) throw new BadRequestDataError('aggrPeriodDuration must be an ISO 8601 duration', raw.aggrPeriodDuration);
  // NGSI-LD §4.5.19: a zero duration means the whole range, as when it is absent.
  return isZeroDuration(period) ? { methods } : { methods, period };
}
