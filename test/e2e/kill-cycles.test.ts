// End-to-end: kill -9 under mixed HTTP and MQTT write load, several times in a row on one data
// directory. After each restart every acknowledged write (HTTP 201, MQTT PUBACK) of every earlier round
// is there, and the notifications of a subscription whose receiver was down during the load arrive
// once it is up: the durable queue resumes after each restart.
// FAULT_CYCLES sets the number of rounds (default 5; scripts/faults.mjs --long runs more).

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { freePort } from '../helpers/mqtt.js';
import { startBrokerProcess, within } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { expectAcknowledged, startWriteLoad, subscribeMeters } from '../helpers/write-load.js';

const CYCLES = Number(process.env['FAULT_CYCLES'] ?? 5);
const dir = tempDir('edgeld-e2e-cycles-');
afterAll(() => dir.remove());

describe('kill -9 under mixed write load', () => {
  it(`loses no acknowledged write and no pending notification over ${CYCLES} kills in a row`, async () => {
    const port = await freePort();
    const env = {
      STORAGE_DIR: `${dir.path}/data`,
      NOTIFICATIONS_RETRY_BASE: '20', NOTIFICATIONS_RETRY_MAX: '200', NOTIFICATIONS_MAX_ATTEMPTS: '100000',
    };
    const created: string[] = [];
    const measured = new Map<string, number[]>();
    const notified = new Set<string>();
    let p = await startBrokerProcess(env);
    await subscribeMeters(p.base, port);

    try {
      for (let round = 0; round < CYCLES; round++) {
        // The receiver is down: notifications of this round's creates wait in the queue.
        const load = await startWriteLoad(p, `r${round}`, { httpWorkers: 4, devices: [`r${round}-a`, `r${round}-b`] });
        await load.until(100, 150);
        p.child.kill('SIGKILL');
        expect(await within(p.exited, 5_000, 'kill -9')).toBe('SIGKILL');
        await load.stop();
        expect(load.serverErrors).toEqual([]);
        created.push(...load.created);
        for (const [device, acked] of load.measured) measured.set(device, acked);

        p = await startBrokerProcess(env);
        await expectAcknowledged(p.base, created, measured);
        const receiver = await startReceiver(port);
        try {
          await within((async () => {
            for (;;) {
              for (const r of receiver.received.splice(0)) for (const e of r.body?.data ?? []) notified.add(e.id);
              if (created.every((id) => notified.has(id))) return;
              await receiver.waitFor(1, { ms: 20_000 });
            }
          })(), 20_000, `every notification of round ${round} and before`);
        } finally {
          await receiver.close();
        }
      }
      p.child.kill('SIGTERM');
      expect(await within(p.exited, 10_000, 'SIGTERM')).toBe(0);
    } finally {
      // A failed round leaves no broker behind.
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }
  }, 30_000 + CYCLES * 25_000);
});
