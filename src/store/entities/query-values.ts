// The query-values index (migration 3): the comparable elements of every top-level attribute
// instance, one row each, kept as a diff in step with the entity; q-sql.ts reads it.

import type BetterSqlite3 from 'better-sqlite3';
import { compileQPattern, instantOf, valueElements, type Attribute, type Entity, type QElement } from '../../ngsi/index.js';
import type { EntityIndexerFactory } from './entity-indexer.js';
import { registerRegexpFunction } from '../sql-regexp.js';
import { changedAttributes, withAttributes } from './entity-diff.js';

/** The `typ` column. */
export const VALUE_TYPE = { none: 0, number: 1, string: 2, boolean: 3, object: 4, vocab: 5 } as const;

interface ValueRow {
  attr: number;
  inst: number;
  seq: number;
  typ: number;
  num: number | null;
  str: string | null;
}

function toColumns(el: QElement): Pick<ValueRow, 'typ' | 'num' | 'str'> {
  switch (el.t) {
    case 'num': return { typ: VALUE_TYPE.number, num: el.n, str: null };
    case 'bool': return { typ: VALUE_TYPE.boolean, num: el.b ? 1 : 0, str: null };
    case 'str': return { typ: VALUE_TYPE.string, num: el.instant ?? null, str: el.s };
    case 'ref': return { typ: VALUE_TYPE.object, num: null, str: el.s };
    case 'vocab': return { typ: VALUE_TYPE.vocab, num: null, str: el.s };
    // Only members yield instants, and members are not indexed.
    case 'instant': return { typ: VALUE_TYPE.none, num: null, str: null };
  }
}

/** The rows of one instance: its elements, or one typ-0 row so the instance itself is known. */
function instanceRows(attr: number, inst: number, instance: Attribute): ValueRow[] {
  const els = valueElements(instance);
  if (els.length === 0) return [{ attr, inst, seq: 0, typ: VALUE_TYPE.none, num: null, str: null }];
  return els.map((el, seq) => ({ attr, inst, seq, ...toColumns(el) }));
}

const keyOf = (r: Pick<ValueRow, 'attr' | 'inst' | 'seq'>): string => `${r.attr} ${r.inst} ${r.seq}`;

/**
 * SQL functions the q translation needs, registered on each connection the index is opened on.
 * NOTE: they live here, not in entity-filters.ts, because they read values exactly as this index
 * does (`ngsi_instant` is instantOf, `ngsi_q_regexp` is compileQPattern with its `(?i)` flag).
 */
export function registerQueryFunctions(db: BetterSqlite3.Database): void {
  db.function('ngsi_instant', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? instantOf(text) ?? null : null));
  registerRegexpFunction(db, 'ngsi_q_regexp', compileQPattern);
}

export const createQueryValuesIndexer: EntityIndexerFactory = (db, iris) => {
  registerQueryFunctions(db);
  const list = db.prepare<[number], ValueRow>('SELECT attr, inst, seq, typ, num, str FROM attr_values WHERE entity = ?');
  const insert = db.prepare<[number, number, number, number, number, number | null, string | null]>(
    'INSERT INTO attr_values (entity, attr, inst, seq, typ, num, str) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const change = db.prepare<[number, number | null, string | null, number, number, number, number]>(
    'UPDATE attr_values SET typ = ?, num = ?, str = ? WHERE entity = ? AND attr = ? AND inst = ? AND seq = ?',
  );
  // NOTE: SQLite rewrites every index holding a column named in SET, changed or not: a reading that
  // changes only the number must not touch the string index.
  const changeNum = db.prepare<[number | null, number, number, number, number]>(
    'UPDATE attr_values SET num = ? WHERE entity = ? AND attr = ? AND inst = ? AND seq = ?',
  );
  const removeOne = db.prepare<[number, number, number, number]>('DELETE FROM attr_values WHERE entity = ? AND attr = ? AND inst = ? AND seq = ?');
  const removeAll = db.prepare<[number]>('DELETE FROM attr_values WHERE entity = ?');

  /** Every row an entity should have. */
  const rowsOf = (entity: Entity): ValueRow[] => {
    const rows: ValueRow[] = [];
    for (const [iri, instances] of Object.entries(entity.attrs)) {
      const attr = iris.intern(iri);
      instances.forEach((instance, inst) => rows.push(...instanceRows(attr, inst, instance)));
    }
    return rows;
  };

  return {
    name: 'query-values',
    write(rowid, entity: Entity, isNew, previous) {
      if (isNew) {
        // A new row: every row inserted, nothing to diff against.
        for (const row of rowsOf(entity)) insert.run(rowid, row.attr, row.inst, row.seq, row.typ, row.num, row.str);
        return;
      }
      const present = new Map<string, ValueRow>();
      let target = entity;
      if (previous) {
        // Diff in memory, and only the attributes that changed (a reading touches one).
        const changed = changedAttributes(previous, entity);
        if (changed.size === 0) return;
        target = withAttributes(entity, changed);
        for (const row of rowsOf(withAttributes(previous, changed))) present.set(keyOf(row), row);
      } else {
        for (const row of list.all(rowid)) present.set(keyOf(row), row);
      }
      // NOTE: a reading that changes one value updates one row; unchanged rows are not written.
      for (const row of rowsOf(target)) {
        const key = keyOf(row);
        const old = present.get(key);
        present.delete(key);
        if (old === undefined) insert.run(rowid, row.attr, row.inst, row.seq, row.typ, row.num, row.str);
        else if (old.typ === row.typ && old.str === row.str) {
          if (old.num !== row.num) changeNum.run(row.num, rowid, row.attr, row.inst, row.seq);
        } else change.run(row.typ, row.num, row.str, rowid, row.attr, row.inst, row.seq);
      }
      for (const row of present.values()) removeOne.run(rowid, row.attr, row.inst, row.seq);
    },
    remove(rowid) {
      removeAll.run(rowid);
    },
  };
};
