// Which registrations an operation is forwarded to (NGSI-LD §4.3.6, §5.6, §5.7 "if there are
// matching registrations"): live ones whose operations name it and whose information covers the
// entity (type, id, idPattern) and the attributes; with the attribute names each one covers.
// A count of registrations per tenant, kept in memory, spares the store when a tenant has none.

import { compileIdPattern, type Iri } from '../ngsi/index.js';
import type { Store } from '../store/index.js';
import { fromStored } from './codec.js';
import { OPERATION_GROUPS, type EntityInfo, type Operation, type Registration, type RegistrationInfo } from './model.js';

/** What an operation is about: an entity id, or types (and an idPattern) for a query; attributes when it names some. */
export interface SourceSelector {
  id?: string;
  types?: readonly Iri[];
  idPattern?: string;
  attrs?: readonly Iri[];
}

export interface MatchedSource {
  reg: Registration;
  /** The attribute names its matching information covers; undefined: every attribute. */
  attrs: Iri[] | undefined;
  /** The entity ids its matching information names, when it names entities by id only (a query is narrowed to them). */
  ids?: string[];
  /** The operation it is asked with: the first of those asked for that it allows. */
  op: Operation;
  /** The entity types its matching information names. */
  types: Iri[];
}

/** Most registrations one operation looks at. */
const MAX_SOURCES = 1_000;

/** Whether a registration allows an operation, its groups expanded (NGSI-LD §4.20). */
function allowsOperation(reg: Registration, op: Operation): boolean {
  // NOTE: a purge deletes the entities of a selection: a source that takes their deletion takes it.
  const ops: readonly Operation[] = op === 'purgeEntity' ? ['purgeEntity', 'deleteEntity'] : [op];
  return reg.operations.some((o) => ops.some((one) => o === one || (OPERATION_GROUPS[o]?.includes(one) ?? false)));
}

function entityMatches(e: EntityInfo, sel: SourceSelector): boolean {
  if (sel.types !== undefined && !sel.types.includes(e.type)) return false;
  if (sel.id !== undefined) {
    if (e.id !== undefined && e.id !== sel.id) return false;
    if (e.idPattern !== undefined && !compileIdPattern(e.idPattern).test(sel.id)) return false;
  }
  if (sel.idPattern !== undefined && e.id !== undefined && !compileIdPattern(sel.idPattern).test(e.id)) return false;
  return true;
}

const namesOf = (info: RegistrationInfo): Iri[] => [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];

/** The ids of the matching entity infos of a registration, when each of them names an id. */
function idsOf(reg: Registration, sel: SourceSelector): string[] | undefined {
  const ids: string[] = [];
  for (const info of reg.information) {
    if (info.entities === undefined) return undefined;
    for (const e of info.entities) {
      if (!entityMatches(e, sel)) continue;
      if (e.id === undefined) return undefined;
      ids.push(e.id);
    }
  }
  return ids.length > 0 ? ids : undefined;
}

/** The attributes a registration covers for the selector; null when it does not match. */
function coverage(reg: Registration, selector: SourceSelector): Iri[] | undefined | null {
  // An empty list of attributes (an entity written without any) names none in particular.
  const { attrs: named, ...rest } = selector;
  const sel: SourceSelector = named !== undefined && named.length > 0 ? selector : rest;
  let all = false;
  const names = new Set<Iri>();
  let matched = false;
  for (const info of reg.information) {
    if (info.entities !== undefined && !info.entities.some((e) => entityMatches(e, sel))) continue;
    const own = namesOf(info);
    if (own.length === 0) {
      matched = true;
      all = true;
      continue;
    }
    const wanted = sel.attrs === undefined ? own : own.filter((n) => sel.attrs?.includes(n));
    if (wanted.length === 0) continue;
    matched = true;
    for (const n of wanted) names.add(n);
  }
  if (!matched) return null;
  return all ? (sel.attrs === undefined ? undefined : [...sel.attrs]) : [...names];
}

export interface SourceIndex {
  /** Whether the tenant may have registrations (cheap: no store read). */
  has(tenant: string): boolean;
  added(tenant: string): void;
  removed(tenant: string): void;
  /** A registration of the tenant was updated. */
  changed(tenant: string): void;
  /** The live registrations of the tenant an operation goes to (the first of `ops` each allows), in creation order. */
  match(tenant: string, ops: Operation | readonly Operation[], sel: SourceSelector, now: number): MatchedSource[];
}

/** Matches remembered per tenant (the same queries and writes come again and again); beyond it, all are dropped. */
const MAX_REMEMBERED = 512;

/** The sources of one operation and selector, and until when they hold (the first expiresAt among them). */
interface Remembered {
  sources: MatchedSource[];
  until: number;
}

const selectorKey = (ops: readonly Operation[], sel: SourceSelector): string =>
  `${ops.join(',')}\u0000${sel.id ?? ''}\u0000${sel.types?.join(',') ?? '*'}\u0000${sel.idPattern ?? ''}\u0000${sel.attrs?.join(',') ?? '*'}`;

function matchStored(store: Store, tenant: string, ops: readonly Operation[], sel: SourceSelector, now: number): MatchedSource[] {
  const narrow = sel.id !== undefined ? { ids: [sel.id] } : sel.types !== undefined ? { types: sel.types } : {};
  const out: MatchedSource[] = [];
  for (const stored of store.registrations.candidates(tenant, { now, limit: MAX_SOURCES, ...narrow })) {
    const reg = fromStored(stored);
    const op = ops.find((o) => allowsOperation(reg, o));
    if (op === undefined) continue;
    const attrs = coverage(reg, sel);
    if (attrs === null) continue;
    const ids = sel.id === undefined ? idsOf(reg, sel) : undefined;
    const types = [...new Set(reg.information.flatMap((i) => (i.entities ?? []).filter((e) => entityMatches(e, sel)).map((e) => e.type)))];
    out.push(ids === undefined ? { reg, attrs, op, types } : { reg, attrs, op, types, ids });
  }
  return out;
}

/**
 * NOTE: the matches of a tenant are remembered until one of its registrations is created, updated or
 * removed (every such write goes through the registration service, which tells the index), or until
 * the first of the matched registrations expires: a forwarded query then costs no store read and no
 * decoding of registrations.
 */
export function createSourceIndex(store: Store): SourceIndex {
  const counts = store.registrations.countByTenant();
  const remembered = new Map<string, Map<string, Remembered>>();
  const forget = (tenant: string): void => void remembered.delete(tenant);
  return {
    has: (tenant) => (counts.get(tenant) ?? 0) > 0,
    added(tenant) {
      counts.set(tenant, (counts.get(tenant) ?? 0) + 1);
      forget(tenant);
    },
    removed(tenant) {
      counts.set(tenant, Math.max(0, (counts.get(tenant) ?? 0) - 1));
      forget(tenant);
    },
    changed: forget,
    match(tenant, asked, sel, now) {
      if ((counts.get(tenant) ?? 0) === 0) return [];
      const ops: readonly Operation[] = typeof asked === 'string' ? [asked] : asked;
      let own = remembered.get(tenant);
      const key = selectorKey(ops, sel);
      const known = own?.get(key);
      if (known !== undefined && now < known.until) return known.sources;
      const sources = matchStored(store, tenant, ops, sel, now);
      const until = Math.min(Infinity, ...sources.map((s) => s.reg.expiresAt ?? Infinity));
      if (own === undefined || own.size >= MAX_REMEMBERED) remembered.set(tenant, (own = new Map()));
      own.set(key, { sources, until });
      return sources;
    },
  };
}
