// Migration 11: the authorization model. Permissions (interface 2.6) with their target in columns, so
// the read filter of a subject is one indexed lookup; the local subject registry (interface 2.8);
// and the owner of each subscription.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE permissions (
      seq           INTEGER PRIMARY KEY,
      tenant        TEXT    NOT NULL,
      id            TEXT    NOT NULL,
      -- Either target_id, or target_types / target_scopes (JSON lists; NULL: every type / scope).
      target_id     TEXT,
      target_types  TEXT,
      target_scopes TEXT,
      assignee      TEXT    NOT NULL,
      assigner      TEXT,
      -- 0 read, 1 write, 2 admin, 3 own (each includes those below).
      action        INTEGER NOT NULL CHECK (action BETWEEN 0 AND 3),
      created_at    INTEGER NOT NULL,
      modified_at   INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX permissions_id ON permissions (tenant, id);
    -- The rights of assignees on one entity, and the entities a subject may read by id.
    CREATE INDEX permissions_target ON permissions (tenant, target_id, assignee) WHERE target_id IS NOT NULL;
    CREATE INDEX permissions_assignee ON permissions (tenant, assignee, target_id);

    -- Users and groups seen in valid tokens (or known to the built-in identity provider).
    CREATE TABLE subjects (
      id          TEXT    PRIMARY KEY,
      kind        TEXT    NOT NULL CHECK (kind IN ('User', 'Group')),
      -- Users: username, givenName, familyName, subjectInfo, groups; groups: name.
      info        TEXT    NOT NULL,
      updated_at  INTEGER NOT NULL
    ) WITHOUT ROWID;

    -- The subject that created a subscription (its notifications carry only what it may read).
    ALTER TABLE subscriptions ADD COLUMN owner TEXT;
    CREATE INDEX subscriptions_owner ON subscriptions (tenant, owner) WHERE owner IS NOT NULL;
  `);
}
