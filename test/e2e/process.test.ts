// End-to-end: the real process. Acknowledged writes survive kill -9; SIGTERM under load drains
// and exits 0; a bad configuration stops start-up with a message naming the option.

import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/broker.js';
import { startBrokerProcess, within } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-');
afterAll(() => dir.remove());

async function post(base: string, path: string, body: unknown, method = 'POST'): Promise<number> {
  const res = await fetch(base + path, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

describe('durability', () => {
  it('finds every acknowledged write after kill -9 and a restart', async () => {
    const env = { STORAGE_DIR: `${dir.path}/kill9` };
    const p = await startBrokerProcess(env);
    const acknowledged = new Map<string, number>();
    // Concurrent creates and updates, each acknowledged before the kill.
    await Promise.all(Array.from({ length: 8 }, async (_, worker) => {
      for (let i = 0; i < 25; i++) {
        const id = `urn:ngsi-ld:Sensor:w${worker}-${i}`;
        expect(await post(p.base, '/ngsi-ld/v1/entities', { id, type: 'Sensor', temperature: { type: 'Property', value: i } })).toBe(201);
        expect(await post(p.base, `/ngsi-ld/v1/entities/${id}/attrs/temperature`, { value: i + 1000 }, 'PATCH')).toBe(204);
        acknowledged.set(id, i + 1000);
      }
    }));
    p.child.kill('SIGKILL');
    expect(await within(p.exited, 5000, 'kill -9')).toBe('SIGKILL');

    const q = await startBrokerProcess(env);
    for (const [id, value] of acknowledged) {
      const res = await fetch(`${q.base}/ngsi-ld/v1/entities/${id}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { temperature: { value: number } };
      expect(body.temperature.value).toBe(value);
    }
    q.child.kill('SIGTERM');
    expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
  });
});

describe('shutdown', () => {
  it('drains in-flight requests on SIGTERM under load and exits 0', async () => {
    const p = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/term` });
    let ok = 0;
    let refused = 0;
    const bad: number[] = [];
    let stop = false;
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop && i < 2000; i++) {
        try {
          const status = await post(p.base, '/ngsi-ld/v1/entities', { id: `urn:ngsi-ld:Sensor:t${w}-${i}`, type: 'Sensor', n: { type: 'Property', value: i } });
          if (status === 201) ok++;
          else bad.push(status);
        } catch {
          refused++; // connection refused or reset once the listener is closed
          if (refused > 50) return;
        }
      }
    });
    await within((async () => { while (ok < 200) await new Promise((r) => setImmediate(r)); })(), 15_000, 'load');
    p.child.kill('SIGTERM');
    const code = await within(p.exited, 15_000, 'SIGTERM exit');
    stop = true;
    await Promise.all(workers);
    expect(code).toBe(0);
    expect(bad.filter((s) => s >= 500)).toEqual([]);
    expect(p.stderr()).toContain('"msg":"stopped"');

    // Everything acknowledged before the stop is there after a restart.
    const q = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/term` });
    const res = await fetch(`${q.base}/ngsi-ld/v1/entities?type=Sensor&count=true&limit=0`);
    expect(Number(res.headers.get('ngsild-results-count'))).toBeGreaterThanOrEqual(ok);
    q.child.kill('SIGTERM');
    expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
  });
});

describe('start-up', () => {
  it('refuses a bad configuration value and names the option', () => {
    const main = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
    const res = spawnSync(process.execPath, [main], {
      env: { PATH: process.env['PATH'] ?? '', SERVER_PORT: 'seventy', PAGINATION_LIMIT_MAX: '-3', STORAGE_DIR: `${dir.path}/bad` },
      encoding: 'utf8', timeout: 10_000,
    });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('server.port');
    expect(res.stderr).toContain('pagination.limit-max');
  });
});
