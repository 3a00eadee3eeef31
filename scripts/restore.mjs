#!/usr/bin/env node
// Restores an edgeld database from a backup made by scripts/backup.mjs: checks the backup's integrity,
// refuses a database a broker is using, and replaces the database (and its stale WAL) in one rename.
//
// Usage: node scripts/restore.mjs <backup.db> <dest.db> [--force]
// On a gateway: sudo systemctl stop edgeld
//               sudo -u edgeld node /opt/edgeld/scripts/restore.mjs /var/backups/edgeld.db /var/lib/edgeld/edgeld.db --force
//               sudo systemctl start edgeld

import Database from 'better-sqlite3';
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const USAGE = 'usage: node scripts/restore.mjs <backup.db> <dest.db> [--force]';
/** Exit codes: 1 failure, 2 usage, 3 the destination is in use by a running broker. */
const EXIT_IN_USE = 3;

function fail(message, code = 1) {
  process.stderr.write(`restore: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const force = argv.includes('--force');
  const paths = argv.filter((a) => a !== '--force');
  if (paths.length !== 2 || paths.some((p) => p.startsWith('-'))) fail(USAGE, 2);
  return { backup: resolve(paths[0]), dest: resolve(paths[1]), force };
}

const message = (err) => (err instanceof Error ? err.message : String(err));

/**
 * Takes the lock a running broker holds on `<dest>.lock` (src/store/lock.ts), so no broker starts on
 * the database while it is replaced; fails with exit 3 when a broker holds it now.
 */
function lockDatabase(dest) {
  const lock = new Database(`${dest}.lock`, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if (String(err?.code ?? '').startsWith('SQLITE_BUSY')) {
      fail(`${dest} is in use by a running broker; stop it first (systemctl stop edgeld)`, EXIT_IN_USE);
    }
    throw err;
  }
  return () => {
    lock.exec('ROLLBACK');
    lock.close();
  };
}

/** PRAGMA integrity_check of a database file, read-only; throws with SQLite's findings. */
function checkIntegrity(path) {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check(20)', { simple: false }).map((r) => String(Object.values(r)[0]));
    if (rows.length !== 1 || rows[0] !== 'ok') throw new Error(rows.join('; '));
    const entities = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'entities'").get();
    if (db.pragma('user_version', { simple: true }) < 1 || entities.n !== 1) throw new Error('not an edgeld database');
  } finally {
    db.close();
  }
}

function fsyncPath(path) {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function main() {
  const { backup, dest, force } = parseArgs(process.argv.slice(2));
  if (!existsSync(backup)) fail(`backup ${backup} does not exist`);
  if (backup === dest) fail('backup and destination are the same file', 2);
  try {
    checkIntegrity(backup);
  } catch (err) {
    fail(`the backup failed its integrity check, nothing restored: ${message(err)}`);
  }
  if (!existsSync(dirname(dest))) fail(`directory ${dirname(dest)} does not exist`);
  const unlock = lockDatabase(dest);
  const partial = `${dest}.restoring`;
  try {
    if (existsSync(dest) && !force) fail(`${dest} exists; pass --force to replace it`);
    copyFileSync(backup, partial);
    fsyncPath(partial);
    checkIntegrity(partial);
    // NOTE: the old database's WAL and shared-memory files must go with it: SQLite would replay a
    // stale WAL onto the restored file at the next open.
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(dest + suffix, { force: true });
    renameSync(partial, dest);
    fsyncPath(dirname(dest));
  } catch (err) {
    rmSync(partial, { force: true });
    fail(`restore failed: ${message(err)}`);
  } finally {
    unlock();
  }
  process.stdout.write(`restore: ${backup} → ${dest} (${statSync(dest).size} bytes)\n`);
}

main();
