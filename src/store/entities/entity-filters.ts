// Translation of domain entity filters (ngsi/filters) into SQL fragments over `entities e`, with
// named parameters only: values are always bound, never concatenated.

import type BetterSqlite3 from 'better-sqlite3';
import { compileIdPattern, type EntityFilter } from '../../ngsi/index.js';
import type { IriDictionary } from '../iris.js';
import { MATCH_NOTHING, type FilterContext, type FilterTranslator, type SqlFragment } from '../sql-fragment.js';
import { registerRegexpFunction } from '../sql-regexp.js';
import { translateGeoFilter } from './geo-sql.js';
import { QUERY_FILTER_TRANSLATORS } from './q-sql.js';

export type { FilterContext, FilterTranslator, SqlFragment } from '../sql-fragment.js';

/** SQL functions the translators rely on, registered once per connection. */
export function registerSqlFunctions(db: BetterSqlite3.Database): void {
  registerRegexpFunction(db, 'ngsi_regexp', compileIdPattern);
}

function idPattern(filter: EntityFilter, ctx: FilterContext): SqlFragment | undefined {
  if (filter.kind !== 'idPattern') return undefined;
  const p = ctx.param('idp');
  return { sql: `ngsi_regexp(@${p}, e.id)`, params: { [p]: filter.pattern } };
}

function ids(filter: EntityFilter, ctx: FilterContext): SqlFragment | undefined {
  if (filter.kind !== 'ids') return undefined;
  const p = ctx.param('ids');
  return { sql: `e.id IN (SELECT value FROM json_each(@${p}))`, params: { [p]: JSON.stringify(filter.ids) } };
}

function typeIris(filter: EntityFilter, ctx: FilterContext): SqlFragment | undefined {
  if (filter.kind !== 'typeIris') return undefined;
  const known = filter.iris.map((iri) => ctx.iris.lookup(iri)).filter((id) => id !== undefined);
  if (known.length === 0) return MATCH_NOTHING;
  const p = ctx.param('tys');
  return {
    sql: `EXISTS (SELECT 1 FROM entity_types x WHERE x.entity = e.rowid AND x.iri IN (SELECT value FROM json_each(@${p})))`,
    params: { [p]: JSON.stringify(known) },
  };
}

/** OR of ANDs; an alternative that cannot match is left out, and none left matches nothing. */
function anyOf(filter: EntityFilter, ctx: FilterContext): SqlFragment | undefined {
  if (filter.kind !== 'anyOf') return undefined;
  const parts: string[] = [];
  const params: Record<string, unknown> = {};
  for (const alternative of filter.alternatives) {
    const fragments = alternative.map((f) => translateFilter(f, ctx));
    if (fragments.includes(MATCH_NOTHING)) continue;
    parts.push(fragments.length === 0 ? '1' : fragments.map((f) => `(${f.sql})`).join(' AND '));
    for (const f of fragments) Object.assign(params, f.params);
  }
  return parts.length === 0 ? MATCH_NOTHING : { sql: parts.map((p) => `(${p})`).join(' OR '), params };
}

/** Every translator; each returns undefined for filter kinds it does not own. */
const FILTER_TRANSLATORS: FilterTranslator[] = [
  idPattern, ids, typeIris, anyOf, translateGeoFilter, ...QUERY_FILTER_TRANSLATORS,
];

export function translateFilter(filter: EntityFilter, ctx: FilterContext): SqlFragment {
  for (const t of FILTER_TRANSLATORS) {
    const out = t(filter, ctx);
    if (out) return out;
  }
  throw new Error(`no SQL translation for entity filter '${filter.kind}'`);
}
