// The change journal: one row per entity and write, appended in the write's transaction, read in
// sequence by readers that each keep a persisted cursor; pruned once every reader has passed a row.

import type BetterSqlite3 from 'better-sqlite3';
import { CHANGE_KINDS, type ChangeEvent, type ChangeKind } from '../events.js';
import type { Entity, HistoryInstance, Iri } from '../ngsi/index.js';
import type { RunInTx } from './transactions.js';

/** A change as the write core records it; the journal gives it its sequence. */
export type JournalEntry = Omit<ChangeEvent, 'seq'>;

export interface PruneReport {
  /** Rows every reader had passed. */
  passed: number;
  /** Rows older than the horizon that some reader had not read yet (lost to that reader). */
  aged: number;
}

export interface ChangeJournal {
  /** Appends a change inside the open transaction (or its own); returns its sequence. */
  append(entry: JournalEntry): number;
  /** Changes with a sequence above `after`, oldest first, at most `limit`. */
  readAfter(after: number, limit: number): ChangeEvent[];
  /** The highest sequence ever given (0 before the first change), pruned rows included. */
  lastSeq(): number;
  /** A reader's position: every change up to it is handled. Undefined for a reader never seen. */
  cursor(reader: string): number | undefined;
  /** Moves a reader's cursor (never backwards). */
  setCursor(reader: string, seq: number): void;
  /** Forgets a reader (its cursor no longer holds rows back). */
  dropReader(reader: string): void;
  /** Rows not yet passed by `reader`. */
  backlog(reader: string): number;
  /** Removes rows every reader has passed (all rows when no reader exists), and rows written before `horizon`. */
  prune(horizon: number): PruneReport;
}

/**
 * The JSON payload: what a row holds beyond its columns. An instance is stored without its entity
 * id (the row's), and without its attribute when that is the entity's current state (`c`), as it is
 * for every plain write: the payload then holds each value once.
 */
interface Payload {
  p?: Entity;
  e?: Entity;
  w: Iri[];
  d: Iri[];
  i: StoredInstance[];
}

type StoredInstance = Omit<HistoryInstance, 'entityId'> & { c?: 1 };

type Row = [seq: number, tenant: string, kind: number, entityId: string, at: number, subject: string | null, payload: string];

const KIND_CODE = new Map<ChangeKind, number>(CHANGE_KINDS.map((k, i) => [k, i]));

function encodeInstances(instances: readonly HistoryInstance[], entity: Entity | undefined): StoredInstance[] {
  const current = new Set(entity === undefined ? [] : Object.values(entity.attrs).flat());
  return instances.map(({ entityId: _id, ...rest }) => {
    if (rest.attribute === undefined || !current.has(rest.attribute)) return rest;
    const { attribute: _a, ...bare } = rest;
    return { ...bare, c: 1 };
  });
}

function decodeInstances(stored: readonly StoredInstance[], entityId: string, entity: Entity | undefined): HistoryInstance[] {
  return stored.map(({ c, ...rest }) => {
    const instance: HistoryInstance = { entityId, ...rest };
    if (c === 1) {
      const attribute = entity?.attrs[rest.attr]?.find((a) => a.datasetId === rest.datasetId);
      if (attribute !== undefined) instance.attribute = attribute;
    }
    return instance;
  });
}

function encodePayload(entry: JournalEntry): string {
  const payload: Payload = { w: entry.written, d: entry.deleted, i: encodeInstances(entry.instances, entry.entity) };
  if (entry.previous !== undefined) payload.p = entry.previous;
  if (entry.entity !== undefined) payload.e = entry.entity;
  return JSON.stringify(payload);
}

function decodeRow([seq, tenant, kind, id, at, subject, json]: Row): ChangeEvent {
  // The payload is only ever written by encodePayload above.
  const payload = JSON.parse(json) as Payload;
  const event: ChangeEvent = {
    seq, tenant, kind: CHANGE_KINDS[kind] ?? 'historyChanged', id, at, written: payload.w, deleted: payload.d,
    instances: decodeInstances(payload.i, id, payload.e),
  };
  if (subject !== null) event.subject = subject;
  if (payload.p !== undefined) event.previous = payload.p;
  if (payload.e !== undefined) event.entity = payload.e;
  return event;
}

export function createChangeJournal(db: BetterSqlite3.Database, atomic: RunInTx): ChangeJournal {
  const insert = db.prepare<[string, number, string, number, string | null, string]>(
    'INSERT INTO journal (tenant, kind, entity_id, at, subject, payload) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const after = db.prepare<[number, number], Row>(
    'SELECT seq, tenant, kind, entity_id, at, subject, payload FROM journal WHERE seq > ? ORDER BY seq LIMIT ?',
  ).raw(true);
  const last = db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'journal'");
  const cursorOf = db.prepare<[string], { seq: number }>('SELECT seq FROM journal_cursors WHERE reader = ?');
  const upsertCursor = db.prepare<[string, number]>(
    'INSERT INTO journal_cursors (reader, seq) VALUES (?, ?) ON CONFLICT (reader) DO UPDATE SET seq = max(seq, excluded.seq)',
  );
  const dropCursor = db.prepare<[string]>('DELETE FROM journal_cursors WHERE reader = ?');
  const minCursor = db.prepare<[], { seq: number | null; readers: number }>('SELECT min(seq) AS seq, count(*) AS readers FROM journal_cursors');
  const countAfter = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM journal WHERE seq > ?');
  const deleteUpTo = db.prepare<[number]>('DELETE FROM journal WHERE seq <= ?');
  const deleteAll = db.prepare('DELETE FROM journal');
  // NOTE: no index on `at`: the journal is short (pruned as readers pass), and this runs from a job.
  const deleteBefore = db.prepare<[number]>('DELETE FROM journal WHERE at < ?');

  return {
    append: (entry) => atomic(() => Number(insert.run(
      entry.tenant, KIND_CODE.get(entry.kind) ?? 0, entry.id, entry.at, entry.subject ?? null, encodePayload(entry),
    ).lastInsertRowid)),
    readAfter: (seq, limit) => after.all(seq, limit).map(decodeRow),
    lastSeq: () => last.get()?.seq ?? 0,
    cursor: (reader) => cursorOf.get(reader)?.seq,
    setCursor: (reader, seq) => {
      atomic(() => upsertCursor.run(reader, seq));
    },
    dropReader: (reader) => {
      atomic(() => dropCursor.run(reader));
    },
    backlog: (reader) => countAfter.get(cursorOf.get(reader)?.seq ?? 0)?.n ?? 0,
    prune: (horizon) => atomic(() => {
      const { seq, readers } = minCursor.get() ?? { seq: null, readers: 0 };
      const passed = readers === 0 ? deleteAll.run().changes : deleteUpTo.run(seq ?? 0).changes;
      const aged = deleteBefore.run(horizon).changes;
      return { passed, aged };
    }),
  };
}
