// Modes of what the store keeps on disk, whatever the process umask: the directory it creates is
// 0700, the database and its companion files 0600. The database holds the identity provider's private
// signing key, password hashes and device secrets: readable by another account, it mints admin tokens.
//
// NOTE: set by the code, file by file, rather than by a process umask: the store is secure however
// it is started (node dist/main.js, a test, a tool), and the umask stays the operator's for anything
// else. SQLite creates the -wal and -shm files with the mode of the database file, so making that file
// 0600 before SQLite opens it covers them.

import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import type { Logger } from '../lib/index.js';

const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
/** Group and other permission bits. */
const SHARED_BITS = 0o077;
/** Files next to the database that SQLite makes and that hold its pages. */
const COMPANIONS = ['-wal', '-shm', '-journal'];

/** A store file that is readable by others and cannot be made private (not ours: chmod refused). */
export class StoreFileModeError extends Error {
  override name = 'StoreFileModeError';
}

function codeOf(err: unknown): string {
  return err instanceof Error && 'code' in err ? String(err.code) : '';
}

/** Creates the directory (and missing parents) as 0700; an existing one is left as the operator made it. */
export function makePrivateDir(dir: string): void {
  const created = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // NOTE: mkdir's mode is masked by the umask; chmod is not.
  if (created !== undefined) chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Takes group and other bits off an existing file, with a warning; false when there is no such file. */
function tighten(path: string, log: Logger): boolean {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return false;
    throw err;
  }
  if ((mode & SHARED_BITS) === 0) return true;
  const next = mode & ~SHARED_BITS;
  try {
    chmodSync(path, next);
  } catch (err) {
    throw new StoreFileModeError(
      `${path} is readable by other users (mode 0${mode.toString(8)}) and cannot be made private: as its owner, run chmod 600 ${path}`,
      { cause: err },
    );
  }
  log.warn('a store file was readable by other users: made private', { file: path, was: `0${mode.toString(8)}`, now: `0${next.toString(8)}` });
  return true;
}

/**
 * Makes `path` a private file before SQLite opens it: created empty as 0600 when missing (SQLite takes
 * an empty file for a new database), an existing one tightened with a warning. Its companion files
 * that already exist are tightened too; those made later inherit the database's mode.
 */
export function makePrivateDatabaseFile(path: string, log: Logger): void {
  if (!tighten(path, log)) {
    try {
      closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE));
      // NOTE: an umask with owner bits (0277) would leave it unreadable to us; chmod is not masked.
      chmodSync(path, PRIVATE_FILE_MODE);
    } catch (err) {
      // Another process made it in between: tighten what it made.
      if (codeOf(err) !== 'EEXIST') throw err;
      tighten(path, log);
    }
  }
  for (const suffix of COMPANIONS) tighten(path + suffix, log);
}
