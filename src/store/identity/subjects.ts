// The local subject registry (interface 2.8): users and groups as seen in valid tokens or known to the
// built-in identity provider. Subjects belong to no tenant: one identity provider serves them all.

import type BetterSqlite3 from 'better-sqlite3';

export type SubjectKind = 'User' | 'Group';

export interface SubjectRecord {
  id: string;
  kind: SubjectKind;
  /** Users: username, givenName, familyName, subjectInfo, groups; groups: name. */
  info: Record<string, unknown>;
  updatedAt: number;
}

export interface SubjectRepository {
  /** Inserts or replaces the subject; true when something changed. */
  put(subject: SubjectRecord): boolean;
  get(id: string): SubjectRecord | undefined;
  /** Subjects of a kind, ordered by id. */
  list(kind: SubjectKind): SubjectRecord[];
  delete(id: string): boolean;
}

interface SubjectRow {
  id: string;
  kind: SubjectKind;
  info: string;
  updated_at: number;
}

const toRecord = (r: SubjectRow): SubjectRecord => ({ id: r.id, kind: r.kind, info: JSON.parse(r.info) as Record<string, unknown>, updatedAt: r.updated_at });

export function createSubjectRepository(db: BetterSqlite3.Database): SubjectRepository {
  // NOTE: a token seen again with the same claims changes nothing and writes nothing.
  const put = db.prepare<[string, string, string, number]>(
    `INSERT INTO subjects (id, kind, info, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, info = excluded.info, updated_at = excluded.updated_at
     WHERE subjects.kind IS NOT excluded.kind OR subjects.info IS NOT excluded.info`,
  );
  const byId = db.prepare<[string], SubjectRow>('SELECT id, kind, info, updated_at FROM subjects WHERE id = ?');
  const ofKind = db.prepare<[string], SubjectRow>('SELECT id, kind, info, updated_at FROM subjects WHERE kind = ? ORDER BY id');
  const remove = db.prepare<[string]>('DELETE FROM subjects WHERE id = ?');
  return {
    put: (s) => put.run(s.id, s.kind, JSON.stringify(s.info), s.updatedAt).changes > 0,
    get(id) {
      const row = byId.get(id);
      return row && toRecord(row);
    },
    list: (kind) => ofKind.all(kind).map(toRecord),
    delete: (id) => remove.run(id).changes > 0,
  };
}
