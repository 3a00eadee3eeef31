// Migration 25: the finished commands (OK, ERROR, EXPIRED) by the time they finished, so that the
// housekeeping of the commands table removes those past commands.retention with a range scan, not a
// scan of every row.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- answered_at is the time of the last transition: for a finished command, when it finished.
    CREATE INDEX commands_finished ON commands (answered_at) WHERE state IN ('OK', 'ERROR', 'EXPIRED');
  `);
}
