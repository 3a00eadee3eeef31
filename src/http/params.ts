// Query-parameter allow-lists and parsing. Every route declares what it implements: unknown
// parameters are 400, known-but-unimplemented ones 501, repeated ones 400; none is ever ignored.

import { z } from 'zod';
import {
  BadRequestDataError, InvalidRequestError, NotImplementedError, TooManyResultsError,
} from '../ngsi/index.js';

/** Parameters of the NGSI-LD API that edgeld knows but does not implement (yet): 501. */
const KNOWN_UNIMPLEMENTED = new Set([
  'containedBy', 'entityMap', 'via', 'collation', 'expandValues', 'csf', 'doNotCompact',
]);

export type Params = ReadonlyMap<string, string>;

const NO_PARAMS: Params = new Map();

export function readParams(url: string, allowed: readonly string[], unimplemented: readonly string[] = []): Params {
  // Most writes carry no query string: no URL to parse then.
  const q = url.indexOf('?');
  if (q === -1 || q === url.length - 1) return NO_PARAMS;
  const search = new URLSearchParams(url.slice(q + 1));
  const out = new Map<string, string>();
  for (const [name, value] of search) {
    if (!allowed.includes(name)) {
      if (unimplemented.includes(name) || KNOWN_UNIMPLEMENTED.has(name)) {
        throw new NotImplementedError(`Query parameter '${name}' is not implemented`, `${name}=${value}`);
      }
      throw new InvalidRequestError(`Unknown query parameter '${name}'`, `Allowed here: ${allowed.join(', ') || 'none'}`);
    }
    if (out.has(name)) throw new InvalidRequestError(`Query parameter '${name}' is given more than once`, 'Give each parameter once; lists are comma-separated');
    out.set(name, value);
  }
  return out;
}

/** A comma-separated list; empty items are a syntax error. */
export function csv(params: Params, name: string): string[] | undefined {
  const raw = params.get(name);
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new InvalidRequestError(`Query parameter '${name}' has an empty item`, `${name}=${raw}`);
  return items;
}

const boolSchema = z.enum(['true', 'false']);

/**
 * A true/false parameter. A bad value is InvalidRequest (bad parameter syntax), or BadRequestData
 * where the operation says so (NGSI-LD §5.13: the @context management parameters).
 */
export function bool(params: Params, name: string, fallback = false, invalid: 'InvalidRequest' | 'BadRequestData' = 'InvalidRequest'): boolean {
  const raw = params.get(name);
  if (raw === undefined) return fallback;
  const parsed = boolSchema.safeParse(raw);
  if (!parsed.success) {
    const Err = invalid === 'BadRequestData' ? BadRequestDataError : InvalidRequestError;
    throw new Err(`Query parameter '${name}' must be true or false`, `${name}=${raw}`);
  }
  return parsed.data === 'true';
}

export function int(params: Params, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = params.get(name);
  if (raw === undefined) return undefined;
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) throw new InvalidRequestError(`Query parameter '${name}' must be an integer from ${min} to ${max}`, `${name}=${raw}`);
  return n;
}

/** A value out of a closed set. */
export function oneOf<T extends string>(params: Params, name: string, values: readonly T[]): T | undefined {
  const raw = params.get(name);
  if (raw === undefined) return undefined;
  const hit = values.find((v) => v === raw);
  if (hit === undefined) throw new BadRequestDataError(`Query parameter '${name}' must be one of ${values.join(', ')}`, `${name}=${raw}`);
  return hit;
}

export interface Representation {
  format: 'normalized' | 'keyValues' | 'concise';
  sysAttrs: boolean;
}

const OPTION_VALUES = ['keyValues', 'simplified', 'concise', 'normalized', 'sysAttrs'] as const;

/** `options` and `format` (NGSI-LD §6.3.7): format wins over options; simplified = keyValues. */
export function representation(params: Params, extraOptions: readonly string[] = []): Representation & { options: Set<string> } {
  const options = new Set(csv(params, 'options') ?? []);
  for (const o of options) {
    if (!(OPTION_VALUES as readonly string[]).includes(o) && !extraOptions.includes(o)) {
      throw new InvalidRequestError(`Unknown option '${o}'`, `Allowed: ${[...OPTION_VALUES, ...extraOptions].join(', ')}`);
    }
  }
  // An unknown representation is a bad parameter value: InvalidRequest (NGSI-LD §6.3.7, §6.3.20).
  const FORMATS = ['normalized', 'keyValues', 'simplified', 'concise'] as const;
  const givenFormat = params.get('format');
  const format = FORMATS.find((f) => f === givenFormat);
  if (givenFormat !== undefined && format === undefined) {
    throw new InvalidRequestError(`Query parameter 'format' must be one of ${FORMATS.join(', ')}`, `format=${givenFormat}`);
  }
  const fromOptions = options.has('keyValues') || options.has('simplified')
    ? 'keyValues'
    : options.has('concise') ? 'concise' : 'normalized';
  const chosen = format === undefined ? fromOptions : format === 'simplified' ? 'keyValues' : format;
  return { format: chosen, sysAttrs: options.has('sysAttrs'), options };
}

export interface Page { limit: number; offset: number; count: boolean }

const PAGE_PARAMS = ['limit', 'offset'] as const;
const NEGATIVE_INTEGER = /^-\d{1,15}$/;

/** `limit`, `offset`, `count` (NGSI-LD §5.5.9): above the maximum 403 TooManyResults. */
export function page(params: Params, limits: { limitDefault: number; limitMax: number }): Page {
  // NOTE: a negative limit or offset is a bad value (400 BadRequestData), as limit=0 without count is
  // (ETSI 041_04); what is not an integer at all stays a bad syntax (InvalidRequest).
  for (const name of PAGE_PARAMS) {
    const raw = params.get(name);
    if (raw !== undefined && NEGATIVE_INTEGER.test(raw)) throw new BadRequestDataError(`Query parameter '${name}' must not be negative`, `${name}=${raw}`);
  }
  const limit = int(params, 'limit', 0) ?? limits.limitDefault;
  const offset = int(params, 'offset', 0) ?? 0;
  const count = bool(params, 'count');
  if (limit > limits.limitMax) {
    throw new TooManyResultsError(`limit ${limit} is above the maximum ${limits.limitMax}`);
  }
  if (limit === 0 && !count) throw new BadRequestDataError('limit=0 is only allowed with count=true');
  return { limit, offset, count };
}
