// Migration 18: no owner of a scope. The first writer of a scope used to get `own` on it, and so on
// every entity others later put in it (scope squatting); scopes now grant nothing to their writers
// (docs/auth.md, Scopes). The `own` permissions by scope made so far go: the service made them only
// for scopes (nobody may create `own`), and their holders keep `own` on the entities they created.

import type BetterSqlite3 from 'better-sqlite3';

/** The code of action `own` when this migration shipped (a frozen copy of ACTIONS.indexOf('own')). */
const OWN = 3;

export function up(db: BetterSqlite3.Database): void {
  db.prepare('DELETE FROM permissions WHERE action = ? AND target_id IS NULL').run(OWN);
}
