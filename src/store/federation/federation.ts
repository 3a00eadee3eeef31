// Persistence of the federation drain: changes parked because the cloud refused their entity, and
// the counters the status shows (dropped, sent, last success, last error), kept across restarts.

import type BetterSqlite3 from 'better-sqlite3';
import type { RunInTx } from '../transactions.js';

/** Most parked rows kept; beyond, the oldest go (they are counted in `parkedTotal` all the same). */
const MAX_PARKED = 10_000;

/** The pending changes of one entity that the cloud refused. */
export interface ParkedChanges {
  tenant: string;
  entityId: string;
  firstSeq: number;
  lastSeq: number;
  /** How many journal changes of the entity this stands for. */
  changes: number;
  /** The upstream error, ProblemDetails JSON text. */
  error: string;
  /** What was sent for the entity, JSON text. */
  payload: string;
  parkedAt: number;
}

export interface FederationCounters {
  /** Changes skipped by the outbox bounds or pruned before the drain read them. */
  dropped: number;
  sentEntities: number;
  sentInstances: number;
  lastSuccess?: number;
  lastError?: { at: number; message: string };
}

/** What one step of the drain adds to the counters. */
export interface FederationProgress {
  dropped?: number;
  sentEntities?: number;
  sentInstances?: number;
  success?: number;
  error?: { at: number; message: string };
}

/** The downlink's subscription upstream, as last asked for. */
export interface DownlinkRecord {
  subscriptionId: string;
  topic: string;
  /** What it was made for (upstream, tenant, selection): another target needs a new subscription. */
  target: string;
  expiresAt: number | undefined;
}

export interface FederationRepository {
  /** Records parked changes (joins the open transaction). */
  park(items: readonly ParkedChanges[]): void;
  /** Parked rows, newest first, at most `limit`. */
  parked(limit: number): ParkedChanges[];
  parkedCount(): number;
  counters(): FederationCounters;
  /** Adds to the counters (joins the open transaction). */
  record(progress: FederationProgress): void;
  /** The downlink's subscription upstream, when one was asked for. */
  downlink(): DownlinkRecord | undefined;
  /** Keeps the downlink's subscription (joins the open transaction). */
  saveDownlink(record: DownlinkRecord): void;
}

interface StateRow {
  dropped: number;
  sent_entities: number;
  sent_instances: number;
  last_success: number | null;
  last_error_at: number | null;
  last_error: string | null;
}

interface DownlinkRow {
  subscription_id: string;
  topic: string;
  target: string;
  expires_at: number | null;
}

interface ParkedRow {
  tenant: string;
  entity_id: string;
  first_seq: number;
  last_seq: number;
  changes: number;
  error: string;
  payload: string;
  parked_at: number;
}

export function createFederationRepository(db: BetterSqlite3.Database, atomic: RunInTx): FederationRepository {
  const insert = db.prepare<[string, string, number, number, number, string, string, number]>(
    `INSERT INTO federation_parked (tenant, entity_id, first_seq, last_seq, changes, error, payload, parked_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const trim = db.prepare<[number]>(
    'DELETE FROM federation_parked WHERE id <= (SELECT id FROM federation_parked ORDER BY id DESC LIMIT 1 OFFSET CAST(? AS INTEGER))',
  );
  const list = db.prepare<[number], ParkedRow>(
    'SELECT tenant, entity_id, first_seq, last_seq, changes, error, payload, parked_at FROM federation_parked ORDER BY id DESC LIMIT CAST(? AS INTEGER)',
  );
  const count = db.prepare<[], number>('SELECT count(*) FROM federation_parked').pluck();
  const state = db.prepare<[], StateRow>(
    'SELECT dropped, sent_entities, sent_instances, last_success, last_error_at, last_error FROM federation_state WHERE id = 1',
  );
  const add = db.prepare<[number, number, number, number | null, number | null, string | null]>(
    `UPDATE federation_state SET dropped = dropped + ?, sent_entities = sent_entities + ?, sent_instances = sent_instances + ?,
       last_success = coalesce(?, last_success), last_error_at = coalesce(?, last_error_at), last_error = coalesce(?, last_error)
     WHERE id = 1`,
  );

  const downlink = db.prepare<[], DownlinkRow>('SELECT subscription_id, topic, target, expires_at FROM federation_downlink WHERE id = 1');
  const putDownlink = db.prepare<[string, string, string, number | null]>(
    'INSERT OR REPLACE INTO federation_downlink (id, subscription_id, topic, target, expires_at) VALUES (1, ?, ?, ?, ?)',
  );

  return {
    park: (items) => atomic(() => {
      for (const p of items) insert.run(p.tenant, p.entityId, p.firstSeq, p.lastSeq, p.changes, p.error, p.payload, p.parkedAt);
      if (items.length > 0) trim.run(MAX_PARKED);
    }),
    parked: (limit) => list.all(limit).map((r) => ({
      tenant: r.tenant, entityId: r.entity_id, firstSeq: r.first_seq, lastSeq: r.last_seq, changes: r.changes, error: r.error,
      payload: r.payload, parkedAt: r.parked_at,
    })),
    parkedCount: () => count.get() ?? 0,
    counters() {
      const row = state.get();
      if (row === undefined) return { dropped: 0, sentEntities: 0, sentInstances: 0 };
      const out: FederationCounters = { dropped: row.dropped, sentEntities: row.sent_entities, sentInstances: row.sent_instances };
      if (row.last_success !== null) out.lastSuccess = row.last_success;
      if (row.last_error_at !== null) out.lastError = { at: row.last_error_at, message: row.last_error ?? '' };
      return out;
    },
    record: (p) => atomic(() => {
      add.run(p.dropped ?? 0, p.sentEntities ?? 0, p.sentInstances ?? 0, p.success ?? null, p.error?.at ?? null, p.error?.message ?? null);
    }),
    downlink() {
      const row = downlink.get();
      return row === undefined ? undefined : { subscriptionId: row.subscription_id, topic: row.topic, target: row.target, expiresAt: row.expires_at ?? undefined };
    },
    saveDownlink: (r) => atomic(() => {
      putDownlink.run(r.subscriptionId, r.topic, r.target, r.expiresAt ?? null);
    }),
  };
}
