// One listing engine for entity rows: the where clause of an EntityListQuery (ids, types, attributes,
// filters) over `entities e`, a page in creation order and an optional count, with statements cached
// by their SQL text (the filter combination, never values).

import type BetterSqlite3 from 'better-sqlite3';
import { createLru } from '../../lib/index.js';
import type { Entity } from '../../ngsi/index.js';
import { VERSIONED_ROW, createVersionedDecoder, type VersionedDecoder, type VersionedTuple } from './entity-doc.js';
import { translateFilter } from './entity-filters.js';
import { MATCH_NOTHING, type FilterContext, type SqlFragment } from '../sql-fragment.js';
import type { IriDictionary } from '../iris.js';
import type { EntityListQuery } from '../types.js';

const STATEMENT_CACHE_SIZE = 128;
/** Decoded entities kept for the next listings (a page holds at most 1,000 by default). */
const DECODED_CACHE_SIZE = 2_048;
/** Type ranges merged in one walk; SQLite allows 500 terms in a compound SELECT. */
const MAX_MERGED_TYPES = 64;

export interface SelectScope {
  /** Conditions every row must meet besides the query (tenant, liveness, …); `@tenant` is bound. */
  base: string[];
  /** The clause for `attrs` (entities having any of the IRI ids in `@attrs`). */
  attrsClause: string;
  /** FROM clause to use when the query lists ids (an index hint). */
  fromWithIds?: string;
}

/** `access`: the read filter of the reader (a rowid list), when it may not read every entity. */
export type EntitySelect = (
  tenant: string, q: EntityListQuery, scope: SelectScope, access?: SqlFragment,
) => { entities: Entity[]; count?: number };

type Statement = BetterSqlite3.Statement<[Record<string, unknown>], unknown>;

/** The rows a statement walks (FROM) and the column that orders them by creation. */
interface Source {
  from: string;
  order: string;
}

/** Rows read by rowid, from a candidate list or in order (see tableSource). */
const BY_ROWID: Source = { from: 'entities e NOT INDEXED', order: 'e.rowid' };

/**
 * Adds the type condition (any of the IRI ids); returns the rows to walk when the types lead.
 * NOTE: the key of `entity_types` (iri, entity) lists an IRI's entities in creation order; without
 * it the planner walks the tenant's whole creation-order index and tests each entity's types,
 * crossing every entity of other types before the first match.
 * - another list drives (ids, a q or geo candidate list): a probe of each candidate's types, as two
 *   lists would both be built in full and intersected;
 * - otherwise the walk starts in the type index, one range per type merged in entity order (UNION
 *   drops an entity having several of the types), and the rows are joined by rowid: a page stops as
 *   soon as it is full, however many entities have the types;
 * - too many types to merge: the set of their entities, built in full, then read by rowid.
 */
function addTypes(typeIds: number[], isProbe: boolean, where: string[], params: Record<string, unknown>): Source | undefined {
  const names = typeIds.map((id, i) => {
    params[`type${i}`] = id;
    return `@type${i}`;
  });
  if (isProbe) {
    where.push(`EXISTS (SELECT 1 FROM entity_types x WHERE x.entity = e.rowid AND x.iri IN (${names.join(', ')}))`);
    return undefined;
  }
  if (names.length > MAX_MERGED_TYPES) {
    where.push(`e.rowid IN (SELECT t.entity FROM entity_types t WHERE t.iri IN (${names.join(', ')}))`);
    return BY_ROWID;
  }
  const ranges = names.map((name) => `SELECT t.entity FROM entity_types t WHERE t.iri = ${name}`);
  const merged = ranges.length === 1 ? ranges.join('') : `${ranges.join(' UNION ')} ORDER BY 1`;
  return { from: `(${merged}) u CROSS JOIN entities e ON e.rowid = u.entity`, order: 'u.entity' };
}

/**
 * The rows to walk when no type leads: the ids' index hint, or else the table in rowid (creation)
 * order, either probed by a filter's candidate list or walked until the page is full.
 * NOTE: left alone, the planner seeks each listed candidate in the (tenant, id) index first, then in
 * the table: a second seek per candidate for a test the row itself answers; and without a list it
 * would sort the tenant's (tenant, id) range by rowid before returning the first row.
 */
function tableSource(scope: SelectScope, hasIds: boolean): Source {
  return hasIds ? { from: scope.fromWithIds ?? 'entities e', order: 'e.rowid' } : BY_ROWID;
}

/**
 * A page's keys, flat: rowid, version, rowid, version, … in page order.
 * NOTE: a page statement reads two integers a row, not the documents: a listing of 100 unchanged
 * entities read and compared every document (about 40 KB of text) only to find it the same.
 */
type PageKeys = number[];

/**
 * The page statement of a listing in creation order returns its keys as one text, the pairs joined
 * by commas. NOTE: better-sqlite3 builds a JavaScript array per row through V8's API, which cost a
 * page of 100 rows more than SQLite's walk; one text and one JSON.parse cost less than half of that.
 */
function pageKeysSql(from: string, where: string, order: string): string {
  return `SELECT group_concat(k) FROM (SELECT e.rowid || ',' || e.version AS k FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT CAST(@limit AS INTEGER) OFFSET CAST(@offset AS INTEGER))`;
}

/**
 * The keys of a page in creation (rowid) order from the text of pageKeysSql. SQLite does not promise
 * the order in which group_concat joins its rows, so it is checked here; a page out of order (never
 * seen) is sorted, as its order is the rowid's.
 */
export function keysInRowidOrder(text: string | null): PageKeys {
  if (text === null) return [];
  const keys = JSON.parse(`[${text}]`) as PageKeys;
  for (let i = 2; i < keys.length; i += 2) {
    if (keys[i]! > keys[i - 2]!) continue;
    const pairs: Array<[number, number]> = [];
    for (let j = 0; j < keys.length; j += 2) pairs.push([keys[j]!, keys[j + 1]!]);
    return pairs.sort((x, y) => x[0] - y[0]).flat();
  }
  return keys;
}

/**
 * The entities of a page's keys, in order: each kept decoding of the same version as it is, the
 * others read by rowid in one statement and decoded. Both reads run in one synchronous turn of the
 * only connection that writes, so they see the same rows.
 */
function entitiesAt(keys: PageKeys, decoder: VersionedDecoder, byRowids: BetterSqlite3.Statement<[string], unknown>): Entity[] {
  const out: Entity[] = new Array<Entity>(keys.length / 2);
  let missing: number[] | undefined;
  for (let i = 0; i < out.length; i++) {
    const entity = decoder.known(keys[2 * i]!, keys[2 * i + 1]!);
    if (entity !== undefined) out[i] = entity;
    else (missing ??= []).push(i);
  }
  if (missing === undefined) return out;
  const read = new Map<number, Entity>();
  // NOTE: a raw-mode statement of VERSIONED_ROW returns VersionedTuple arrays.
  for (const row of byRowids.all(JSON.stringify(missing.map((i) => keys[2 * i]))) as VersionedTuple[]) read.set(row[0], decoder.decode(row));
  for (const i of missing) {
    const entity = read.get(keys[2 * i]!);
    if (entity === undefined) throw new Error(`entity row ${keys[2 * i]} vanished between two reads of one listing`);
    out[i] = entity;
  }
  return out;
}

export function createEntitySelect(db: BetterSqlite3.Database, iris: IriDictionary): EntitySelect {
  const cache = createLru<string, Statement>(STATEMENT_CACHE_SIZE);
  const decoder = createVersionedDecoder(DECODED_CACHE_SIZE);
  const byRowids = db.prepare<[string], unknown>(`SELECT ${VERSIONED_ROW} FROM entities e WHERE e.rowid IN (SELECT value FROM json_each(?))`).raw(true);
  const prepare = (sql: string, shape: (stmt: Statement) => Statement): Statement => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = shape(db.prepare<[Record<string, unknown>], unknown>(sql));
      cache.set(sql, stmt);
    }
    return stmt;
  };
  const known = (list: string[]): number[] => list.map((t) => iris.lookup(t)).filter((id) => id !== undefined);

  return (tenant, q, scope, access) => {
    const none = q.count ? { entities: [], count: 0 } : { entities: [] };
    const params: Record<string, unknown> = { tenant };
    const where = [...scope.base];
    const hasIds = q.ids !== undefined && q.ids.length > 0;
    if (hasIds) {
      params['ids'] = JSON.stringify(q.ids);
      where.push('e.id IN (SELECT value FROM json_each(@ids))');
    }
    const typeIds = q.types && q.types.length > 0 ? known(q.types) : undefined;
    // No requested IRI was ever stored: nothing can match.
    if (typeIds?.length === 0) return none;
    if (q.attrs && q.attrs.length > 0) {
      const attrIds = known(q.attrs);
      if (attrIds.length === 0) return none;
      params['attrs'] = JSON.stringify(attrIds);
      where.push(scope.attrsClause);
    }
    const filters: string[] = [];
    let hasRowidList = false;
    let n = 0;
    const fctx: FilterContext = { db, iris, param: (prefix) => `${prefix}${n++}` };
    const fragments = (q.filters ?? []).map((filter) => translateFilter(filter, fctx));
    if (access !== undefined) fragments.push(access);
    for (const fragment of fragments) {
      if (fragment === MATCH_NOTHING) return none;
      filters.push(`(${fragment.sql})`);
      Object.assign(params, fragment.params);
      hasRowidList ||= fragment.isRowidList === true;
    }
    const source = (typeIds && addTypes(typeIds, hasIds || hasRowidList, where, params)) ?? tableSource(scope, hasIds);
    const whereSql = [...where, ...filters].join(' AND ');
    const out: { entities: Entity[]; count?: number } = { entities: [] };
    if (q.limit > 0) {
      const bound = { ...params, limit: q.limit, offset: q.offset };
      let keys: PageKeys;
      if (q.orderById === undefined) {
        // NOTE: a plucked group_concat returns its text, or null for no row.
        keys = keysInRowidOrder(prepare(pageKeysSql(source.from, whereSql, source.order), (s) => s.pluck(true)).get(bound) as string | null);
      } else {
        const order = `e.id ${q.orderById === 'desc' ? 'DESC' : 'ASC'}, ${source.order}`;
        const sql = `SELECT e.rowid, e.version FROM ${source.from} WHERE ${whereSql} ORDER BY ${order} LIMIT CAST(@limit AS INTEGER) OFFSET CAST(@offset AS INTEGER)`;
        // NOTE: a raw-mode statement of two integer columns returns pairs.
        keys = (prepare(sql, (s) => s.raw(true)).all(bound) as Array<[number, number]>).flat();
      }
      out.entities = entitiesAt(keys, decoder, byRowids);
    }
    if (q.count) {
      // NOTE: a plucked count statement returns the number.
      const total = prepare(`SELECT count(*) FROM ${source.from} WHERE ${whereSql}`, (s) => s.pluck(true)).get(params) as number | undefined;
      out.count = total ?? 0;
    }
    return out;
  };
}
