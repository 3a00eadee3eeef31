// Migration 15: federation upstream. Changes the cloud refused for one entity (parked with its
// error, so they stop blocking the others), and the drain's counters, kept across restarts.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- One row per entity and refused batch: the journal range its changes came from, how many, the
    -- upstream error (ProblemDetails JSON) and what was sent (JSON), for an operator to act on.
    CREATE TABLE federation_parked (
      id         INTEGER PRIMARY KEY,
      tenant     TEXT    NOT NULL,
      entity_id  TEXT    NOT NULL,
      first_seq  INTEGER NOT NULL,
      last_seq   INTEGER NOT NULL,
      changes    INTEGER NOT NULL,
      error      TEXT    NOT NULL,
      payload    TEXT    NOT NULL,
      parked_at  INTEGER NOT NULL
    );

    -- A single row (id 1): what the drain has done so far.
    CREATE TABLE federation_state (
      id               INTEGER PRIMARY KEY CHECK (id = 1),
      dropped          INTEGER NOT NULL DEFAULT 0,
      sent_entities    INTEGER NOT NULL DEFAULT 0,
      sent_instances   INTEGER NOT NULL DEFAULT 0,
      last_success     INTEGER,
      last_error_at    INTEGER,
      last_error       TEXT
    );
    INSERT INTO federation_state (id) VALUES (1);
  `);
}
