// One broker per database: an exclusive SQLite lock on `<db>.lock`, held for the process lifetime.
// It is a POSIX advisory lock, so the kernel releases it when the process ends, kill -9 included:
// a stale lock can never keep the next start out.

import Database from 'better-sqlite3';

/** Another process holds the database of this path. */
export class StoreLockedError extends Error {
  override name = 'StoreLockedError';
}

export interface StoreLock {
  release(): void;
}

/** Takes the lock of the database at `path`, or throws StoreLockedError at once. */
export function lockStore(path: string): StoreLock {
  const lockPath = `${path}.lock`;
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    const busy = err instanceof Error && 'code' in err && String(err.code).startsWith('SQLITE_BUSY');
    if (busy) throw new StoreLockedError(`another process is using ${path} (it holds ${lockPath})`, { cause: err });
    throw err;
  }
  return {
    release: () => {
      if (!db.open) return;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
