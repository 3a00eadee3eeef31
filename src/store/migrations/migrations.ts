// Numbered, forward-only schema migrations tracked in PRAGMA user_version. Never edit one that has
// shipped: add the next number. Bucketed history tables are created at runtime (see buckets.ts).

import type BetterSqlite3 from 'better-sqlite3';
import { up as geo } from './migration-002-geo.js';
import { up as queryValues } from './migration-003-query-values.js';
import { up as attributeKinds } from './migration-004-attribute-kinds.js';
import { up as temporal } from './migration-005-temporal.js';
import { up as writePages } from './migration-006-write-pages.js';
import { up as hostedContexts } from './migration-007-hosted-contexts.js';
import { up as journal } from './migration-008-journal.js';
import { up as subscriptions } from './migration-009-subscriptions.js';
import { up as notificationQueue } from './migration-010-notification-queue.js';
import { up as permissions } from './migration-011-permissions.js';
import { up as identity } from './migration-012-identity.js';
import { up as devices } from './migration-013-devices.js';
import { up as mqtt } from './migration-014-mqtt.js';
import { up as federation } from './migration-015-federation.js';
import { up as entityOwner } from './migration-016-entity-owner.js';
import { up as entityVersion } from './migration-017-entity-version.js';
import { up as mqttSessionOwners } from './migration-018-mqtt-session-owners.js';
import { up as scopeOwners } from './migration-019-scope-owners.js';
import { up as registrations } from './migration-020-registrations.js';
import { up as csourceSubscriptions } from './migration-021-csource-subscriptions.js';
import { up as commands } from './migration-022-commands.js';
import { up as federationDownlink } from './migration-023-federation-downlink.js';
import { up as commandLog } from './migration-024-command-log.js';
import { up as commandsFinished } from './migration-025-commands-finished.js';
import { up as entityExpiry } from './migration-026-entity-expiry.js';
import { up as rollups } from './migration-027-rollups.js';
import { up as storageDaily } from './migration-028-storage-daily.js';
import { up as mqttSessionExpiry } from './migration-029-mqtt-session-expiry.js';

/** Where applied migrations are reported (the store's logger fits). */
export interface MigrationLog {
  info(msg: string, fields?: Record<string, unknown>): void;
}

export interface Migration {
  version: number;
  up(db: BetterSqlite3.Database): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    up(db) {
      db.exec(`
        -- Type and attribute IRIs as small integers: every index row and series stays short.
        CREATE TABLE iris (
          id  INTEGER PRIMARY KEY,
          iri TEXT NOT NULL UNIQUE
        );

        -- id, created_at, modified_at and deleted_at live in columns, not again in doc.
        CREATE TABLE entities (
          rowid       INTEGER PRIMARY KEY,
          tenant      TEXT    NOT NULL,
          id          TEXT    NOT NULL,
          doc         TEXT    NOT NULL,
          created_at  INTEGER NOT NULL,
          modified_at INTEGER NOT NULL,
          deleted_at  INTEGER
        );
        -- Soft-deleted rows stay for temporal reads, so only live ids must be unique.
        CREATE UNIQUE INDEX entities_live_id ON entities (tenant, id) WHERE deleted_at IS NULL;
        -- Creation-order listing per tenant (the index carries rowid); untouched by doc updates.
        CREATE INDEX entities_live_order ON entities (tenant) WHERE deleted_at IS NULL;

        CREATE TABLE entity_types (
          entity INTEGER NOT NULL REFERENCES entities (rowid) ON DELETE CASCADE,
          iri    INTEGER NOT NULL REFERENCES iris (id),
          PRIMARY KEY (entity, iri)
        ) WITHOUT ROWID;
        CREATE INDEX entity_types_iri ON entity_types (iri, entity);

        -- One series per (tenant, entity, attribute, datasetId); history rows carry only its id.
        CREATE TABLE series (
          id         INTEGER PRIMARY KEY,
          tenant     TEXT    NOT NULL,
          entity_id  TEXT    NOT NULL,
          attr       INTEGER NOT NULL REFERENCES iris (id),
          dataset_id TEXT
        );
        -- NOTE: NULLs are distinct in a UNIQUE constraint; ifnull() makes the default instance
        -- (no datasetId) unique too. A datasetId is a URI, so it is never ''.
        CREATE UNIQUE INDEX series_key ON series (tenant, entity_id, attr, ifnull(dataset_id, ''));

        CREATE TABLE history_buckets (
          name     TEXT    PRIMARY KEY,
          start_ms INTEGER NOT NULL,
          end_ms   INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE contexts (
          id         TEXT    PRIMARY KEY,
          url        TEXT    NOT NULL UNIQUE,
          body       TEXT    NOT NULL,
          kind       TEXT    NOT NULL CHECK (kind IN ('Cached', 'ImplicitlyCreated')),
          created_at INTEGER NOT NULL
        );
      `);
    },
  },
  { version: 2, up: geo },
  { version: 3, up: queryValues },
  { version: 4, up: attributeKinds },
  { version: 5, up: temporal },
  { version: 6, up: writePages },
  { version: 7, up: hostedContexts },
  { version: 8, up: journal },
  { version: 9, up: subscriptions },
  { version: 10, up: notificationQueue },
  { version: 11, up: permissions },
  { version: 12, up: identity },
  { version: 13, up: devices },
  { version: 14, up: mqtt },
  { version: 15, up: federation },
  { version: 16, up: entityOwner },
  { version: 17, up: entityVersion },
  { version: 18, up: mqttSessionOwners },
  { version: 19, up: scopeOwners },
  { version: 20, up: registrations },
  { version: 21, up: csourceSubscriptions },
  { version: 22, up: commands },
  { version: 23, up: federationDownlink },
  { version: 24, up: commandLog },
  { version: 25, up: commandsFinished },
  { version: 26, up: entityExpiry },
  { version: 27, up: rollups },
  { version: 28, up: storageDaily },
  { version: 29, up: mqttSessionExpiry },
];

function userVersion(db: BetterSqlite3.Database): number {
  const v: unknown = db.pragma('user_version', { simple: true });
  if (typeof v !== 'number') throw new Error(`unexpected user_version: ${String(v)}`);
  return v;
}

/**
 * Applies the migrations newer than the database, each in its own transaction. Returns how many ran.
 * Versions must increase; a gap is allowed (a number reserved for a migration not yet merged), but a
 * migration is never applied below the database's version, so a reserved number must land before
 * any database is migrated past it.
 */
export function runMigrations(db: BetterSqlite3.Database, migrations: readonly Migration[], log: MigrationLog): number {
  migrations.forEach((m, i) => {
    const before = i === 0 ? 0 : migrations[i - 1]!.version;
    if (!Number.isInteger(m.version) || m.version <= before) {
      throw new Error(`migration ${i} has version ${m.version}; expected a version above ${before}`);
    }
  });
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const current = userVersion(db);
  if (current > latest) {
    throw new Error(`database schema version ${current} is newer than this broker (${latest})`);
  }
  let applied = 0;
  for (const m of migrations.filter((x) => x.version > current)) {
    db.transaction(() => {
      m.up(db);
      // PRAGMA takes no bound parameters; version is an integer from the list above.
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
    applied += 1;
    log.info('store migration applied', { version: m.version });
  }
  return applied;
}
