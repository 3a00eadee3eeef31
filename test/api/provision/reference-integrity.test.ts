// Foreign keys are declared but not enforced (see store/open.ts): every write path must keep the
// references whole by itself. A mixed workload through the API, then PRAGMA foreign_key_check.

import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestBroker, tempDir } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1';

const room = (n: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: `urn:ngsi-ld:Room:${n}`,
  type: ['Room', 'Place'],
  temperature: [
    { type: 'Property', value: 20 + n, observedAt: '2026-05-01T09:00:00.000Z' },
    { type: 'Property', value: 30 + n, datasetId: 'urn:ngsi-ld:Dataset:b' },
  ],
  name: { type: 'Property', value: `room ${n}` },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [4.8 + n / 100, 45.7] } },
  isIn: { type: 'Relationship', object: 'urn:ngsi-ld:Building:1' },
  ...extra,
});

describe('reference integrity without enforced foreign keys', () => {
  it('leaves no dangling reference after creates, updates, deletes, re-creates, batches and purges', async () => {
    const dir = tempDir();
    const dbPath = join(dir.path, 'edgeld.db');
    try {
      const b = await startTestBroker({ dbPath });
      const ok = async (p: Promise<{ status: number; text: string }>, status: number): Promise<void> => {
        const res = await p;
        expect(res.status, res.text).toBe(status);
      };
      for (let n = 1; n <= 6; n++) await ok(b.request('POST', `${P}/entities`, { body: room(n) }), 201);
      await ok(b.request('PATCH', `${P}/entities/urn:ngsi-ld:Room:1/attrs/temperature`, { body: { value: 5 } }), 204);
      await ok(b.request('PATCH', `${P}/entities/urn:ngsi-ld:Room:2/attrs`, {
        body: { location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [5, 46] } }, type: 'Room' },
      }), 204);
      await ok(b.request('DELETE', `${P}/entities/urn:ngsi-ld:Room:2/attrs/name`), 204);
      await ok(b.request('PUT', `${P}/entities/urn:ngsi-ld:Room:3`, { body: { type: 'Hall', size: { type: 'Property', value: 3 } } }), 204);
      await ok(b.request('DELETE', `${P}/entities/urn:ngsi-ld:Room:4`), 204);
      await ok(b.request('POST', `${P}/entities`, { body: room(4, { type: 'Kitchen' }) }), 201);
      await ok(b.request('DELETE', `${P}/entities/urn:ngsi-ld:Room:4`), 204);
      await ok(b.request('POST', `${P}/entityOperations/upsert`, { body: [room(5), room(7), room(8)] }), 201);
      await ok(b.request('POST', `${P}/entityOperations/delete`, { body: ['urn:ngsi-ld:Room:7'] }), 204);
      // Temporal delete purges every row of the id, the soft-deleted ones included.
      await ok(b.request('DELETE', `${P}/temporal/entities/urn:ngsi-ld:Room:4`), 204);
      await ok(b.request('DELETE', `${P}/temporal/entities/urn:ngsi-ld:Room:6`), 204);
      await ok(b.request('DELETE', `${P}/entities?type=Hall`), 204);
      await b.close();

      const db = new Database(dbPath, { readonly: true });
      try {
        expect(db.pragma('foreign_key_check')).toEqual([]);
        // The purged ids left nothing behind, type rows included.
        const rowsOf = (id: string): number => db.prepare<[string], number>(
          'SELECT count(*) FROM entities WHERE id = ?',
        ).pluck().get(id) ?? -1;
        expect([rowsOf('urn:ngsi-ld:Room:4'), rowsOf('urn:ngsi-ld:Room:6')]).toEqual([0, 0]);
        expect(db.prepare('SELECT count(*) FROM entity_types WHERE entity NOT IN (SELECT rowid FROM entities)').pluck().get()).toBe(0);
        // Something was written at all: the check above ran over real rows.
        expect(db.prepare('SELECT count(*) FROM attr_values').pluck().get()).toBeGreaterThan(5);
        expect(db.prepare('SELECT count(*) FROM geo_shapes').pluck().get()).toBeGreaterThan(2);
      } finally {
        db.close();
      }
    } finally {
      dir.remove();
    }
  });
});
