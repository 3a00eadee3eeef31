// Housekeeping of the commands table: finished commands (OK, ERROR, EXPIRED) older than the retention
// go, in bounded chunks with the event loop turning in between; open ones and recent ones stay; the
// DELETE is a range scan of the index of finished commands (migration 25). The job as scheduled by
// the broker, with commands.retention, counts what it removed in /metrics.

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { pruneFinishedCommands } from '../../src/commands/prune.js';
import { createFixedClock, silentLogger, type Logger } from '../../src/lib/index.js';
import { openStore, type CommandRecord, type CommandState, type Store } from '../../src/store/index.js';
import { createCommandRepository } from '../../src/store/commands/commands.js';
import { MIGRATIONS, runMigrations } from '../../src/store/migrations/migrations.js';
import { startTestBroker } from '../helpers/broker.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import { parseExposition } from '../helpers/metrics.js';

const T0 = Date.parse('2026-05-01T00:00:00Z');
const DAY = 86_400_000;

function recordingLogger(): { log: Logger; infos: Array<{ msg: string; fields: unknown }> } {
  const infos: Array<{ msg: string; fields: unknown }> = [];
  const log: Logger = { ...silentLogger, info: (msg: string, fields?: unknown) => infos.push({ msg, fields }), child: () => log };
  return { log, infos };
}

/** A command issued at `at`, moved to `state` at `at` (unless PENDING). */
function command(store: Store, id: string, state: CommandState, at: number): void {
  const c: CommandRecord = {
    id, tenant: '', deviceId: 'v1', entityId: 'urn:ngsi-ld:Valve:v1', name: 'open', attr: 'https://example.org/open', value: true,
    issuedAt: at, expiresAt: at + 60_000, state: 'PENDING',
  };
  store.commands.insert(c);
  if (state !== 'PENDING') expect(store.commands.transition(id, ['PENDING'], state, at)).toBe(true);
}

const ids = (store: Store, list: readonly string[]): string[] => list.filter((id) => store.commands.get(id) !== undefined);

describe('pruning finished commands', () => {
  it('removes finished commands older than the horizon, keeps open and recent ones, and logs the count', async () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(T0) });
    const all = ['ok-old', 'error-old', 'expired-old', 'pending-old', 'delivered-old', 'ok-new', 'expired-new', 'pending-new'];
    store.transaction(() => {
      command(store, 'ok-old', 'OK', T0 - 10 * DAY);
      command(store, 'error-old', 'ERROR', T0 - 9 * DAY);
      command(store, 'expired-old', 'EXPIRED', T0 - 8 * DAY);
      command(store, 'pending-old', 'PENDING', T0 - 10 * DAY);
      command(store, 'delivered-old', 'DELIVERED', T0 - 10 * DAY);
      command(store, 'ok-new', 'OK', T0 - DAY);
      command(store, 'expired-new', 'EXPIRED', T0 - 7 * DAY + 1);
      command(store, 'pending-new', 'PENDING', T0);
    });
    const { log, infos } = recordingLogger();
    expect(await pruneFinishedCommands({ store, log }, T0 - 7 * DAY)).toEqual({ removed: 3, more: false });
    expect(ids(store, all)).toEqual(['pending-old', 'delivered-old', 'ok-new', 'expired-new', 'pending-new']);
    expect(infos).toEqual([{ msg: 'finished commands removed', fields: { count: 3, finishedBefore: new Date(T0 - 7 * DAY).toISOString(), more: false } }]);
    // Nothing left to remove: nothing logged.
    expect(await pruneFinishedCommands({ store, log }, T0 - 7 * DAY)).toEqual({ removed: 0, more: false });
    expect(infos).toHaveLength(1);
    store.close();
    expect(await pruneFinishedCommands({ store, log }, T0)).toEqual({ removed: 0, more: false });
  });

  it('removes a long backlog in chunks of at most the chunk size, the event loop turning between them, and stops early when aborted', async () => {
    const store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(T0) });
    store.transaction(() => {
      for (let i = 0; i < 23; i++) command(store, `c${String(i).padStart(2, '0')}`, 'OK', T0 - DAY + i);
    });
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const chunks: Array<{ turn: number; removed: number }> = [];
    const commands = {
      ...store.commands,
      pruneFinished: (before: number, limit: number) => {
        const removed = store.commands.pruneFinished(before, limit);
        chunks.push({ turn: turns, removed });
        return removed;
      },
    };
    const view = { isOpen: () => store.isOpen(), commands, write: <T>(fn: Parameters<Store['write']>[0]) => store.write(fn) as Promise<T> };
    expect(await pruneFinishedCommands({ store: view, log: silentLogger, chunk: 5 }, T0)).toEqual({ removed: 23, more: false });
    expect(chunks.map((c) => c.removed)).toEqual([5, 5, 5, 5, 3]);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.turn).toBeGreaterThan(chunks[i - 1]!.turn);

    // Aborted (shutdown): the run ends after the chunk in progress; the oldest went first.
    store.transaction(() => {
      for (let i = 0; i < 12; i++) command(store, `d${String(i).padStart(2, '0')}`, 'ERROR', T0 - DAY + i);
    });
    const stop = new AbortController();
    stop.abort();
    chunks.length = 0;
    expect(await pruneFinishedCommands({ store: view, log: silentLogger, chunk: 5, signal: stop.signal }, T0)).toEqual({ removed: 5, more: true });
    ticking = false;
    expect(ids(store, Array.from({ length: 12 }, (_, i) => `d${String(i).padStart(2, '0')}`))).toHaveLength(7);
    expect(store.commands.get('d00')).toBeUndefined();
    expect(store.commands.get('d11')).toBeDefined();
    store.close();
  });

  it('finds the commands to remove with a range scan of the index of finished commands', () => {
    const db = new Database(':memory:');
    runMigrations(db, MIGRATIONS, silentLogger);
    // The repository's own statement, as it prepares it.
    const statements: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => (statements.push(sql), prepare(sql))) as typeof db.prepare;
    createCommandRepository(db);
    const sql = statements.find((s) => s.startsWith('DELETE FROM commands'));
    expect(sql).toBeDefined();
    const details = (prepare(`EXPLAIN QUERY PLAN ${sql!}`).all(T0, 1_000) as Array<{ detail: string }>).map((r) => r.detail);
    expect(details).toContain('SEARCH commands USING INDEX commands_finished (answered_at<?)');
    expect(details.filter((d) => d.startsWith('SCAN'))).toEqual([]);
    db.close();
  });

  it('runs on commands.prune-schedule with commands.retention in the broker, and counts what it removed in /metrics', async () => {
    const b = await startTestBroker({ config: { commands: { retention: 'P7D', pruneSchedule: '* * * * * *' } } });
    try {
      const { store } = b.broker;
      store.transaction(() => {
        command(store, 'old', 'OK', b.clock.now() - 8 * DAY);
        command(store, 'recent', 'ERROR', b.clock.now() - 6 * DAY);
      });
      await b.broker.listen();
      await waitUntil(() => store.commands.get('old') === undefined, 5_000, 'the old command removed by the job');
      expect(store.commands.get('recent')).toBeDefined();
      const metrics = parseExposition((await b.request('GET', '/metrics')).text);
      expect(metrics.types.get('edgeld_commands_pruned_total')).toBe('counter');
      expect(metrics.value('edgeld_commands_pruned_total')).toBe(1);
    } finally {
      await b.close();
    }
  });
});
