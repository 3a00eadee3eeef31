// End-to-end: SIGTERM under mixed HTTP and MQTT write load. The process stops accepting, answers what
// it accepted without a 5xx, keeps the undelivered notifications queued, checkpoints the WAL into the
// database file and exits 0 within 5 s; after a restart every acknowledged write is there and the
// queued notifications are delivered.

import { existsSync, statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { freePort } from '../helpers/mqtt.js';
import { startBrokerProcess, within } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { expectAcknowledged, startWriteLoad, subscribeMeters } from '../helpers/write-load.js';

const dir = tempDir('edgeld-e2e-sigterm-');
afterAll(() => dir.remove());

describe('SIGTERM under mixed write load', () => {
  it('exits 0 within 5 s with the WAL checkpointed, and loses no acknowledged write or queued notification', async () => {
    const port = await freePort();
    const env = { STORAGE_DIR: `${dir.path}/data`, NOTIFICATIONS_RETRY_BASE: '20', NOTIFICATIONS_RETRY_MAX: '200', NOTIFICATIONS_MAX_ATTEMPTS: '100000' };
    const p = await startBrokerProcess(env);
    await subscribeMeters(p.base, port);
    // The receiver is down: notifications are queued and retried while the load runs.
    const load = await startWriteLoad(p, 'term', { httpWorkers: 8, devices: ['term-a', 'term-b'] });
    await load.until(300, 300).catch(async (err: unknown) => {
      p.child.kill('SIGKILL');
      await load.stop();
      throw err;
    });
    const signalled = performance.now();
    p.child.kill('SIGTERM');
    const code = await within(p.exited, 10_000, 'SIGTERM exit');
    const exitMs = performance.now() - signalled;
    await load.stop();
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(5_000);
    expect(load.serverErrors).toEqual([]);
    expect(p.stderr()).toContain('"msg":"stopped"');
    // The checkpoint at close copied the WAL into the database and emptied (or removed) it.
    const wal = `${dir.path}/data/edgeld.db-wal`;
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);

    const receiver = await startReceiver(port);
    const q = await startBrokerProcess(env);
    try {
      await expectAcknowledged(q.base, load.created, load.measured);
      const notified = new Set<string>();
      await within((async () => {
        for (;;) {
          for (const r of receiver.received.splice(0)) for (const e of r.body?.data ?? []) notified.add(e.id);
          if (load.created.every((id) => notified.has(id))) return;
          await receiver.waitFor(1, { ms: 20_000 });
        }
      })(), 20_000, 'the notifications queued at the stop');
    } finally {
      q.child.kill('SIGTERM');
      expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
      await receiver.close();
    }
  }, 60_000);
});
