// The change journal: one row per entity and write, appended in the write's transaction, read in
// sequence by readers that each keep a persisted cursor; pruned once every reader has passed a row.

import type BetterSqlite3 from 'better-sqlite3';
import { CHANGE_KINDS, type ChangeEvent, type ChangeKind, type RegistrationStates } from '../../events.js';
import { INSTANCE_PREFIX, type Entity, type EntityId, type HistoryInstance, type Iri } from '../../ngsi/index.js';
import type { RunInTx } from '../transactions.js';

/** A change as the write core records it; the journal gives it its sequence. */
export type JournalEntry = Omit<ChangeEvent, 'seq'>;

export interface PruneReport {
  /** Rows every reader had passed. */
  passed: number;
  /** Rows older than the horizon that some reader had not read yet (lost to that reader). */
  aged: number;
  /** The limit stopped this run: rows it would have removed are left for the next one. */
  more: boolean;
}

export interface ChangeJournal {
  /** Appends a change inside the open transaction (or its own); returns its sequence. */
  append(entry: JournalEntry): number;
  /**
   * Changes with a sequence above `after`, oldest first, at most `limit`. Read back, a change shows
   * its entity and instances as they are now: `entity` is the live entity (absent when no longer
   * live), and `instances` (with `opts.instances`) the instances still stored, with any later edit.
   */
  readAfter(after: number, limit: number, opts?: ReadOptions): ChangeEvent[];
  /** The highest sequence given so far (0 before the first change). */
  lastSeq(): number;
  /** A reader's position: every change up to it is handled. Undefined for a reader never seen. */
  cursor(reader: string): number | undefined;
  /** Moves a reader's cursor (never backwards). */
  setCursor(reader: string, seq: number): void;
  /** Forgets a reader (its cursor no longer holds rows back). */
  dropReader(reader: string): void;
  /** Rows not yet passed by `reader`. */
  backlog(reader: string): number;
  /** The sequence of the row `offset` rows after the first row above `after` (0: that first row). */
  seqAt(after: number, offset: number): number | undefined;
  /** The first sequence above `after` of a change written at `at` or later. */
  firstSince(after: number, at: number): number | undefined;
  /** How many rows lie in (after, upTo]. */
  countBetween(after: number, upTo: number): number;
  /**
   * Removes rows every reader has passed (all rows when no reader exists), and rows written before
   * `horizon`; the newest row always stays (it carries the sequence). At most `limit` rows go (the
   * oldest first), so that a long journal is pruned in short transactions: `more` says whether
   * another call would remove more.
   */
  prune(horizon: number, limit?: number): PruneReport;
}

/**
 * The JSON payload: what a row holds beyond its columns. It is kept lean (bytes written per change
 * are bytes written to the SD card): the entity after the change is its row in `entities`, and each
 * history instance its row in the history buckets, so the journal holds only the names, the
 * instance ids and the touched attributes before the change. Each attribute IRI is written once
 * (`n`); the other members name attributes by their index in it:
 * - `w` / `d`: the attributes written / deleted;
 * - `r`: the history instances, in runs of one attribute and datasetId (null: none):
 *   [attribute, datasetId, ids]; an id `urn:ngsi-ld:Instance:<x>` is written as `<x>`, any other
 *   id behind ID_MARK (rows written before runs have `i`: [attribute, instanceId, datasetId?]);
 * - `p`: the touched attributes before the change, with the entity's types, scope and times (its
 *   id is the row's).
 */
interface Payload {
  n: Iri[];
  w: number[];
  d: number[];
  r?: Array<[number, string | null, string[]]>;
  i?: Array<[number, string] | [number, string, string]>;
  p?: PreviousPayload;
  /** A registration change: its states (rare, so written whole). */
  g?: RegistrationStates;
}

/**
 * Marks an instance id written whole in a run: no id written without its prefix starts with it
 * (instance ids made here are uuids; one given by a client that starts with it is written whole).
 */
const ID_MARK = '~';

const compactId = (id: string): string =>
  (id.startsWith(INSTANCE_PREFIX) && id.charCodeAt(INSTANCE_PREFIX.length) !== ID_MARK.charCodeAt(0) ? id.slice(INSTANCE_PREFIX.length) : ID_MARK + id);
const fullId = (stored: string): string => (stored.startsWith(ID_MARK) ? stored.slice(1) : INSTANCE_PREFIX + stored);

interface PreviousPayload {
  t: Iri[];
  s?: string[];
  a: Array<[number, Entity['attrs'][string]]>;
  c: number;
  m: number;
  x?: number;
}

/** The payload of rows written before attribute names were indexed (still read after an upgrade). */
interface LegacyPayload {
  p?: Entity;
  g?: RegistrationStates;
  w: Iri[];
  d: Iri[];
  i: Array<[Iri, string] | [Iri, string, string]>;
}

type Row = [seq: number, tenant: string, kind: number, entityId: string, at: number, subject: string | null, payload: string];

const KIND_CODE = new Map<ChangeKind, number>(CHANGE_KINDS.map((k, i) => [k, i]));

function encodePayload(entry: JournalEntry): string {
  const names: Iri[] = [];
  const index = new Map<Iri, number>();
  const at = (iri: Iri): number => {
    let n = index.get(iri);
    if (n === undefined) {
      n = names.length;
      names.push(iri);
      index.set(iri, n);
    }
    return n;
  };
  // NOTE: runs rather than a tuple per instance: a bulk write journals thousands of instances of one
  // attribute, and each tuple was an array of its own and 25 more characters written.
  const runs: NonNullable<Payload['r']> = [];
  let run: NonNullable<Payload['r']>[number] | undefined;
  const { instances } = entry;
  for (let k = 0; k < instances.length; k++) {
    const h = instances[k]!;
    const attr = at(h.attr);
    const datasetId = h.datasetId ?? null;
    if (run === undefined || run[0] !== attr || run[1] !== datasetId) {
      run = [attr, datasetId, []];
      runs.push(run);
    }
    run[2].push(compactId(h.instanceId));
  }
  const payload: Payload = { n: names, w: entry.written.map(at), d: entry.deleted.map(at), r: runs };
  if (entry.registration !== undefined) payload.g = entry.registration;
  const prev = entry.previous;
  if (prev !== undefined) {
    const p: PreviousPayload = { t: prev.types, a: Object.entries(prev.attrs).map(([attr, list]) => [at(attr), list]), c: prev.createdAt, m: prev.modifiedAt };
    if (prev.scope !== undefined) p.s = prev.scope;
    if (prev.deletedAt !== undefined) p.x = prev.deletedAt;
    payload.p = p;
  }
  return JSON.stringify(payload);
}

/** A payload as the legacy shape's members: names by IRI, `previous` as an entity. */
function decodePayload(json: string, id: EntityId): LegacyPayload {
  // The payload is only ever written by encodePayload (or its earlier form, without `n`).
  const raw = JSON.parse(json) as Payload | LegacyPayload;
  if (!('n' in raw)) return raw;
  const name = (n: number): Iri => raw.n[n] ?? '';
  const out: LegacyPayload = {
    w: raw.w.map(name), d: raw.d.map(name),
    i: (raw.i ?? []).map((t) => (t.length === 2 ? [name(t[0]), t[1]] : [name(t[0]), t[1], t[2]])),
  };
  if (raw.g !== undefined) out.g = raw.g;
  for (const [n, datasetId, ids] of raw.r ?? []) {
    const attr = name(n);
    for (const id of ids) out.i.push(datasetId === null ? [attr, fullId(id)] : [attr, fullId(id), datasetId]);
  }
  const p = raw.p;
  if (p !== undefined) {
    const previous: Entity = { id, types: p.t, attrs: Object.fromEntries(p.a.map(([n, list]) => [name(n), list])), createdAt: p.c, modifiedAt: p.m };
    if (p.s !== undefined) previous.scope = p.s;
    if (p.x !== undefined) previous.deletedAt = p.x;
    out.p = previous;
  }
  return out;
}

/** Where the journal finds what its rows point to. */
export interface JournalSources {
  /** The live entity now. */
  live(tenant: string, id: EntityId): Entity | undefined;
  /** A history instance as stored now. */
  instance(tenant: string, id: EntityId, attr: Iri, datasetId: string | undefined, instanceId: string): HistoryInstance | undefined;
}

export interface ReadOptions {
  /** Look the history instances up (default false: `instances` is left empty). */
  instances?: boolean;
  /** Look the live entity up (default true; false: `entity` is left out). */
  entities?: boolean;
}

export function createChangeJournal(db: BetterSqlite3.Database, atomic: RunInTx, sources: JournalSources): ChangeJournal {
  const decodeRow = ([seq, tenant, kind, id, at, subject, json]: Row, opts: ReadOptions): ChangeEvent => {
    const payload = decodePayload(json, id);
    const event: ChangeEvent = {
      seq, tenant, kind: CHANGE_KINDS[kind] ?? 'historyChanged', id, at, written: payload.w, deleted: payload.d, instances: [],
    };
    if (subject !== null) event.subject = subject;
    if (payload.p !== undefined) event.previous = payload.p;
    if (payload.g !== undefined) event.registration = payload.g;
    const entity = opts.entities === false || payload.g !== undefined ? undefined : sources.live(tenant, id);
    if (entity !== undefined) event.entity = entity;
    if (opts.instances === true) {
      for (const [attr, instanceId, datasetId] of payload.i) {
        const found = sources.instance(tenant, id, attr, datasetId, instanceId);
        if (found !== undefined) event.instances.push(found);
      }
    }
    return event;
  };

  const insert = db.prepare<[string, number, string, number, string | null, string]>(
    'INSERT INTO journal (tenant, kind, entity_id, at, subject, payload) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const after = db.prepare<[number, number], Row>(
    'SELECT seq, tenant, kind, entity_id, at, subject, payload FROM journal WHERE seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)',
  ).raw(true);
  const last = db.prepare<[], { seq: number | null }>('SELECT max(seq) AS seq FROM journal');
  const cursorOf = db.prepare<[string], { seq: number }>('SELECT seq FROM journal_cursors WHERE reader = ?');
  const upsertCursor = db.prepare<[string, number]>(
    'INSERT INTO journal_cursors (reader, seq) VALUES (?, ?) ON CONFLICT (reader) DO UPDATE SET seq = max(seq, excluded.seq)',
  );
  const dropCursor = db.prepare<[string]>('DELETE FROM journal_cursors WHERE reader = ?');
  const minCursor = db.prepare<[], { seq: number | null; readers: number }>('SELECT min(seq) AS seq, count(*) AS readers FROM journal_cursors');
  const countAfter = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM journal WHERE seq > ?');
  const seqAtOffset = db.prepare<[number, number], number>('SELECT seq FROM journal WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET CAST(? AS INTEGER)').pluck();
  // NOTE: rows are written in time order, so this scans only the rows older than `at`.
  const firstAt = db.prepare<[number, number], number>('SELECT seq FROM journal WHERE seq > ? AND at >= ? ORDER BY seq LIMIT 1').pluck();
  const countIn = db.prepare<[number, number], number>('SELECT count(*) FROM journal WHERE seq > ? AND seq <= ?').pluck();
  const bounds = db.prepare<[], { first: number | null; newest: number | null }>('SELECT min(seq) AS first, max(seq) AS newest FROM journal');
  const deleteRange = db.prepare<[number, number]>('DELETE FROM journal WHERE seq >= ? AND seq <= ?');
  // NOTE: no index on `at`: rows are written in time order, so the rows before the horizon are the
  // first ones, and this looks at no more rows than one prune may remove.
  const firstYoungIn = db.prepare<[number, number, number], number>(
    'SELECT seq FROM journal WHERE seq >= ? AND seq <= ? AND at >= ? ORDER BY seq LIMIT 1',
  ).pluck();

  return {
    append: (entry) => atomic(() => Number(insert.run(
      entry.tenant, KIND_CODE.get(entry.kind) ?? 0, entry.id, entry.at, entry.subject ?? null, encodePayload(entry),
    ).lastInsertRowid)),
    readAfter: (seq, limit, opts = {}) => after.all(seq, limit).map((row) => decodeRow(row, opts)),
    lastSeq: () => last.get()?.seq ?? 0,
    cursor: (reader) => cursorOf.get(reader)?.seq,
    setCursor: (reader, seq) => {
      atomic(() => upsertCursor.run(reader, seq));
    },
    dropReader: (reader) => {
      atomic(() => dropCursor.run(reader));
    },
    backlog: (reader) => countAfter.get(cursorOf.get(reader)?.seq ?? 0)?.n ?? 0,
    seqAt: (seq, offset) => seqAtOffset.get(seq, offset),
    firstSince: (seq, at) => firstAt.get(seq, at),
    countBetween: (seq, upTo) => countIn.get(seq, upTo) ?? 0,
    prune: (horizon, limit = Number.MAX_SAFE_INTEGER) => atomic(() => {
      const { first, newest } = bounds.get() ?? { first: null, newest: null };
      if (first === null || newest === null) return { passed: 0, aged: 0, more: false };
      // Sequences only grow, so a range of `limit` sequences holds at most `limit` rows; the newest
      // row always stays: it carries the sequence the next row continues from.
      const end = Math.min(newest - 1, first + Math.max(1, limit) - 1);
      const { seq, readers } = minCursor.get() ?? { seq: null, readers: 0 };
      const passedEnd = Math.min(end, readers === 0 ? newest : seq ?? 0);
      const passed = passedEnd >= first ? deleteRange.run(first, passedEnd).changes : 0;
      const agedFrom = Math.max(first, passedEnd + 1);
      const young = agedFrom <= end ? firstYoungIn.get(agedFrom, end, horizon) : agedFrom;
      const agedEnd = young === undefined ? end : young - 1;
      const aged = agedEnd >= agedFrom ? deleteRange.run(agedFrom, agedEnd).changes : 0;
      // Stopped by the limit (not by a reader or the horizon) before the newest row.
      return { passed, aged, more: Math.max(passedEnd, agedEnd) === end && end < newest - 1 };
    }),
  };
}
