#!/usr/bin/env node
// Online backup of the edgeld SQLite database while the broker keeps running, through SQLite's
// backup API (better-sqlite3 `db.backup()`); the copy is checked and left as one self-contained file.
//
// Usage: node scripts/backup.mjs <source.db> <dest.db> [--force]   (restore: scripts/restore.mjs)
// On a gateway: sudo -u edgeld node /opt/edgeld/scripts/backup.mjs /var/lib/edgeld/edgeld.db /var/backups/edgeld.db

import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

const USAGE = 'usage: node scripts/backup.mjs <source.db> <dest.db> [--force]';

function fail(message) {
  process.stderr.write(`backup: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const force = argv.includes('--force');
  const paths = argv.filter((a) => a !== '--force');
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (paths.length !== 2 || paths.some((p) => p.startsWith('-'))) fail(USAGE);
  return { source: resolve(paths[0]), dest: resolve(paths[1]), force };
}

function removeCopy(path) {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/**
 * The page count of each backup step. Not on a terminal: all remaining pages in one step. A write by
 * another connection between steps restarts the copy, so small steps might never finish under a busy
 * broker; one step reads a single WAL snapshot and does not block the broker's writers. On a
 * terminal: steps of about 1 % with a progress line, until a write restarts the copy; the rest then
 * goes in one step too.
 */
function progressReporter(out) {
  const ALL = 0x7fffffff;
  if (!out.isTTY) return () => ALL;
  let last = Infinity;
  let restarted = false;
  return ({ totalPages, remainingPages }) => {
    const done = totalPages - remainingPages;
    out.write(`\rbackup: ${totalPages === 0 ? 100 : Math.floor((done * 100) / totalPages)} % (${done} of ${totalPages} pages)${restarted ? ', finishing in one step' : ''}\x1b[K`);
    if (remainingPages > last) restarted = true;
    last = remainingPages;
    return restarted ? ALL : Math.max(64, Math.ceil(totalPages / 100));
  };
}

async function main() {
  const { source, dest, force } = parseArgs(process.argv.slice(2));
  if (!existsSync(source)) fail(`source ${source} does not exist`);
  if (source === dest) fail('source and destination are the same file');
  if (existsSync(dest) && !force) fail(`destination ${dest} exists; pass --force to replace it`);

  // NOTE: a read-write connection, because reading a WAL database may need to create its -shm file;
  // the backup itself only reads.
  const db = new Database(source, { fileMustExist: true, timeout: 5000 });
  const partial = `${dest}.partial`;
  removeCopy(partial);
  // NOTE: the copy holds what the database holds (the identity provider's private signing key among
  // it): made 0600 before SQLite writes into it, whatever the umask.
  closeSync(openSync(partial, 'wx', 0o600));
  chmodSync(partial, 0o600);
  const started = Date.now();
  try {
    await db.backup(partial, { progress: progressReporter(process.stderr) });
    if (process.stderr.isTTY) process.stderr.write('\rbackup: 100 %, checking the copy\x1b[K\n');
  } catch (err) {
    removeCopy(partial);
    fail(`backup failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    db.close();
  }

  const copy = new Database(partial, { fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`quick_check: ${String(check)}`);
    // A backup is easier to move around as one file than as a WAL database with side files.
    copy.pragma('journal_mode = DELETE');
  } catch (err) {
    copy.close();
    removeCopy(partial);
    fail(`the copy failed its check: ${err instanceof Error ? err.message : String(err)}`);
  }
  copy.close();

  if (force) removeCopy(dest);
  renameSync(partial, dest);
  const size = statSync(dest).size;
  process.stdout.write(`backup: ${source} → ${dest} (${size} bytes, ${Date.now() - started} ms)\n`);
}

await main();
