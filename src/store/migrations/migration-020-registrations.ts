// Migration 20: context source registrations (NGSI-LD §5.2.9, §5.9). The document is the
// registrations module's encoding of the model; the two index tables hold what a match looks up
// (entity type, id, idPattern per EntityInfo; attribute names per RegistrationInfo), so finding the
// registrations of an entity or an attribute never parses documents.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE csource_registrations (
      seq         INTEGER PRIMARY KEY,
      tenant      TEXT    NOT NULL,
      id          TEXT    NOT NULL,
      owner       TEXT,
      mode        TEXT    NOT NULL CHECK (mode IN ('inclusive', 'exclusive', 'redirect', 'auxiliary')),
      expires_at  INTEGER,
      created_at  INTEGER NOT NULL,
      modified_at INTEGER NOT NULL,
      doc         TEXT    NOT NULL
    );
    CREATE UNIQUE INDEX csource_registrations_id ON csource_registrations (tenant, id);
    CREATE INDEX csource_registrations_mode ON csource_registrations (tenant, mode);
    CREATE INDEX csource_registrations_expiry ON csource_registrations (expires_at) WHERE expires_at IS NOT NULL;

    -- One row per EntityInfo; a RegistrationInfo without entities has one row with every column NULL
    -- (it covers every entity). info: the position of the RegistrationInfo in information.
    CREATE TABLE csource_registration_entities (
      registration INTEGER NOT NULL,
      tenant       TEXT    NOT NULL,
      info         INTEGER NOT NULL,
      type         TEXT,
      entity_id    TEXT,
      id_pattern   TEXT
    );
    CREATE INDEX csource_registration_entities_reg ON csource_registration_entities (registration);
    CREATE INDEX csource_registration_entities_type ON csource_registration_entities (tenant, type);
    CREATE INDEX csource_registration_entities_id ON csource_registration_entities (tenant, entity_id);

    -- One row per attribute name of a RegistrationInfo; one row with attr NULL when it names none
    -- (it covers every attribute).
    CREATE TABLE csource_registration_attrs (
      registration INTEGER NOT NULL,
      tenant       TEXT    NOT NULL,
      info         INTEGER NOT NULL,
      attr         TEXT
    );
    CREATE INDEX csource_registration_attrs_reg ON csource_registration_attrs (registration);
    CREATE INDEX csource_registration_attrs_attr ON csource_registration_attrs (tenant, attr);
  `);
}
