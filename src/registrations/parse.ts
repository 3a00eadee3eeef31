// Create and Update Context Source Registration inputs to the model (NGSI-LD §5.9.2, §5.9.3): every
// member parsed and expanded, then the rules of the registration modes checked on the result.

import { formatDateTime, isAbsoluteUri, type Iri, type Json, type TermMapper } from '../ngsi/index.js';
import type { RegistrationInput } from './input.js';
import { DEFAULT_OPERATIONS, OPERATION_GROUPS, READ_OPERATIONS, type Operation, type Registration } from './model.js';
import {
  invalidMember, parseEndpoint, parseExpiresAt, parseGeometry, parseInformation, parseInterval, parseManagement, parseMode,
  parseOperations, parseProperties, parseScope,
} from './parse-members.js';
import { checkSourceCredentials } from './source-auth.js';

export interface ParseRegistrationOptions {
  /** Expands the names of the request (its Link header or body @context). */
  mapper: TermMapper;
  /** The request's @context as given; absent when the request used the core context only. */
  context?: Json | undefined;
  now: number;
  /** Draws a uuid for a registration created without id. */
  newId: () => string;
  /** Whether an endpoint is this broker itself. */
  isSelf: (url: URL) => boolean;
}

/** Members an update may set or remove. */
type Writable = Omit<Registration, 'id' | 'createdAt' | 'modifiedAt' | 'context' | 'owner' | 'properties'>;
type Optional = 'registrationName' | 'description' | 'tenant' | 'observationInterval' | 'managementInterval' | 'location'
  | 'observationSpace' | 'operationSpace' | 'expiresAt' | 'expiresAtText' | 'contextSourceInfo' | 'scope' | 'management';

/** The members present in the input, parsed; `null` ones listed to be removed. */
function parseGiven(input: RegistrationInput, opts: Omit<ParseRegistrationOptions, 'newId' | 'context'>): { set: Partial<Writable>; removed: Optional[] } {
  const set: Partial<Writable> = {};
  const removed: Optional[] = [];
  const { mapper } = opts;
  const put = <K extends Optional>(member: K, value: unknown, parse: () => Writable[K]): void => {
    if (value === undefined) return;
    if (value === null) removed.push(member);
    else set[member] = parse();
  };
  if (input.information === null) throw invalidMember('information', 'is mandatory and cannot be removed');
  if (input.endpoint === null) throw invalidMember('endpoint', 'is mandatory and cannot be removed');
  if (input.information !== undefined) set.information = parseInformation(input.information, mapper);
  if (input.endpoint !== undefined) set.endpoint = parseEndpoint(input.endpoint, opts.isSelf);
  if (input.mode !== undefined) set.mode = input.mode === null ? 'inclusive' : parseMode(input.mode);
  if (input.operations !== undefined) set.operations = input.operations === null ? [...DEFAULT_OPERATIONS] : parseOperations(input.operations);
  put('registrationName', input.registrationName, () => input.registrationName ?? undefined);
  put('description', input.description, () => input.description ?? undefined);
  put('tenant', input.tenant, () => input.tenant ?? undefined);
  put('observationInterval', input.observationInterval, () => parseInterval('observationInterval', input.observationInterval ?? {}));
  put('managementInterval', input.managementInterval, () => parseInterval('managementInterval', input.managementInterval ?? {}));
  for (const geo of ['location', 'observationSpace', 'operationSpace'] as const) put(geo, input[geo], () => parseGeometry(geo, input[geo] ?? null));
  put('expiresAt', input.expiresAt, () => parseExpiresAt(input.expiresAt ?? '', opts.now));
  if (input.expiresAt === null) removed.push('expiresAtText');
  if (typeof input.expiresAt === 'string') {
    if (set.expiresAt !== undefined && formatDateTime(set.expiresAt) !== input.expiresAt) set.expiresAtText = input.expiresAt;
    else removed.push('expiresAtText');
  }
  put('contextSourceInfo', input.contextSourceInfo, () => {
    const pairs = (input.contextSourceInfo ?? []).map((p) => ({ key: p.key, value: p.value }));
    checkSourceCredentials(pairs);
    return pairs;
  });
  put('scope', input.scope, () => parseScope(input.scope ?? []));
  put('management', input.management, () => parseManagement(input.management ?? {}));
  return { set, removed };
}

/** The operations a registration names, groups resolved. */
function operationsOf(reg: Pick<Registration, 'operations'>): Set<Operation> {
  const out = new Set<Operation>();
  for (const op of reg.operations) {
    const group = Object.hasOwn(OPERATION_GROUPS, op) ? OPERATION_GROUPS[op] : undefined;
    // parseOperations let only operation and group names through.
    for (const o of group ?? [op as Operation]) out.add(o);
  }
  return out;
}

/**
 * The rules of the modes on one registration (NGSI-LD §4.3.6.3, §5.9.2.4): an exclusive one names
 * entities by id and the attributes it holds of them (no idPattern, no whole type); an auxiliary one
 * only reads.
 */
function checkRegistration(reg: Registration): void {
  if (reg.mode === 'exclusive') {
    reg.information.forEach((info, i) => {
      if (info.entities === undefined) throw invalidMember(`information[${i}].entities`, 'an exclusive registration names its entities by id');
      info.entities.forEach((e, j) => {
        if (e.id === undefined) throw invalidMember(`information[${i}].entities[${j}]`, 'an exclusive registration names its entities by id (no idPattern, no whole type)');
      });
      if (info.propertyNames === undefined && info.relationshipNames === undefined) {
        throw invalidMember(`information[${i}]`, 'an exclusive registration names the attributes it holds');
      }
    });
  }
  if (reg.mode === 'auxiliary') {
    // NOTE: the default operations (federationOps) name the subscription operations beside the reads:
    // they write no entity, so an auxiliary registration without `operations` is accepted.
    for (const op of operationsOf(reg)) {
      if (!READ_OPERATIONS.has(op) && !OPERATION_GROUPS['federationOps']!.includes(op)) {
        throw invalidMember('operations', `an auxiliary registration only serves reads, not ${op}`);
      }
    }
  }
}

/** NGSI-LD §5.9.2 Register Context Source: the whole registration, defaults applied. */
export function parseRegistration(input: RegistrationInput, opts: ParseRegistrationOptions): Registration {
  if (input.type !== 'ContextSourceRegistration') {
    throw invalidMember('type', input.type === undefined ? 'type is required and must be ContextSourceRegistration' : `'${input.type}' is not ContextSourceRegistration`);
  }
  let id = input.id;
  if (id === undefined) id = `urn:ngsi-ld:ContextSourceRegistration:${opts.newId()}`;
  else if (!isAbsoluteUri(id)) throw invalidMember('id', `'${id}' is not an absolute URI`);
  const { set, removed } = parseGiven(input, opts);
  const nulls = removed.filter((m) => m !== 'expiresAtText' || input.expiresAt === null);
  if (nulls.length > 0) throw invalidMember(nulls[0] ?? '', 'null is not a value');
  if (set.information === undefined) throw invalidMember('information', 'is required');
  if (set.endpoint === undefined) throw invalidMember('endpoint', 'is required');
  const reg: Registration = {
    ...set, id, information: set.information, endpoint: set.endpoint, mode: set.mode ?? 'inclusive',
    operations: set.operations ?? [...DEFAULT_OPERATIONS], properties: parseProperties(input.properties, opts.mapper),
    createdAt: opts.now, modifiedAt: opts.now,
  };
  if (opts.context !== undefined) reg.context = opts.context;
  checkRegistration(reg);
  return reg;
}

/** The additional properties after a merge-patch: null removes one, any other value replaces it. */
function patchProperties(current: Readonly<Record<Iri, Json>>, given: Readonly<Record<string, Json>>, mapper: TermMapper): Record<Iri, Json> {
  const out = { ...current };
  const values: Record<string, Json> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value === null) delete out[mapper.expandTerm(name)];
    else values[name] = value;
  }
  return { ...out, ...parseProperties(values, mapper) };
}

/**
 * NGSI-LD §5.9.3 Update Context Source Registration: each member given replaces the stored one
 * whole; `null` removes an optional member (information and endpoint are mandatory).
 */
export function patchRegistration(current: Registration, input: RegistrationInput, opts: Omit<ParseRegistrationOptions, 'newId' | 'context'>): Registration {
  if (input.type !== undefined && input.type !== 'ContextSourceRegistration') throw invalidMember('type', `'${input.type}' is not ContextSourceRegistration`);
  if (input.id !== undefined && input.id !== current.id) throw invalidMember('id', `the id ${input.id} differs from ${current.id}`);
  const { set, removed } = parseGiven(input, opts);
  const next: Registration = { ...current, ...set, properties: patchProperties(current.properties, input.properties, opts.mapper), modifiedAt: opts.now };
  for (const m of removed) delete next[m];
  checkRegistration(next);
  return next;
}
