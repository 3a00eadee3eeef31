// End-to-end: notifications of the real process survive kill -9. Writes acknowledged while the
// receiver is down leave notifications pending (queued, or not even matched yet); after kill -9 and
// a restart, the receiver, back up, gets every one of them, in order.

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { startBrokerProcess, within } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { freePort } from '../helpers/mqtt.js';
import { createServer, type Socket } from 'node:net';
import Database from 'better-sqlite3';

const dir = tempDir('edgeld-e2e-notify-');
afterAll(() => dir.remove());

const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';

async function send(base: string, method: string, path: string, body: unknown, type = 'application/json'): Promise<number> {
  const res = await fetch(base + path, { method, headers: { 'Content-Type': type }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

describe('notification durability', () => {
  it('delivers every notification pending at a kill -9 after the restart, in order', async () => {
    // The receiver's port is reserved but nothing listens there until after the kill.
    const port = await freePort();
    const env = {
      STORAGE_DIR: `${dir.path}/notify`, NOTIFICATIONS_RETRY_BASE: '20', NOTIFICATIONS_RETRY_MAX: '100', NOTIFICATIONS_MAX_ATTEMPTS: '1000',
    };
    const p = await startBrokerProcess(env);
    expect(await send(p.base, 'POST', '/ngsi-ld/v1/subscriptions', {
      id: 'urn:ngsi-ld:Subscription:e2e', type: 'Subscription', entities: [{ type: 'Meter' }],
      notification: { endpoint: { uri: `http://127.0.0.1:${port}/notify`, accept: 'application/json' } }, '@context': CORE,
    }, 'application/ld+json')).toBe(201);
    const id = 'urn:ngsi-ld:Meter:m1';
    expect(await send(p.base, 'POST', '/ngsi-ld/v1/entities', { id, type: 'Meter', reading: { type: 'Property', value: 0 } })).toBe(201);
    for (let v = 1; v <= 30; v++) {
      expect(await send(p.base, 'PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, { reading: { type: 'Property', value: v } })).toBe(204);
    }
    p.child.kill('SIGKILL');
    expect(await within(p.exited, 5000, 'kill -9')).toBe('SIGKILL');

    const receiver = await startReceiver(port);
    const q = await startBrokerProcess(env);
    try {
      const got = await receiver.waitFor(31, { ms: 15_000 });
      const values = got.map((r) => r.body.data[0].reading.value);
      expect(values).toEqual(Array.from({ length: 31 }, (_, i) => i));
    } finally {
      q.child.kill('SIGTERM');
      expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
      await receiver.close();
    }
  });

  it('delivers after a kill -9 the notifications held in memory for a receiver that stopped answering, as written', async () => {
    // A receiver that takes the first notification, then reads the next ones and never answers:
    // they stay in flight or waiting in memory, not queued.
    const port = await freePort();
    const sockets = new Set<Socket>();
    let requests = 0;
    const stalled = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        const heads = chunk.toString('latin1').split('POST ').length - 1;
        for (let k = 0; k < heads; k++) if (requests++ === 0) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
      });
    });
    await new Promise<void>((resolve) => stalled.listen(port, '127.0.0.1', resolve));
    const env = { STORAGE_DIR: `${dir.path}/stalled`, NOTIFICATIONS_TIMEOUT: '60000' };
    const p = await startBrokerProcess(env);
    expect(await send(p.base, 'POST', '/ngsi-ld/v1/subscriptions', {
      id: 'urn:ngsi-ld:Subscription:stalled', type: 'Subscription', entities: [{ type: 'Meter' }],
      notification: { endpoint: { uri: `http://127.0.0.1:${port}/notify`, accept: 'application/json' } }, '@context': CORE,
    }, 'application/ld+json')).toBe(201);
    const id = 'urn:ngsi-ld:Meter:m2';
    expect(await send(p.base, 'POST', '/ngsi-ld/v1/entities', { id, type: 'Meter', reading: { type: 'Property', value: 0 } })).toBe(201);
    for (let v = 1; v <= 30; v++) {
      expect(await send(p.base, 'PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, { reading: { type: 'Property', value: v } })).toBe(204);
    }
    const deadline = Date.now() + 10_000;
    while (requests < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(requests).toBeGreaterThanOrEqual(2);
    // Writes nobody subscribed to, until the notifier has saved its cursor past the creation (it
    // saves now and then): the saved cursor must stay before the changes held in memory.
    const db = new Database(`${env.STORAGE_DIR}/edgeld.db`, { readonly: true });
    try {
      const created = db.prepare<[string], number>('SELECT min(seq) FROM journal WHERE entity_id = ?').pluck().get(id)!;
      const cursor = db.prepare<[], number | undefined>("SELECT seq FROM journal_cursors WHERE reader = 'notifier'").pluck();
      for (let n = 0; (cursor.get() ?? 0) < created && Date.now() < deadline + 5_000; n++) {
        expect(await send(p.base, 'POST', '/ngsi-ld/v1/entities', { id: `urn:ngsi-ld:Other:${n}`, type: 'Other' })).toBe(201);
      }
      expect(cursor.get()).toBeGreaterThanOrEqual(created);
    } finally {
      db.close();
    }
    p.child.kill('SIGKILL');
    expect(await within(p.exited, 5000, 'kill -9')).toBe('SIGKILL');
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => stalled.close(() => resolve()));

    const receiver = await startReceiver(port);
    const q = await startBrokerProcess(env);
    try {
      // At least once: what was in memory is notified again, each change with the value it wrote.
      await receiver.waitFor(30, { ms: 15_000 });
      const wait = Date.now() + 10_000;
      while (!receiver.received.some((r) => r.body.data[0].reading.value === 30) && Date.now() < wait) await new Promise((r) => setTimeout(r, 20));
      const values = receiver.received.map((r) => r.body.data[0].reading.value as number);
      for (let v = 1; v <= 30; v++) expect(values).toContain(v);
      expect(values).toEqual([...values].sort((a, b) => a - b));
    } finally {
      q.child.kill('SIGTERM');
      expect(await within(q.exited, 10_000, 'SIGTERM')).toBe(0);
      await receiver.close();
    }
  });
});
