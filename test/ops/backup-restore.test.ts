// scripts/backup.mjs and scripts/restore.mjs against the real process: a backup taken while the broker
// writes holds every write acknowledged before it started; restored into a fresh data directory, a
// broker started on it serves them. Restore refuses a database in use and a damaged backup.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync, closeSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { startBrokerProcess, within } from '../helpers/process.js';

const BACKUP = fileURLToPath(new URL('../../scripts/backup.mjs', import.meta.url));
const RESTORE = fileURLToPath(new URL('../../scripts/restore.mjs', import.meta.url));
const dir = tempDir('edgeld-backup-');
afterAll(() => dir.remove());

/** Runs a script without blocking the event loop (the broker under test is another process). */
function runScript(script: string, args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, out, err });
    });
  });
}

async function create(base: string, id: string, value: number): Promise<number> {
  const res = await fetch(`${base}/ngsi-ld/v1/entities`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id, type: 'Meter', reading: { type: 'Property', value } }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('backup and restore', () => {
  it('backs up a broker under write load, restores into a fresh directory, and a broker there has every write acknowledged before the backup', async () => {
    const live = `${dir.path}/live`;
    const p = await startBrokerProcess({ STORAGE_DIR: live });
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const id = `urn:ngsi-ld:Meter:w${w}-${i}`;
        const status = await create(p.base, id, i);
        if (status !== 201) throw new Error(`create answered ${status}`);
        acknowledged.push(id);
      }
    });
    try {
      await within((async () => { while (acknowledged.length < 300) await new Promise((r) => setImmediate(r)); })(), 20_000, '300 writes');
      const before = [...acknowledged];
      const backup = await runScript(BACKUP, [`${live}/edgeld.db`, `${dir.path}/edgeld-backup.db`]);
      const during = acknowledged.length;
      expect(backup.status, backup.err).toBe(0);
      expect(backup.out).toContain('backup:');
      // The writes went on while the backup ran.
      await within((async () => { while (acknowledged.length < during + 50) await new Promise((r) => setImmediate(r)); })(), 20_000, 'writes after the backup');

      // Restoring over the running broker's database is refused, and changes nothing.
      const inUse = await runScript(RESTORE, [`${dir.path}/edgeld-backup.db`, `${live}/edgeld.db`, '--force']);
      expect(inUse.status).toBe(3);
      expect(inUse.err).toContain('in use by a running broker');
      stop = true;
      await Promise.all(writers);
      expect((await fetch(`${p.base}/health`)).status).toBe(200);

      const fresh = `${dir.path}/fresh`;
      mkdirSync(fresh);
      const restore = await runScript(RESTORE, [`${dir.path}/edgeld-backup.db`, `${fresh}/edgeld.db`]);
      expect(restore.status, restore.err).toBe(0);
      const q = await startBrokerProcess({ STORAGE_DIR: fresh });
      try {
        const res = await fetch(`${q.base}/ngsi-ld/v1/entities?type=Meter&count=true&limit=0`);
        const count = Number(res.headers.get('ngsild-results-count'));
        expect(count).toBeGreaterThanOrEqual(before.length);
        expect(count).toBeLessThanOrEqual(acknowledged.length);
        for (const id of before.filter((_, i) => i % 10 === 0)) {
          expect((await fetch(`${q.base}/ngsi-ld/v1/entities/${id}`)).status, id).toBe(200);
        }
      } finally {
        q.child.kill('SIGTERM');
        expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
      }
    } finally {
      stop = true;
      await Promise.allSettled(writers);
      p.child.kill('SIGTERM');
      await within(p.exited, 10_000, 'SIGTERM');
    }
  }, 60_000);

  it('refuses a damaged backup, an existing database without --force, and a file that is no edgeld database', async () => {
    const src = `${dir.path}/edgeld-backup.db`;
    expect(existsSync(src)).toBe(true);
    const target = `${dir.path}/target`;
    mkdirSync(target, { recursive: true });
    // Overwrite pages in the middle of a copy: the integrity check fails and nothing is written.
    const damaged = `${dir.path}/damaged.db`;
    const bytes = readFileSync(src);
    writeFileSync(damaged, bytes);
    const fd = openSync(damaged, 'r+');
    writeSync(fd, Buffer.alloc(8192, 0xa5), 0, 8192, Math.floor(bytes.length / 2 / 4096) * 4096);
    closeSync(fd);
    const bad = await runScript(RESTORE, [damaged, `${target}/edgeld.db`]);
    expect(bad.status).toBe(1);
    expect(bad.err).toContain('integrity check');
    expect(existsSync(`${target}/edgeld.db`)).toBe(false);

    writeFileSync(`${dir.path}/not-a-db`, 'hello');
    const notDb = await runScript(RESTORE, [`${dir.path}/not-a-db`, `${target}/edgeld.db`]);
    expect(notDb.status).toBe(1);

    expect((await runScript(RESTORE, [src, `${target}/edgeld.db`])).status).toBe(0);
    const again = await runScript(RESTORE, [src, `${target}/edgeld.db`]);
    expect(again.status).toBe(1);
    expect(again.err).toContain('pass --force');
    expect((await runScript(RESTORE, [src, `${target}/edgeld.db`, '--force'])).status).toBe(0);
  });
});
