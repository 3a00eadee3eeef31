// The discovery repository (NGSI-LD §5.7.5-5.7.9): entity types and attributes of the live entities
// of a tenant, answered by GROUP BY over the type and attribute-kind indexes, never from documents.

import type BetterSqlite3 from 'better-sqlite3';
import { ATTRIBUTE_KINDS, type AttributeKind, type Iri } from '../../ngsi/index.js';
import { kindOfCode } from './attribute-kinds.js';
import type { IriDictionary } from '../iris.js';
import type { ReadScope } from '../read-scope.js';
import type { SqlFragment } from '../sql-fragment.js';
import { createLru } from '../../lib/index.js';

/** The attribute names found on the live entities of one type. */
export interface TypeAttributes {
  type: Iri;
  attrs: Iri[];
}

/** One entity type: how many live entities have it, and the kinds of each of their attributes. */
export interface TypeInfo {
  type: Iri;
  entityCount: number;
  attrs: Array<{ attr: Iri; kinds: AttributeKind[] }>;
}

/** One attribute name over the live entities of a tenant. */
export interface AttributeInfo {
  attr: Iri;
  kinds: AttributeKind[];
  /** Types of the entities that have it. */
  types: Iri[];
  /** Attribute instances with this name (each datasetId instance counts). */
  instanceCount: number;
}

export interface DiscoveryRepository {
  /** Types of live entities, ordered by IRI. */
  types(scope: ReadScope): Iri[];
  /** Each type of live entities with the attributes those entities have, ordered by type IRI. */
  typesWithAttributes(scope: ReadScope): TypeAttributes[];
  /** undefined when no live entity has the type. */
  typeInfo(scope: ReadScope, type: Iri): TypeInfo | undefined;
  /** Attribute names of live entities, ordered by IRI. */
  attributes(scope: ReadScope): Iri[];
  /** Details of every attribute name, or of the one given (empty when no live entity has it). */
  attributeInfos(scope: ReadScope, attr?: Iri): AttributeInfo[];
}

/**
 * NOTE: a bound on every list query. Distinct types and attribute names of one gateway stay far
 * below it; the grouped rows of the details queries are (type, attribute) and (attribute, kind) pairs.
 */
const DISCOVERY_ROW_LIMIT = 100_000;

type Params = Record<string, unknown>;

/** Live entities of @tenant, joined to an index table aliased x. */
const LIVE = 'JOIN entities e ON e.rowid = x.entity AND e.tenant = @tenant AND e.deleted_at IS NULL';

const KIND_ORDER = new Map<string, number>(ATTRIBUTE_KINDS.map((k, i) => [k, i]));

/** Kinds without repeats, in the order the spec lists them (Property, Relationship, GeoProperty, ...). */
function sortKinds(kinds: Iterable<AttributeKind>): AttributeKind[] {
  return [...new Set(kinds)].sort((a, b) => (KIND_ORDER.get(a) ?? 0) - (KIND_ORDER.get(b) ?? 0));
}

function groupInto<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The statements of one read filter: `live` joins the entities the reader may see. */
function prepareAll(db: BetterSqlite3.Database, live: string) {
  /** Per-attribute statements, over all attributes or (`one`) the attribute @attr. */
  const attrStatements = (one: boolean) => ({
    kinds: db.prepare<[Params], { attr: string; kind: number; n: number }>(`
      SELECT i.iri AS attr, x.kind, sum(x.instances) AS n
      FROM entity_attr_kinds x ${live} JOIN iris i ON i.id = x.attr
      ${one ? 'WHERE x.attr = @attr' : ''}
      GROUP BY x.attr, x.kind ORDER BY i.iri LIMIT CAST(@limit AS INTEGER)`),
    types: db.prepare<[Params], { attr: string; type: string }>(`
      SELECT ai.iri AS attr, ti.iri AS type
      FROM entity_attr_kinds x ${live} JOIN entity_types t ON t.entity = x.entity
      JOIN iris ai ON ai.id = x.attr JOIN iris ti ON ti.id = t.iri
      ${one ? 'WHERE x.attr = @attr' : ''}
      GROUP BY x.attr, t.iri ORDER BY ai.iri, ti.iri LIMIT CAST(@limit AS INTEGER)`),
  });
  return {
    typeList: db.prepare<[Params], string>(`
      SELECT i.iri FROM entity_types x ${live} JOIN iris i ON i.id = x.iri
      GROUP BY x.iri ORDER BY i.iri LIMIT CAST(@limit AS INTEGER)`).pluck(),
    typeAttrs: db.prepare<[Params], { type: string; attr: string | null }>(`
      SELECT ti.iri AS type, ai.iri AS attr
      FROM entity_types x ${live} JOIN iris ti ON ti.id = x.iri
      LEFT JOIN entity_attr_kinds k ON k.entity = x.entity LEFT JOIN iris ai ON ai.id = k.attr
      GROUP BY x.iri, k.attr ORDER BY ti.iri, ai.iri LIMIT CAST(@limit AS INTEGER)`),
    typeCount: db.prepare<[Params], number>(`SELECT count(*) FROM entity_types x ${live} WHERE x.iri = @type`).pluck(),
    typeKinds: db.prepare<[Params], { attr: string; kind: number }>(`
      SELECT ai.iri AS attr, k.kind
      FROM entity_types x ${live} JOIN entity_attr_kinds k ON k.entity = x.entity JOIN iris ai ON ai.id = k.attr
      WHERE x.iri = @type GROUP BY k.attr, k.kind ORDER BY ai.iri LIMIT CAST(@limit AS INTEGER)`),
    attrList: db.prepare<[Params], string>(`
      SELECT i.iri FROM entity_attr_kinds x ${live} JOIN iris i ON i.id = x.attr
      GROUP BY x.attr ORDER BY i.iri LIMIT CAST(@limit AS INTEGER)`).pluck(),
    allAttrs: attrStatements(false),
    oneAttr: attrStatements(true),
  };
}

/** Statement sets kept per distinct read filter (a filter's SQL varies with the kinds of permissions held). */
const FILTERED_SETS = 32;

export function createDiscoveryRepository(
  db: BetterSqlite3.Database, iris: IriDictionary, readFilter: (scope: ReadScope) => SqlFragment | undefined,
): DiscoveryRepository {
  const unfiltered = prepareAll(db, LIVE);
  const filtered = createLru<string, ReturnType<typeof prepareAll>>(FILTERED_SETS);
  /** The statements and parameters of a reader: every entity of the tenant, or those it may read. */
  const of = (scope: ReadScope, extra: Params = {}) => {
    const p: Params = { tenant: scope.tenant, limit: DISCOVERY_ROW_LIMIT, ...extra };
    const access = readFilter(scope);
    if (access === undefined) return { s: unfiltered, p };
    let s = filtered.get(access.sql);
    if (!s) {
      s = prepareAll(db, `${LIVE} AND ${access.sql}`);
      filtered.set(access.sql, s);
    }
    return { s, p: { ...p, ...access.params } };
  };

  return {
    types: (scope) => {
      const { s, p } = of(scope);
      return s.typeList.all(p);
    },

    typesWithAttributes(scope) {
      const byType = new Map<Iri, Iri[]>();
      const { s, p } = of(scope);
      for (const row of s.typeAttrs.all(p)) {
        if (!byType.has(row.type)) byType.set(row.type, []);
        if (row.attr !== null) byType.get(row.type)?.push(row.attr);
      }
      return [...byType].map(([type, attrs]) => ({ type, attrs }));
    },

    typeInfo(scope, type) {
      const typeId = iris.lookup(type);
      if (typeId === undefined) return undefined;
      const { s, p } = of(scope, { type: typeId });
      const entityCount = s.typeCount.get(p) ?? 0;
      if (entityCount === 0) return undefined;
      const kinds = new Map<Iri, AttributeKind[]>();
      for (const row of s.typeKinds.all(p)) {
        const kind = kindOfCode(row.kind);
        if (kind) groupInto(kinds, row.attr, kind);
      }
      return { type, entityCount, attrs: [...kinds].map(([attr, list]) => ({ attr, kinds: sortKinds(list) })) };
    },

    attributes: (scope) => {
      const { s, p } = of(scope);
      return s.attrList.all(p);
    },

    attributeInfos(scope, attr) {
      const attrId = attr === undefined ? undefined : iris.lookup(attr);
      if (attr !== undefined && attrId === undefined) return [];
      const { s, p } = of(scope, attrId === undefined ? {} : { attr: attrId });
      const stmts = attrId === undefined ? s.allAttrs : s.oneAttr;
      const out = new Map<Iri, AttributeInfo>();
      for (const row of stmts.kinds.all(p)) {
        let info = out.get(row.attr);
        if (!info) {
          info = { attr: row.attr, kinds: [], types: [], instanceCount: 0 };
          out.set(row.attr, info);
        }
        const kind = kindOfCode(row.kind);
        if (kind) info.kinds = sortKinds([...info.kinds, kind]);
        info.instanceCount += row.n;
      }
      for (const row of stmts.types.all(p)) out.get(row.attr)?.types.push(row.type);
      return [...out.values()];
    },
  };
}
