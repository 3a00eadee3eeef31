// How the last run ended: a marker file next to the database (`<db>.running`, 0600) is written once
// the database is ours and removed on a clean stop. Found at the next start, the last stop was
// unclean (kill -9, power cut, crash), and the recovery is reported: what SQLite replayed of the
// WAL, and what the journal readers, the notification queue and the federation drain resume with.

import Database from 'better-sqlite3';
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** What the marker of an unfinished run says. */
export interface UncleanStop {
  /** The process id and start time of the run that did not stop cleanly (undefined when unreadable). */
  pid: number | undefined;
  startedAt: string | undefined;
  /** Bytes in the write-ahead log before the database was opened: SQLite replays them on open. */
  walBytes: number;
}

/** What the recovery after an unclean stop resumes with, read once the database is open. */
export interface Recovery {
  /** Each journal reader's cursor and the changes after it that it will handle. */
  readers: Array<{ reader: string; cursor: number; pending: number }>;
  /** Notifications waiting in the durable queue. */
  notificationsQueued: number;
  /** Changes the upstream broker refused, kept for an operator. */
  federationParked: number;
}

export interface RunState {
  /** The run found unfinished when this one started; undefined when the last stop was clean (or first start). */
  readonly unclean: UncleanStop | undefined;
  /** Writes this run's marker (once the database lock is held), durably. */
  begin(now: number): void;
  /** Removes the marker: this run has stopped cleanly. */
  end(): void;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Makes a file's creation or removal durable: a power cut must not undo it. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readMarker(path: string): { pid: number | undefined; startedAt: string | undefined } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    const o = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {}; // NOTE: checked member by member below
    return { pid: typeof o['pid'] === 'number' ? o['pid'] : undefined, startedAt: typeof o['startedAt'] === 'string' ? o['startedAt'] : undefined };
  } catch {
    // A power cut while the marker was written leaves it torn: the run still did not end cleanly.
    return { pid: undefined, startedAt: undefined };
  }
}

/**
 * Reads how the last run of the database at `dbPath` ended. Call it before the database is opened
 * (opening replays the WAL, whose size is part of the report).
 */
export function readRunState(dbPath: string): RunState {
  const markerPath = `${dbPath}.running`;
  const marker = readMarker(markerPath);
  const unclean: UncleanStop | undefined = marker && { ...marker, walBytes: fileSize(`${dbPath}-wal`) };
  return {
    unclean,
    begin(now) {
      const fd = openSync(markerPath, 'w', 0o600);
      try {
        // NOTE: the mode of open() applies only to a new file; a marker left by an older run keeps its own.
        fchmodSync(fd, 0o600);
        writeSync(fd, JSON.stringify({ pid: process.pid, startedAt: new Date(now).toISOString() }) + '\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      syncDir(dirname(markerPath));
    },
    end() {
      try {
        unlinkSync(markerPath);
      } catch (err) {
        if (!(err instanceof Error && 'code' in err && err.code === 'ENOENT')) throw err;
      }
      syncDir(dirname(markerPath));
    },
  };
}

/** What the readers of the database at `dbPath` resume with; read on a connection of its own, read-only. */
export function readRecovery(dbPath: string): Recovery {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const cursors = db.prepare<[], { reader: string; seq: number }>('SELECT reader, seq FROM journal_cursors ORDER BY reader LIMIT 100').all();
    const pendingAfter = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM journal WHERE seq > ?');
    const count = (table: 'notification_queue' | 'federation_parked'): number =>
      db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
    return {
      readers: cursors.map(({ reader, seq }) => ({ reader, cursor: seq, pending: pendingAfter.get(seq)?.n ?? 0 })),
      notificationsQueued: count('notification_queue'),
      federationParked: count('federation_parked'),
    };
  } finally {
    db.close();
  }
}

const counted = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The recovery in one sentence, for the log line of an unclean stop. */
export function describeRecovery(unclean: UncleanStop, recovery: Recovery): string {
  const wal = unclean.walBytes > 0
    ? `SQLite replayed the write-ahead log (${unclean.walBytes} bytes) on open`
    : 'the write-ahead log was empty: nothing to replay';
  const readers = recovery.readers.length === 0
    ? 'no journal reader'
    : `journal readers resume from their cursors: ${recovery.readers.map((r) => `${r.reader} with ${counted(r.pending, 'change', 'changes')} pending`).join(', ')}`;
  return `${wal}; ${readers}; ${counted(recovery.notificationsQueued, 'notification', 'notifications')} queued; `
    + `${counted(recovery.federationParked, 'federation change', 'federation changes')} parked`;
}
