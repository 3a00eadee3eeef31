// End-to-end: the real process says at start when its last stop was unclean (kill -9), with what
// recovery did (the WAL replayed by SQLite, the journal readers' pending changes, the notifications
// queued); after a SIGTERM stop the next start says nothing of the kind. The marker of a running
// broker is a 0600 file next to the database, gone after a clean stop.

import { existsSync, statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { freePort } from '../helpers/mqtt.js';
import { startBrokerProcess, within, type BrokerProcess } from '../helpers/process.js';
import { subscribeMeters } from '../helpers/write-load.js';

const dir = tempDir('edgeld-e2e-stops-');
afterAll(() => dir.remove());

const UNCLEAN = 'the last stop was unclean (killed or power lost); recovered';

/** The JSON log lines written so far. */
function lines(p: BrokerProcess): Array<Record<string, unknown>> {
  return p.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function createMeters(base: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${base}/ngsi-ld/v1/entities`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: `urn:ngsi-ld:Meter:u${i}`, type: 'Meter', energy: { type: 'Property', value: i } }),
    });
    expect(res.status).toBe(201);
  }
}

describe('start after an unclean stop', () => {
  it('logs that the last stop was unclean and what recovery did after kill -9, and nothing after SIGTERM', async () => {
    const env = { STORAGE_DIR: `${dir.path}/data`, NOTIFICATIONS_RETRY_BASE: '60000', NOTIFICATIONS_RETRY_MAX: '60000' };
    const marker = `${dir.path}/data/edgeld.db.running`;
    const running = new Set<BrokerProcess>();
    try {
      const p = await startBrokerProcess(env);
      running.add(p);
      expect(lines(p).some((l) => l['msg'] === UNCLEAN)).toBe(false);
      expect(statSync(marker).mode & 0o777).toBe(0o600);
      // Notifications to a receiver that is down: they wait, in the journal or in the queue.
      await subscribeMeters(p.base, await freePort());
      await createMeters(p.base, 20);
      p.child.kill('SIGKILL');
      expect(await within(p.exited, 5_000, 'kill -9')).toBe('SIGKILL');
      expect(existsSync(marker)).toBe(true);

      const q = await startBrokerProcess(env);
      running.add(q);
      const unclean = lines(q).find((l) => l['msg'] === UNCLEAN);
      expect(unclean, q.stderr()).toBeDefined();
      expect(unclean).toMatchObject({ level: 'warn', lastPid: p.child.pid, walBytes: expect.any(Number) });
      expect(unclean!['walBytes']).toBeGreaterThan(0);
      const readers = unclean!['journalReaders'] as Array<{ reader: string; cursor: number; pending: number }>;
      const notifier = readers.find((r) => r.reader === 'notifier');
      expect(notifier, JSON.stringify(readers)).toBeDefined();
      // Every create's notification is either queued or still to be read from the journal.
      expect(Number(unclean!['notificationsQueued']) + notifier!.pending).toBeGreaterThan(0);
      expect(unclean!['recovery']).toMatch(/SQLite replayed the write-ahead log \(\d+ bytes\) on open; journal readers resume from their cursors: .*notifier with \d+ changes? pending.*; \d+ notifications? queued/);

      q.child.kill('SIGTERM');
      expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
      expect(existsSync(marker)).toBe(false);

      const r = await startBrokerProcess(env);
      running.add(r);
      expect(lines(r).filter((l) => String(l['msg']).includes('unclean')), r.stderr()).toEqual([]);
      expect(r.stderr()).not.toContain('unclean');
      expect(existsSync(marker)).toBe(true);
      r.child.kill('SIGTERM');
      expect(await within(r.exited, 10_000, 'SIGTERM')).toBe(0);
    } finally {
      for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }
  }, 60_000);
});
