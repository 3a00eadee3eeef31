// Reading the commands of one entity: its latest commands newest first through the index of migration
// 24 (no scan of every command, no sort), and the device whose entity it is.

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/lib/index.js';
import { createCommandRepository } from '../../../src/store/commands/commands.js';
import { createDeviceRepository } from '../../../src/store/devices/devices.js';
import { MIGRATIONS, runMigrations } from '../../../src/store/migrations/migrations.js';
import type { CommandRecord, DeviceRecord } from '../../../src/store/index.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const VALVE = 'urn:ngsi-ld:Valve:v1';

const command = (n: number, extra: Partial<CommandRecord> = {}): CommandRecord => ({
  id: `c${String(n).padStart(3, '0')}`, tenant: '', deviceId: 'v1', entityId: VALVE, name: 'open', attr: 'https://example.org/open',
  value: n, issuedAt: T0 + n * 1000, expiresAt: T0 + n * 1000 + 60_000, state: 'PENDING', ...extra,
});
const device = (deviceId: string, extra: Partial<DeviceRecord> = {}): DeviceRecord => ({
  deviceId, entityId: VALVE, entityType: 'Valve', renames: {}, unitCodes: {}, staticAttributes: {}, commands: [], createdAt: T0, modifiedAt: T0, ...extra,
});

describe('the commands of an entity in the store', () => {
  let db: Database.Database;
  beforeEach(() => {
    db = new Database(':memory:');
    runMigrations(db, MIGRATIONS, silentLogger);
  });
  afterEach(() => db.close());

  it('lists the latest commands of the entity in its tenant, newest first (then by id), at most limit', () => {
    const commands = createCommandRepository(db);
    for (let n = 1; n <= 5; n++) commands.insert(command(n));
    commands.insert(command(6, { issuedAt: T0 + 5000 }));
    commands.insert(command(7, { entityId: 'urn:ngsi-ld:Valve:other' }));
    commands.insert(command(8, { tenant: 'elsewhere' }));
    expect(commands.transition('c002', ['PENDING'], 'OK', T0 + 9000)).toBe(true);
    expect(commands.recent('', VALVE, 3).map((c) => c.id)).toEqual(['c006', 'c005', 'c004']);
    const all = commands.recent('', VALVE, 100);
    expect(all.map((c) => c.id)).toEqual(['c006', 'c005', 'c004', 'c003', 'c002', 'c001']);
    expect(all.find((c) => c.id === 'c002')).toMatchObject({ state: 'OK', value: 2 });
    expect(commands.recent('elsewhere', VALVE, 10).map((c) => c.id)).toEqual(['c008']);
    expect(commands.recent('', 'urn:ngsi-ld:Valve:none', 10)).toEqual([]);
  });

  it('reads them through the index on (tenant, entity_id, issued_at), without a sort', () => {
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM commands WHERE tenant = ? AND entity_id = ? ORDER BY issued_at DESC, id DESC LIMIT 20`)
      .all('', VALVE) as Array<{ detail: string }>;
    const details = plan.map((p) => p.detail).join('; ');
    expect(details).toMatch(/USING (COVERING )?INDEX commands_entity/);
    expect(details).not.toContain('TEMP B-TREE');
  });

  it('finds the device of an entity: the first that declares commands, else the first registered', () => {
    const devices = createDeviceRepository(db);
    expect(devices.byEntity('', VALVE)).toBeUndefined();
    devices.insert('', device('plain'), 'h');
    expect(devices.byEntity('', VALVE)?.deviceId).toBe('plain');
    devices.insert('', device('commanded', { commands: [{ name: 'open', expires: 'PT1M' }] }), 'h');
    devices.insert('', device('later', { commands: [{ name: 'close', expires: 'PT1M' }] }), 'h');
    expect(devices.byEntity('', VALVE)).toMatchObject({ deviceId: 'commanded', commands: [{ name: 'open', expires: 'PT1M' }] });
    expect(devices.byEntity('other', VALVE)).toBeUndefined();
    const plan = db.prepare('EXPLAIN QUERY PLAN SELECT * FROM devices WHERE tenant = ? AND entity_id = ?').all('', VALVE) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join('; ')).toMatch(/USING (COVERING )?INDEX devices_entity/);
  });
});
