// q (NGSI-LD §4.9) as SQL over `entities e` with every value bound: plain attribute paths read the
// query-values index, other paths (sub-attributes, members, keys) read e.doc with SQLite JSON functions.

import {
  DATE_SHAPE, TIME_SHAPE, assertNever, isInstantMember, isPlainPath, splitOp,
  type QExpr, type QPath, type QPositiveOp, type QScalar, type QValue,
} from '../../ngsi/index.js';
import type { FilterContext, FilterTranslator } from '../sql-fragment.js';
import { and, label, not, or, translation, where, type Bind, type Sql } from './q-sql-build.js';
import { scopeSql, typeSql } from './q-sql-selections.js';
import { VALUE_TYPE as T } from './query-values.js';

/** How one class of target element reads in SQL: when a row is one (`is`), and its value. */
interface Cls {
  is: string;
  val: string;
}
interface View {
  num?: Cls;
  bool?: Cls;
  str?: Cls & { instant: string };
  ref?: Cls;
  vocab?: Cls;
  instant?: Cls;
}

/** Rows `v` of attr_values. */
const INDEX_VIEW: View = {
  num: { is: `v.typ = ${T.number}`, val: 'v.num' },
  bool: { is: `v.typ = ${T.boolean}`, val: 'v.num' },
  str: { is: `v.typ = ${T.string}`, val: 'v.str', instant: 'v.num' },
  ref: { is: `v.typ = ${T.object}`, val: 'v.str' },
  vocab: { is: `v.typ = ${T.vocab}`, val: 'v.str' },
};

/** Rows `el` of json_each / json_tree inside an attribute whose kind is the SQL expression `kind`. */
function jsonView(kind: string): View {
  const text = `el.type = 'text'`;
  return {
    num: { is: `el.type IN ('integer', 'real')`, val: 'el.value' },
    bool: { is: `el.type IN ('true', 'false')`, val: 'el.value' },
    str: { is: `${text} AND ${kind} NOT IN ('Relationship', 'ListRelationship', 'VocabProperty')`, val: 'el.value', instant: 'ngsi_instant(el.value)' },
    ref: { is: `${text} AND ${kind} IN ('Relationship', 'ListRelationship')`, val: 'el.value' },
    vocab: { is: `${text} AND ${kind} = 'VocabProperty'`, val: 'el.value' },
  };
}

const branch = (c: Cls | undefined, cond: (val: string) => string): Sql => (c ? `(${c.is} AND ${cond(c.val)})` : false);

function instantSql(view: View, o: string, at: string): Sql {
  const str = view.str;
  return or([str ? `(${str.is} AND ${str.instant} ${o} ${at})` : false, branch(view.instant, (v) => `${v} ${o} ${at}`)]);
}

/** Mirrors matchesScalar (ngsi/query/q-evaluate.ts) for one row of `view`. */
function scalarSql(view: View, op: Exclude<QPositiveOp, '~='>, lit: QScalar, bind: Bind): Sql {
  const o = op === '==' ? '=' : op;
  switch (lit.kind) {
    case 'number': {
      const p = bind(lit.value);
      return branch(view.num, (v) => `${v} ${o} ${p}`);
    }
    case 'boolean': {
      const p = bind(lit.value ? 1 : 0);
      return op === '==' ? branch(view.bool, (v) => `${v} = ${p}`) : false;
    }
    case 'string':
    case 'uri': {
      if (op === '==') return equalsAnySql(view, [lit], bind);
      const p = bind(lit.value);
      return lit.kind === 'string' ? branch(view.str, (v) => `${v} ${o} ${p}`) : false;
    }
    case 'dateTime':
      return instantSql(view, o, bind(lit.value));
    case 'date': {
      const [at, shape, text] = [bind(lit.instant), bind(DATE_SHAPE.source), bind(lit.value)];
      return or([instantSql(view, o, at), branch(view.str, (v) => `ngsi_q_regexp(${shape}, ${v}) AND ${v} ${o} ${text}`)]);
    }
    case 'time': {
      const [shape, text] = [bind(TIME_SHAPE.source), bind(lit.value)];
      return branch(view.str, (v) => `ngsi_q_regexp(${shape}, ${v}) AND ${v} ${o} ${text}`);
    }
  }
}

/**
 * `==` any of the items. Numbers and strings become IN lists, and string equality also names the
 * value column on its own (`v.str IN (...)`) so the planner can seek the string index with it.
 */
function equalsAnySql(view: View, items: QScalar[], bind: Bind): Sql {
  const parts: Sql[] = [];
  const nums = items.flatMap((i) => (i.kind === 'number' ? [i.value] : []));
  if (nums.length > 0) parts.push(branch(view.num, (v) => `${v} IN (${[...new Set(nums)].map(bind).join(', ')})`));
  const texts = items.flatMap((i) => (i.kind === 'string' || i.kind === 'uri' ? [i] : []));
  if (texts.length > 0) {
    const placeholders = new Map<string, string>();
    const ph = (s: string): string => {
      const known = placeholders.get(s);
      if (known !== undefined) return known;
      const name = bind(s);
      placeholders.set(s, name);
      return name;
    };
    const plain = [...new Set(texts.map((t) => ph(t.value)))].join(', ');
    const expanded = [...new Set(texts.map((t) => ph(t.kind === 'string' ? t.iri : t.value)))].join(', ');
    const any = or([
      branch(view.str, (v) => `${v} IN (${plain})`),
      branch(view.ref, (v) => `${v} IN (${plain})`),
      branch(view.vocab, (v) => `${v} IN (${expanded})`),
    ]);
    const val = view.str?.val;
    const shared = val !== undefined && view.ref?.val === val && view.vocab?.val === val;
    parts.push(shared && typeof any === 'string' ? `(${val} IN (${[...placeholders.values()].join(', ')}) AND ${any})` : any);
  }
  for (const item of items) {
    if (item.kind !== 'number' && item.kind !== 'string' && item.kind !== 'uri') parts.push(scalarSql(view, '==', item, bind));
  }
  return or(parts);
}

/** Whether one row of `view` satisfies the positive operator (§4.9: ranges inclusive, lists any-of). */
function valueSql(view: View, op: QPositiveOp, value: QValue, bind: Bind): Sql {
  switch (value.kind) {
    case 'pattern': {
      const p = bind(value.source);
      return op === '~=' ? branch(view.str, (v) => `ngsi_q_regexp(${p}, ${v})`) : false;
    }
    case 'range':
      return and([scalarSql(view, '>=', value.from, bind), scalarSql(view, '<=', value.to, bind)]);
    case 'list':
      return equalsAnySql(view, value.items, bind);
    default:
      if (op === '~=') return false;
      return op === '==' ? equalsAnySql(view, [value], bind) : scalarSql(view, op, value, bind);
  }
}

/**
 * Entities having the attribute. NOTE: read from the values index (every attribute instance has a
 * row there, a marker row when it has no comparable element), whose numeric index leads with the
 * attribute: no attribute-leading index of its own is kept on the attribute kinds.
 */
const hasAttr = (a: string): string => `e.rowid IN (SELECT x.entity FROM attr_values x WHERE x.attr = ${a})`;

/**
 * A plain path through the index: any row matching; negated, an instance (found through a witness
 * row `m`: any row for `!=`, a string for `!~=`) none of whose rows match.
 */
function indexedCompare(a: string, op: QPositiveOp, negated: boolean, value: QValue, bind: Bind): Sql {
  const match = valueSql(INDEX_VIEW, op, value, bind);
  if (!negated) return match === false ? false : `e.rowid IN (SELECT v.entity FROM attr_values v WHERE v.attr = ${a} AND ${where(match)})`;
  const witness = op === '~=' ? ` AND m.typ = ${T.string}` : '';
  if (match === false && witness === '') return hasAttr(a);
  return `e.rowid IN (SELECT m.entity FROM attr_values m WHERE m.attr = ${a}${witness} AND NOT EXISTS (SELECT 1 FROM attr_values v` +
    ` WHERE v.entity = m.entity AND v.attr = m.attr AND v.inst = m.inst AND ${where(match)}))`;
}

/** A path resolved in one instance `i` (a json_each row of the attribute) of e.doc. */
interface JsonTarget {
  resolves: Sql;
  view: View;
  /** Row sources (alias `el`) the view reads, with their guards; none when the view reads a member. */
  sources: Array<{ from: string; guard: string }>;
}

const KINDS_WITH_VALUE = [
  ['Property', '.value'], ['GeoProperty', '.value'], ['JsonProperty', '.json'], ['ListProperty', '.valueList'],
  ['Relationship', '.object'], ['ListRelationship', '.objectList'], ['VocabProperty', '.vocab'],
] as const;

function jsonTarget(path: QPath, bind: Bind): JsonTarget {
  const base = '$' + path.subs.map((s) => `.sub${label(s)}`).join('');
  const at = (suffix: string): string => bind(base + suffix);
  const resolvesSub: Sql = path.subs.length === 0 || `json_type(i.value, ${at('')}) IS NOT NULL`;
  if (path.member !== undefined) {
    const m = `json_extract(i.value, ${at('.' + path.member)})`;
    const view: View = isInstantMember(path.member)
      ? { instant: { is: `${m} IS NOT NULL`, val: m } }
      : { str: { is: `typeof(${m}) = 'text'`, val: m, instant: `ngsi_instant(${m})` } };
    return { resolves: `${m} IS NOT NULL`, view, sources: [] };
  }
  const kind = `json_extract(i.value, ${at('.kind')})`;
  const view = jsonView(kind);
  const members = path.keys.length === 0
    ? KINDS_WITH_VALUE.map(([k, member]) => [k, at(member)] as const)
    : [
      ['Property', at('.value' + path.keys.map((k) => label(k.iri)).join(''))] as const,
      ['GeoProperty', at('.value' + path.keys.map((k) => label(k.term)).join(''))] as const,
      ['JsonProperty', at('.json' + path.keys.map((k) => label(k.term)).join(''))] as const,
    ];
  const target = `CASE ${kind} ${members.map(([k, p]) => `WHEN '${k}' THEN ${p}`).join(' ')} END`;
  // Object members (text keys) are not elements: an object offers nothing but its [keys].
  const sources = [{ from: `json_each(i.value, ${target})`, guard: `typeof(el.key) <> 'text'` }];
  if (path.keys.length > 0) return { resolves: `json_type(i.value, ${target}) IS NOT NULL`, view, sources };
  sources.push({ from: `json_tree(i.value, ${at('.languageMap')})`, guard: `el.type = 'text'` });
  return { resolves: resolvesSub, view, sources };
}

/** Any instance of the attribute in e.doc satisfying `inInstance` (a predicate over `i`). */
function anyJsonInstance(a: string, path: QPath, inInstance: Sql, bind: Bind): Sql {
  if (inInstance === false) return false;
  if (inInstance === true) return hasAttr(a);
  // NOTE: the attribute index narrows the rows whose document gets parsed.
  return `(${hasAttr(a)} AND EXISTS (SELECT 1 FROM json_each(e.doc, ${bind('$.attrs' + label(path.attr))}) i WHERE ${inInstance}))`;
}

function jsonCompare(a: string, path: QPath, op: QPositiveOp, negated: boolean, value: QValue, bind: Bind): Sql {
  const t = jsonTarget(path, bind);
  const someRow = (cond: Sql): Sql => (t.sources.length === 0 ? cond
    : or(t.sources.map((s) => (cond === false ? false : `EXISTS (SELECT 1 FROM ${s.from} el WHERE ${s.guard} AND ${where(cond)})`))));
  const some = someRow(valueSql(t.view, op, value, bind));
  if (!negated) return anyJsonInstance(a, path, some, bind);
  // `!~=` needs a string to test, as the evaluator does; `!=` only needs the target.
  const witness = op === '~=' ? someRow(t.view.str?.is ?? false) : true;
  return anyJsonInstance(a, path, and([t.resolves, witness, not(some)]), bind);
}

function qSql(expr: QExpr, ctx: FilterContext, bind: Bind): Sql {
  switch (expr.kind) {
    case 'and':
      return and(expr.terms.map((t) => qSql(t, ctx, bind)));
    case 'or':
      return or(expr.terms.map((t) => qSql(t, ctx, bind)));
    case 'exists': {
      const id = ctx.iris.lookup(expr.path.attr);
      // An attribute never stored exists nowhere.
      if (id === undefined) return expr.negated;
      const a = bind(id);
      const found = isPlainPath(expr.path) ? hasAttr(a) : anyJsonInstance(a, expr.path, jsonTarget(expr.path, bind).resolves, bind);
      return expr.negated ? not(found) : found;
    }
    case 'compare': {
      const id = ctx.iris.lookup(expr.path.attr);
      if (id === undefined) return false;
      const { positive, negated } = splitOp(expr.op);
      const a = bind(id);
      return isPlainPath(expr.path)
        ? indexedCompare(a, positive, negated, expr.value, bind)
        : jsonCompare(a, expr.path, positive, negated, expr.value, bind);
    }
    default:
      return assertNever(expr, 'q expression');
  }
}

/**
 * Whether qSql's translation has an `e.rowid IN (…)` list among its top-level conjuncts: every
 * comparison, negated or not, reads the values or attribute index that way (indexedCompare,
 * anyJsonInstance, hasAttr), and so does `exists`; `!attr` and an OR have none.
 */
function hasRowidList(expr: QExpr): boolean {
  switch (expr.kind) {
    case 'and': return expr.terms.some(hasRowidList);
    case 'or': return false;
    case 'exists': return !expr.negated;
    case 'compare': return true;
    default: return assertNever(expr, 'q expression');
  }
}

/** q, scopeQ and type-selection translators, for FILTER_TRANSLATORS. */
export const QUERY_FILTER_TRANSLATORS: FilterTranslator[] = [
  (filter, ctx) => (filter.kind === 'q'
    ? { ...translation(ctx, (bind) => qSql(filter.expr, ctx, bind)), isRowidList: hasRowidList(filter.expr) }
    : undefined),
  (filter, ctx) => (filter.kind === 'scopeQ' ? translation(ctx, (bind) => scopeSql(filter.expr, bind)) : undefined),
  (filter, ctx) => (filter.kind === 'types' ? translation(ctx, (bind) => typeSql(filter.expr, ctx, bind)) : undefined),
];
