// Transient entities (NGSI-LD §4.22): the job that removes the entities whose expiresAt has come, each
// as Delete Entity removes it (a deletion instance of each attribute in the history, one
// entityDeleted change that subscriptions are notified of), through the write core as the broker's
// own subject, in writes of a bounded number of entities with a turn of the event loop between them;
// and the alarm that runs the job when the earliest expiry comes, so that removal lags expiresAt by
// milliseconds rather than by the job's schedule.

import type { ChangeEmitter, ChangeEvent, WriteCore, WriteTx } from '../events.js';
import type { Clock, IdGenerator, Logger } from '../lib/index.js';
import { deletionsOfEntity, historyOfChanges, isExpired, type EntityId, type Principal } from '../ngsi/index.js';
import type { DueEntity, Store } from '../store/index.js';

/** The subject the removals of expired entities are written as (journal, history). */
const EXPIRY_SUBJECT = 'urn:ngsi-ld:edgeld:expiry';
/** Entities one write removes at most (a few tens of milliseconds on a Pi's SD card). */
const EXPIRY_CHUNK = 500;
/** The longest the alarm waits before it looks again (a wall clock set by NTP after boot is followed). */
const MAX_ALARM_MS = 3_600_000;

export interface EntityExpiryDeps {
  store: Pick<Store, 'entities' | 'isOpen'>;
  core: WriteCore;
  clock: Clock;
  newId: IdGenerator;
  log: Logger;
  /** Most entities removed per write (default 500). */
  chunk?: number;
}

export interface EntityExpiryStats {
  /** Entities removed because their expiresAt came, since start. */
  expired: number;
  /** Writes those removals took. */
  writes: number;
}

export interface EntityExpiry {
  /**
   * Removes every entity due now, of every tenant, `chunk` per write; resolves with how many went.
   * Stops after the write in progress when `signal` aborts (the next run goes on).
   */
  sweep(signal?: AbortSignal): Promise<number>;
  /**
   * Follows committed changes: `wake` is called when the earliest expiresAt comes (and once now,
   * for what came while the broker was down).
   */
  start(events: ChangeEmitter, wake: () => void): void;
  stop(): void;
  stats(): EntityExpiryStats;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The due entities by tenant, in the order found. */
function byTenant(due: readonly DueEntity[]): Map<string, EntityId[]> {
  const out = new Map<string, EntityId[]>();
  for (const d of due) {
    const ids = out.get(d.tenant);
    if (ids === undefined) out.set(d.tenant, [d.id]);
    else ids.push(d.id);
  }
  return out;
}

export function createEntityExpiry(deps: EntityExpiryDeps): EntityExpiry {
  const { store, core, clock, newId, log } = deps;
  const chunk = deps.chunk ?? EXPIRY_CHUNK;
  const stats: EntityExpiryStats = { expired: 0, writes: 0 };
  const actors = new Map<string, Principal>();
  const actorOf = (tenant: string): Principal => {
    let actor = actors.get(tenant);
    if (actor === undefined) actors.set(tenant, (actor = { tenant, subject: EXPIRY_SUBJECT, admin: true, assignees: [], groups: [] }));
    return actor;
  };

  /** Removes those of `ids` still due inside the write: an expiresAt moved later (or removed) meanwhile keeps its entity. */
  const removeDue = (tx: WriteTx, ids: readonly EntityId[]): number => {
    let removed = 0;
    for (const id of ids) {
      const previous = tx.live(id);
      if (previous === undefined || !isExpired(previous, tx.now)) continue;
      tx.markDeleted(previous, historyOfChanges(id, deletionsOfEntity(previous), tx.now, newId, EXPIRY_SUBJECT));
      removed++;
    }
    return removed;
  };

  /** One chunk: the entities due now, removed in one write per tenant; how many were due and how many went. */
  const sweepChunk = async (): Promise<{ due: number; removed: number }> => {
    const due = store.entities.dueToExpire(clock.now(), chunk);
    let removed = 0;
    for (const [tenant, ids] of byTenant(due)) {
      removed += await core.write(actorOf(tenant), (tx) => removeDue(tx, ids));
      stats.writes++;
    }
    stats.expired += removed;
    return { due: due.length, removed };
  };

  let alarm: NodeJS.Timeout | undefined;
  let alarmAt: number | undefined;
  let wakeUp: (() => void) | undefined;
  let unsubscribe: (() => void) | undefined;

  const disarm = (): void => {
    clearTimeout(alarm);
    alarm = undefined;
    alarmAt = undefined;
  };
  /** Sets the alarm for `at` unless it is set for earlier already. */
  const arm = (at: number | undefined): void => {
    const wake = wakeUp;
    if (wake === undefined || at === undefined || (alarmAt !== undefined && alarmAt <= at)) return;
    disarm();
    alarmAt = at;
    alarm = setTimeout(() => {
      alarm = undefined;
      alarmAt = undefined;
      wake();
    }, Math.min(Math.max(at - clock.now(), 0), MAX_ALARM_MS));
    alarm.unref(); // housekeeping never keeps the process alive on its own
  };
  const onChange = (event: ChangeEvent): void => {
    const at = event.entity?.expiresAt;
    if (at !== undefined) arm(at);
  };

  return {
    async sweep(signal) {
      let total = 0;
      let stalled = false;
      for (;;) {
        if (!store.isOpen() || signal?.aborted === true) return total;
        const { due, removed } = await sweepChunk();
        total += removed;
        // A chunk of which nothing went would come back whole: the job's next run tries again.
        stalled = due > 0 && removed === 0;
        if (due < chunk || stalled) break;
        await nextTurn();
      }
      if (total > 0) log.debug('expired entities removed', { count: total });
      if (store.isOpen() && !stalled) arm(store.entities.nextExpiry());
      return total;
    },
    start(events, wake) {
      if (unsubscribe !== undefined) return;
      wakeUp = wake;
      unsubscribe = events.on(onChange);
      wake();
    },
    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      wakeUp = undefined;
      disarm();
    },
    stats: () => ({ ...stats }),
  };
}
