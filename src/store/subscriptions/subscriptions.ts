// Persistence of subscriptions (NGSI-LD §5.8): documents per tenant in creation order, and the
// delivery counters a notifier updates after each attempt.

import type BetterSqlite3 from 'better-sqlite3';
import { AlreadyExistsError } from '../../ngsi/index.js';
import type { DeliveryState, StoredSubscription, SubscriptionRepository } from '../types.js';

interface SubscriptionRow {
  tenant: string;
  id: string;
  doc: string;
  created_at: number;
  modified_at: number;
  times_sent: number;
  last_notification: number | null;
  last_success: number | null;
  last_failure: number | null;
  status: 'ok' | 'failed' | null;
  last_error: string | null;
  csource: number;
}

const COLUMNS = 'tenant, id, doc, created_at, modified_at, times_sent, last_notification, last_success, last_failure, status, last_error, csource';

function deliveryOf(r: SubscriptionRow): DeliveryState {
  const out: DeliveryState = { timesSent: r.times_sent };
  if (r.last_notification !== null) out.lastNotification = r.last_notification;
  if (r.last_success !== null) out.lastSuccess = r.last_success;
  if (r.last_failure !== null) out.lastFailure = r.last_failure;
  if (r.status !== null) out.status = r.status;
  if (r.last_error !== null) out.lastError = r.last_error;
  return out;
}

function toStored(r: SubscriptionRow): StoredSubscription {
  const out: StoredSubscription = { id: r.id, doc: JSON.parse(r.doc) as unknown, createdAt: r.created_at, modifiedAt: r.modified_at, delivery: deliveryOf(r) };
  if (r.csource === 1) out.csource = true;
  return out;
}

/** Longest error text kept for lastError. */
const MAX_ERROR_LENGTH = 500;

export function createSubscriptionRepository(db: BetterSqlite3.Database): SubscriptionRepository {
  const insert = db.prepare<[string, string, string, number, number, string | null, number]>(
    'INSERT INTO subscriptions (tenant, id, doc, created_at, modified_at, owner, csource) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING',
  );
  const byId = db.prepare<[string, string], SubscriptionRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE tenant = ? AND id = ?`);
  const page = db.prepare<[string, number, number, number], SubscriptionRow>(
    `SELECT ${COLUMNS} FROM subscriptions WHERE tenant = ? AND csource = ? ORDER BY seq LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
  );
  const count = db.prepare<[string, number], number>('SELECT count(*) FROM subscriptions WHERE tenant = ? AND csource = ?').pluck();
  const ownPage = db.prepare<[string, string, number, number, number], SubscriptionRow>(
    `SELECT ${COLUMNS} FROM subscriptions WHERE tenant = ? AND owner = ? AND csource = ? ORDER BY seq LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
  );
  const ownCount = db.prepare<[string, string, number], number>('SELECT count(*) FROM subscriptions WHERE tenant = ? AND owner = ? AND csource = ?').pluck();
  const all = db.prepare<[number, number], SubscriptionRow & { seq: number }>(
    `SELECT seq, ${COLUMNS} FROM subscriptions WHERE seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)`,
  );
  const replace = db.prepare<[string, number, string | null, string, string]>(
    'UPDATE subscriptions SET doc = ?, modified_at = ?, owner = coalesce(?, owner) WHERE tenant = ? AND id = ?',
  );
  const remove = db.prepare<[string, string]>('DELETE FROM subscriptions WHERE tenant = ? AND id = ?');
  const record = db.prepare<[number, number, number | null, number | null, string, string | null, string, string, string]>(
    `UPDATE subscriptions SET times_sent = times_sent + ?, last_notification = ?,
       last_success = coalesce(?, last_success), last_failure = coalesce(?, last_failure), status = ?,
       last_error = CASE WHEN ? IS NULL THEN last_error ELSE ? END
     WHERE tenant = ? AND id = ?`,
  );

  return {
    insert(tenant, sub) {
      const result = insert.run(tenant, sub.id, JSON.stringify(sub.doc), sub.createdAt, sub.modifiedAt, sub.owner ?? null, sub.csource === true ? 1 : 0);
      if (result.changes === 0) throw new AlreadyExistsError('Already exists', `Subscription ${sub.id} already exists`);
    },
    get(tenant, id) {
      const row = byId.get(tenant, id);
      return row && toStored(row);
    },
    list(tenant, p, owner, csource = false) {
      const kind = csource ? 1 : 0;
      if (owner !== undefined) {
        const items = p.limit === 0 ? [] : ownPage.all(tenant, owner, kind, p.limit, p.offset).map(toStored);
        return p.count ? { items, count: ownCount.get(tenant, owner, kind) ?? 0 } : { items };
      }
      const items = p.limit === 0 ? [] : page.all(tenant, kind, p.limit, p.offset).map(toStored);
      return p.count ? { items, count: count.get(tenant, kind) ?? 0 } : { items };
    },
    replace: (tenant, id, doc, modifiedAt, owner) => replace.run(JSON.stringify(doc), modifiedAt, owner ?? null, tenant, id).changes > 0,
    delete: (tenant, id) => remove.run(tenant, id).changes > 0,
    listAll() {
      // Read in pages so no single statement holds every row at once.
      const out: Array<{ tenant: string; sub: StoredSubscription }> = [];
      for (let after = 0; ;) {
        const rows = all.all(after, 500);
        for (const r of rows) out.push({ tenant: r.tenant, sub: toStored(r) });
        const last = rows[rows.length - 1];
        if (last === undefined || rows.length < 500) return out;
        after = last.seq;
      }
    },
    recordDelivery(tenant, id, outcome) {
      const error = outcome.ok ? null : (outcome.error ?? 'delivery failed').slice(0, MAX_ERROR_LENGTH);
      const changed = record.run(
        outcome.count ?? 1, outcome.at, outcome.ok ? outcome.at : null, outcome.ok ? null : outcome.at, outcome.ok ? 'ok' : 'failed', error, error ?? '', tenant, id,
      ).changes;
      if (changed === 0) return undefined;
      const row = byId.get(tenant, id);
      return row && deliveryOf(row);
    },
  };
}
