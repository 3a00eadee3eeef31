// Each registration member from its compact input to the expanded model (NGSI-LD §5.2.8, §5.2.9,
// §5.2.10, §5.2.11, §5.2.34), with a 400 BadRequestData whose detail names the member at fault.

import {
  BadRequestDataError, PatternSyntaxError, checkGeometry, compileIdPattern, isAbsoluteUri, nameProblem, parseDateTime,
  type Iri, type Json, type TermMapper,
} from '../ngsi/index.js';
import type { EntityInfoInput, ManagementInput, RegistrationInfoInput, TimeIntervalInput } from './input.js';
import {
  OPERATIONS, OPERATION_GROUPS, REGISTRATION_MODES,
  type EntityInfo, type RegistrationInfo, type RegistrationManagement, type RegistrationMode, type TimeInterval,
} from './model.js';

/** A 400 naming the member (dotted path) in its detail. */
export function invalidMember(member: string, why: string): BadRequestDataError {
  return new BadRequestDataError(`Invalid registration member '${member}'`, `${member}: ${why}`);
}

function parseName(member: string, name: string, mapper: TermMapper): Iri {
  const problem = nameProblem(name);
  if (problem !== undefined) throw invalidMember(member, problem);
  return mapper.expandTerm(name);
}

function parseNames(member: string, names: readonly string[], mapper: TermMapper): Iri[] {
  if (names.length === 0) throw invalidMember(member, 'must be a non-empty array of attribute names');
  return names.map((n, i) => parseName(`${member}[${i}]`, n, mapper));
}

function parseEntityInfo(e: EntityInfoInput, at: string, mapper: TermMapper): EntityInfo {
  if (e.type === undefined) throw invalidMember(`${at}.type`, 'an EntityInfo needs a type');
  const out: EntityInfo = { type: parseName(`${at}.type`, e.type, mapper) };
  if (e.id !== undefined && e.idPattern !== undefined) throw invalidMember(at, 'id and idPattern cannot both be given');
  if (e.id !== undefined) {
    if (!isAbsoluteUri(e.id)) throw invalidMember(`${at}.id`, `'${e.id}' is not an absolute URI`);
    out.id = e.id;
  }
  if (e.idPattern !== undefined) {
    try {
      compileIdPattern(e.idPattern);
    } catch (err) {
      if (err instanceof PatternSyntaxError) throw invalidMember(`${at}.idPattern`, `invalid regular expression: ${err.message}`);
      throw err;
    }
    out.idPattern = e.idPattern;
  }
  return out;
}

/** NGSI-LD §5.2.10: a non-empty array; each entry names entities, attributes or both. */
export function parseInformation(info: readonly RegistrationInfoInput[], mapper: TermMapper): RegistrationInfo[] {
  if (info.length === 0) throw invalidMember('information', 'must be a non-empty array of RegistrationInfo');
  return info.map((ri, i) => {
    const at = `information[${i}]`;
    if (ri.entities === undefined && ri.propertyNames === undefined && ri.relationshipNames === undefined) {
      throw invalidMember(at, 'a RegistrationInfo needs entities, propertyNames or relationshipNames');
    }
    const out: RegistrationInfo = {};
    if (ri.entities !== undefined) {
      if (ri.entities.length === 0) throw invalidMember(`${at}.entities`, 'must be a non-empty array of EntityInfo');
      out.entities = ri.entities.map((e, j) => parseEntityInfo(e, `${at}.entities[${j}]`, mapper));
    }
    if (ri.propertyNames !== undefined) out.propertyNames = parseNames(`${at}.propertyNames`, ri.propertyNames, mapper);
    if (ri.relationshipNames !== undefined) out.relationshipNames = parseNames(`${at}.relationshipNames`, ri.relationshipNames, mapper);
    return out;
  });
}

/** NGSI-LD §5.2.9 endpoint: an http(s) URI that is not this broker (it would forward to itself). */
export function parseEndpoint(text: string, isSelf: (url: URL) => boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidMember('endpoint', `'${text}' is not an absolute URI`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidMember('endpoint', `'${url.protocol.slice(0, -1)}' is not http or https`);
  if (isSelf(url)) throw invalidMember('endpoint', `${text} is this broker itself`);
  return text;
}

export function parseMode(mode: string): RegistrationMode {
  const hit = REGISTRATION_MODES.find((m) => m === mode);
  if (hit === undefined) throw invalidMember('mode', `'${mode}' is not one of ${REGISTRATION_MODES.join(', ')}`);
  return hit;
}

/** NGSI-LD §4.20: operation names and group names. */
export function parseOperations(ops: readonly string[]): string[] {
  if (ops.length === 0) throw invalidMember('operations', 'must be a non-empty array');
  ops.forEach((op, i) => {
    if (!(OPERATIONS as readonly string[]).includes(op) && !Object.hasOwn(OPERATION_GROUPS, op)) {
      throw invalidMember(`operations[${i}]`, `'${op}' is neither an operation nor a group of operations`);
    }
  });
  return [...ops];
}

export function parseExpiresAt(text: string, now: number): number {
  const at = parseDateTime(text);
  if (at === undefined) throw invalidMember('expiresAt', `'${text}' is not an ISO 8601 date-time`);
  if (at <= now) throw invalidMember('expiresAt', `${text} is not in the future`);
  return at;
}

/** NGSI-LD §5.2.11 TimeInterval: startAt, and endAt not before it. */
export function parseInterval(member: string, input: TimeIntervalInput): TimeInterval {
  if (input.startAt === undefined) throw invalidMember(`${member}.startAt`, 'is required');
  const start = parseDateTime(input.startAt);
  if (start === undefined) throw invalidMember(`${member}.startAt`, `'${input.startAt}' is not an ISO 8601 date-time`);
  const out: TimeInterval = { startAt: input.startAt };
  if (input.endAt !== undefined) {
    const end = parseDateTime(input.endAt);
    if (end === undefined) throw invalidMember(`${member}.endAt`, `'${input.endAt}' is not an ISO 8601 date-time`);
    if (end < start) throw invalidMember(`${member}.endAt`, 'is before startAt');
    out.endAt = input.endAt;
  }
  return out;
}

export function parseGeometry(member: string, value: Json): Json {
  const check = checkGeometry(value);
  if (!check.ok) throw invalidMember(member, check.reason);
  return value;
}

/** NGSI-LD §4.18 scopes: each a path of `/`-led segments. */
export function parseScope(scope: string | readonly string[]): string[] {
  const list = typeof scope === 'string' ? [scope] : [...scope];
  if (list.length === 0) throw invalidMember('scope', 'must be a scope or a non-empty array of scopes');
  list.forEach((s, i) => {
    if (!/^(\/[^/#+\s]+)+$/.test(s)) throw invalidMember(`scope[${i}]`, `'${s}' is not a scope such as /Madrid/Gardens`);
  });
  return list;
}

const ISO_DURATION = /^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/;

/** NGSI-LD §5.2.34 Table 5.2.34-1: timeout and cooldown above 0, cacheDuration an ISO 8601 duration. */
export function parseManagement(input: ManagementInput): RegistrationManagement {
  const out: RegistrationManagement = {};
  if (input.localOnly !== undefined) out.localOnly = input.localOnly;
  if (input.cacheDuration !== undefined) {
    if (!ISO_DURATION.test(input.cacheDuration)) throw invalidMember('management.cacheDuration', `'${input.cacheDuration}' is not an ISO 8601 duration`);
    out.cacheDuration = input.cacheDuration;
  }
  for (const m of ['timeout', 'cooldown'] as const) {
    const v = input[m];
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v <= 0) throw invalidMember(`management.${m}`, 'must be a number of milliseconds above 0');
    out[m] = v;
  }
  return out;
}

/** Additional registration properties (§5.2.9): any other member, its name expanded. */
export function parseProperties(props: Readonly<Record<string, Json>>, mapper: TermMapper): Record<Iri, Json> {
  const out: Record<Iri, Json> = {};
  for (const [name, value] of Object.entries(props)) {
    if (value === null) throw invalidMember(name, 'null is not a value');
    out[parseName(name, name, mapper)] = value;
  }
  return out;
}
