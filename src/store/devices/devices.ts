// Persistence of the device registry: per tenant and MQTT device id, the entity its measurements
// write, how they map to attributes, and the hash of its secret (never read back with the record).

import type BetterSqlite3 from 'better-sqlite3';
import { AlreadyExistsError, type JsonObject } from '../../ngsi/index.js';

/** The @context a device's names expand with: a URL, an object, or an array of them. */
export type DeviceContext = string | JsonObject | Array<string | JsonObject>;

/** A command a device accepts (edge.md §6): its attribute name and how long an issued one stays valid. */
export interface DeviceCommand {
  name: string;
  /** An ISO 8601 duration (PT1M when the registration gave none). */
  expires: string;
}

/** One registered device, as stored (its secret hash is not part of it). */
export interface DeviceRecord {
  deviceId: string;
  entityId: string;
  entityType: string;
  /** Measurement key → attribute name. */
  renames: Record<string, string>;
  /** Attribute name → UN/CEFACT unit code. */
  unitCodes: Record<string, string>;
  /** NGSI-LD attributes in compact normalized form, written with every measurement. */
  staticAttributes: JsonObject;
  /** Absent: the core context. */
  context?: DeviceContext;
  /** The commands it accepts (none: an empty list). */
  commands: DeviceCommand[];
  createdAt: number;
  modifiedAt: number;
}

export interface DeviceRepository {
  /** Inserts a device with the hash of its secret; AlreadyExists when the tenant has that device id. */
  insert(tenant: string, device: DeviceRecord, secretHash: string): void;
  get(tenant: string, deviceId: string): DeviceRecord | undefined;
  /** In creation order; count computed only when asked. */
  list(tenant: string, page: { limit: number; offset: number; count: boolean }): { items: DeviceRecord[]; count?: number };
  /** Replaces every member but deviceId and createdAt (the secret hash is kept); false when there is none. */
  replace(tenant: string, device: DeviceRecord): boolean;
  /** Replaces the secret hash; false when there is no such device. */
  setSecretHash(tenant: string, deviceId: string, secretHash: string, modifiedAt: number): boolean;
  /** The stored secret hash, for verification only. */
  secretHash(tenant: string, deviceId: string): string | undefined;
  delete(tenant: string, deviceId: string): boolean;
  /** The device whose entity `entityId` is (the first registered that declares commands, else the first registered). */
  byEntity(tenant: string, entityId: string): DeviceRecord | undefined;
  /** Devices of every tenant that declare commands, in registration order after `afterSeq`, at most `limit`. */
  withCommands(afterSeq: number, limit: number): Array<{ seq: number; tenant: string; device: DeviceRecord }>;
  /** Devices of every tenant, in registration order after `afterSeq`, at most `limit`. */
  everyTenant(afterSeq: number, limit: number): Array<{ seq: number; tenant: string; device: DeviceRecord }>;
}

interface DeviceRow {
  device_id: string;
  entity_id: string;
  entity_type: string;
  renames: string;
  unit_codes: string;
  static_attributes: string;
  context: string | null;
  commands: string;
  created_at: number;
  modified_at: number;
}

const COLUMNS = 'device_id, entity_id, entity_type, renames, unit_codes, static_attributes, context, commands, created_at, modified_at';

function toRecord(r: DeviceRow): DeviceRecord {
  const out: DeviceRecord = {
    deviceId: r.device_id, entityId: r.entity_id, entityType: r.entity_type,
    // NOTE: written by this file from the same types (JSON.stringify of the record's members).
    renames: JSON.parse(r.renames) as Record<string, string>,
    unitCodes: JSON.parse(r.unit_codes) as Record<string, string>,
    staticAttributes: JSON.parse(r.static_attributes) as JsonObject,
    commands: JSON.parse(r.commands) as DeviceCommand[],
    createdAt: r.created_at, modifiedAt: r.modified_at,
  };
  // NOTE: as above, a DeviceContext serialized by this file.
  if (r.context !== null) out.context = JSON.parse(r.context) as DeviceContext;
  return out;
}

/** The mutable columns of a record, in the order of the INSERT and UPDATE statements below. */
const mutableValues = (d: DeviceRecord): [string, string, string, string, string, string | null, string] => [
  d.entityId, d.entityType, JSON.stringify(d.renames), JSON.stringify(d.unitCodes), JSON.stringify(d.staticAttributes),
  d.context === undefined ? null : JSON.stringify(d.context), JSON.stringify(d.commands),
];

export function createDeviceRepository(db: BetterSqlite3.Database): DeviceRepository {
  const insert = db.prepare<[string, string, string, string, string, string, string, string | null, string, string, number, number]>(
    `INSERT INTO devices (tenant, device_id, entity_id, entity_type, renames, unit_codes, static_attributes, context, commands, secret_hash, created_at, modified_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, device_id) DO NOTHING`,
  );
  const byId = db.prepare<[string, string], DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE tenant = ? AND device_id = ?`);
  const page = db.prepare<[string, number, number], DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE tenant = ? ORDER BY seq LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`);
  const count = db.prepare<[string], number>('SELECT count(*) FROM devices WHERE tenant = ?').pluck();
  const update = db.prepare<[string, string, string, string, string, string | null, string, number, string, string]>(
    `UPDATE devices SET entity_id = ?, entity_type = ?, renames = ?, unit_codes = ?, static_attributes = ?, context = ?, commands = ?, modified_at = ?
     WHERE tenant = ? AND device_id = ?`,
  );
  const setSecret = db.prepare<[string, number, string, string]>('UPDATE devices SET secret_hash = ?, modified_at = ? WHERE tenant = ? AND device_id = ?');
  const secret = db.prepare<[string, string], string>('SELECT secret_hash FROM devices WHERE tenant = ? AND device_id = ?').pluck();
  const remove = db.prepare<[string, string]>('DELETE FROM devices WHERE tenant = ? AND device_id = ?');
  const ofEntity = db.prepare<[string, string], DeviceRow>(
    `SELECT ${COLUMNS} FROM devices WHERE tenant = ? AND entity_id = ? ORDER BY commands = '[]', seq LIMIT 1`,
  );
  const commanded = db.prepare<[number, number], DeviceRow & { seq: number; tenant: string }>(
    `SELECT seq, tenant, ${COLUMNS} FROM devices WHERE seq > ? AND commands <> '[]' ORDER BY seq LIMIT CAST(? AS INTEGER)`,
  );

  const every = db.prepare<[number, number], DeviceRow & { seq: number; tenant: string }>(
    `SELECT seq, tenant, ${COLUMNS} FROM devices WHERE seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)`,
  );

  return {
    insert(tenant, device, secretHash) {
      const done = insert.run(tenant, device.deviceId, ...mutableValues(device), secretHash, device.createdAt, device.modifiedAt).changes > 0;
      if (!done) throw new AlreadyExistsError('Already exists', `Device ${device.deviceId} already exists`);
    },
    get(tenant, deviceId) {
      const row = byId.get(tenant, deviceId);
      return row && toRecord(row);
    },
    list(tenant, p) {
      const items = p.limit === 0 ? [] : page.all(tenant, p.limit, p.offset).map(toRecord);
      return p.count ? { items, count: count.get(tenant) ?? 0 } : { items };
    },
    replace: (tenant, device) => update.run(...mutableValues(device), device.modifiedAt, tenant, device.deviceId).changes > 0,
    setSecretHash: (tenant, deviceId, secretHash, modifiedAt) => setSecret.run(secretHash, modifiedAt, tenant, deviceId).changes > 0,
    secretHash: (tenant, deviceId) => secret.get(tenant, deviceId),
    delete: (tenant, deviceId) => remove.run(tenant, deviceId).changes > 0,
    byEntity(tenant, entityId) {
      const row = ofEntity.get(tenant, entityId);
      return row && toRecord(row);
    },
    withCommands: (afterSeq, limit) => commanded.all(afterSeq, limit).map((r) => ({ seq: r.seq, tenant: r.tenant, device: toRecord(r) })),
    everyTenant: (afterSeq, limit) => every.all(afterSeq, limit).map((r) => ({ seq: r.seq, tenant: r.tenant, device: toRecord(r) })),
  };
}
