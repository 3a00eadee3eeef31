// The disk bytes of one attribute update (PATCH …/attrs/temperature), reproduced on a file database
// with better-sqlite3 and measured from /proc/self/io write_bytes (WAL appends and checkpoints), for
// the storage layouts and settings the Disk bytes section of docs/performance.md compares (Linux only).
//
//   node scripts/disk-bytes.mjs [key=value ...]
//
// keys (defaults in brackets):
//   page=4096        page size of the new database
//   n=60000          entities urn:ngsi-ld:Sensor:<k>, type Sensor, numeric Property temperature
//   batch=12         updates per acknowledging commit (the broker's group commit)
//   walmb=4          WAL size (MiB) past which a PASSIVE checkpoint runs on a second connection
//                    (journal_size_limit is set to the same value, as in src/store/open.ts)
//   hist=rowid       history bucket: rowid  = rowid table + (series,t) index (+ partial deleted index), as the broker
//                                    wor    = WITHOUT ROWID, PRIMARY KEY (series, t, instance_id)
//                                    hour   = rowid table + index (t/3600000, series, t)  (time-leading)
//                                    noidx  = rowid table, no (series,t) index (lower bound: reads scan)
//   av=base          query values:   base   = attr_values WITHOUT ROWID PK (entity,attr,inst,seq) + (attr,typ,num) index, as the broker
//                                    valkey = WITHOUT ROWID table keyed (attr,typ,num,entity,inst,seq): the value only in "the index"
//                                    noidx  = PK table only, no (attr,typ,num) index
//                                    none   = no attr_values at all (q from the JSON documents)
//   doc=full         entity document: full (as the broker, ~232 B) | compact (IRIs as ids, ~60 B)
//   defer=0          deferred materialization: 0 = off; K = apply pending changes every K updates
//                    (K = rate x interval, e.g. 250 ms / 1 s at 1,000-2,500 updates/s)
//   defermode=all    all = the acknowledging commit writes only the journal (with the new value);
//                    idx = it writes journal + entity row; attr_values and history are applied later
//   warm=6000        updates before measuring (not counted)
//   updates=36000    measured updates (the measured phase ends with a final checkpoint, counted)
//   agehist=0        extra history rows per series loaded first (the history of a long-running broker)
//   cold=0           1: copy a cached populated file and drop its page cache (see below)
//   breakdown=0      1: WAL frames per commit by B-tree (dbstat) from the last WAL cycle
//   keep=0           1: keep the run's database file
// Prints one JSON line.

import Database from 'better-sqlite3';
import { readFileSync, statSync, rmSync, existsSync, copyFileSync, openSync, fsyncSync, closeSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const arg = Object.fromEntries(process.argv.slice(2).map((a) => a.split('=')));
const num = (k, d) => (arg[k] === undefined ? d : Number(arg[k]));
const str = (k, d) => arg[k] ?? d;
const O = {
  page: num('page', 4096), n: num('n', 60000), batch: num('batch', 12), walmb: num('walmb', 4),
  hist: str('hist', 'rowid'), av: str('av', 'base'), doc: str('doc', 'full'), defer: num('defer', 0),
  defermode: str('defermode', 'all'), warm: num('warm', 6000), updates: num('updates', 36000),
  agehist: num('agehist', 0), cold: num('cold', 0), breakdown: num('breakdown', 0), keep: num('keep', 0), seed: num('seed', 1),
};
const WAL_LIMIT = O.walmb * 1024 * 1024;
const DIR = join(tmpdir(), 'edgeld-disk-bytes');

// Deterministic PRNG (mulberry32): runs of different layouts update the same entity sequence.
let s = O.seed >>> 0;
const rnd = () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };

const writeBytes = () => Number(/write_bytes:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);
const fileSize = (p) => { try { return statSync(p).size; } catch { return 0; } };

const TYPE_IRI = 'https://uri.etsi.org/ngsi-ld/default-context/Sensor';
const ATTR_IRI = 'https://uri.etsi.org/ngsi-ld/default-context/temperature';
const TYPE_ID = 1, ATTR_ID = 2;
const BUCKET = 'history_202611';

const newInstanceId = (now) => {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (b[6] & 0x0f);
  return b;
};
const instanceUrn = (b) => { const h = b.toString('hex'); return `urn:ngsi-ld:Instance:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`; };

// ---- documents and journal payloads, as entity-doc.ts / journal.ts write them ----
const docOf = (c, m, v) => (O.doc === 'compact'
  ? `{"t":[${TYPE_ID}],"a":{"${ATTR_ID}":[{"c":${c},"m":${m},"v":${v}}]}}`
  : JSON.stringify({ types: [TYPE_IRI], attrs: { [ATTR_IRI]: [{ createdAt: c, modifiedAt: m, sub: {}, kind: 'Property', value: v }] } }));
const createPayload = (inst) => JSON.stringify({ n: [ATTR_IRI], w: [0], d: [], i: [[0, instanceUrn(inst)]] });
// An update: the touched attribute before the change (`p`), as encodePayload writes it. Deferred, the row
// must also carry the new instance (`v`), to be applied later or replayed after a crash.
const updatePayload = (inst, ent, v, now) => {
  const p = { n: [ATTR_IRI], w: [0], d: [], i: [[0, instanceUrn(inst)]],
    p: { t: [TYPE_IRI], a: [[0, [{ createdAt: ent.c, modifiedAt: ent.m, sub: {}, kind: 'Property', value: ent.v }]]], c: ent.c, m: ent.m } };
  if (O.defer > 0) p.v = [[0, { value: v, createdAt: ent.c, modifiedAt: now }]];
  return JSON.stringify(p);
};

// ---- schema (the tables an update touches, plus those a create writes, for a realistic file layout) ----
function schema(db) {
  db.exec(`
    CREATE TABLE iris (id INTEGER PRIMARY KEY, iri TEXT NOT NULL UNIQUE);
    CREATE TABLE entities (rowid INTEGER PRIMARY KEY, tenant TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL,
      created_at INTEGER NOT NULL, modified_at INTEGER NOT NULL, deleted_at INTEGER, owner TEXT, owned_at INTEGER);
    CREATE INDEX entities_tenant_id ON entities (tenant, id);
    CREATE INDEX entities_owner ON entities (owner, tenant) WHERE owner IS NOT NULL;
    CREATE TABLE entity_types (entity INTEGER NOT NULL, iri INTEGER NOT NULL, PRIMARY KEY (iri, entity)) WITHOUT ROWID;
    CREATE TABLE entity_attr_kinds (entity INTEGER NOT NULL, attr INTEGER NOT NULL, kind INTEGER NOT NULL,
      instances INTEGER NOT NULL, PRIMARY KEY (entity, attr, kind)) WITHOUT ROWID;
    CREATE TABLE series (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, entity_id TEXT NOT NULL, attr INTEGER NOT NULL, dataset_id TEXT);
    CREATE UNIQUE INDEX series_key ON series (tenant, entity_id, attr, ifnull(dataset_id, ''));
    CREATE TABLE journal (seq INTEGER PRIMARY KEY, tenant TEXT NOT NULL, kind INTEGER NOT NULL, entity_id TEXT NOT NULL,
      at INTEGER NOT NULL, subject TEXT, payload TEXT NOT NULL);
    CREATE TABLE applied (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
    INSERT INTO applied VALUES (1, 0);
    INSERT INTO iris (id, iri) VALUES (${TYPE_ID}, '${TYPE_IRI}'), (${ATTR_ID}, '${ATTR_IRI}');
  `);
  if (O.av === 'base' || O.av === 'noidx') {
    db.exec(`CREATE TABLE attr_values (entity INTEGER NOT NULL, attr INTEGER NOT NULL, inst INTEGER NOT NULL, seq INTEGER NOT NULL,
      typ INTEGER NOT NULL, num REAL, str TEXT, PRIMARY KEY (entity, attr, inst, seq)) WITHOUT ROWID;
      CREATE INDEX attr_values_str ON attr_values (attr, str, typ) WHERE str IS NOT NULL;`);
    if (O.av === 'base') db.exec('CREATE INDEX attr_values_num ON attr_values (attr, typ, num);');
  } else if (O.av === 'valkey') {
    db.exec(`CREATE TABLE attr_values (attr INTEGER NOT NULL, typ INTEGER NOT NULL, num REAL NOT NULL, entity INTEGER NOT NULL,
      inst INTEGER NOT NULL, seq INTEGER NOT NULL, str TEXT, PRIMARY KEY (attr, typ, num, entity, inst, seq)) WITHOUT ROWID;`);
  } else if (O.av !== 'none') throw new Error(`av=${O.av}?`);
  const cols = `series INTEGER NOT NULL, t INTEGER NOT NULL, observed_at INTEGER, created_at INTEGER NOT NULL, modified_at INTEGER NOT NULL,
    deleted_at INTEGER, instance_id BLOB NOT NULL, value TEXT, num REAL, sub TEXT`;
  const deletedIdx = `CREATE INDEX ${BUCKET}_series_deleted ON ${BUCKET} (series, deleted_at) WHERE deleted_at IS NOT NULL;`;
  if (O.hist === 'rowid') db.exec(`CREATE TABLE ${BUCKET} (${cols}); CREATE INDEX ${BUCKET}_series_t ON ${BUCKET} (series, t); ${deletedIdx}`);
  else if (O.hist === 'wor') db.exec(`CREATE TABLE ${BUCKET} (${cols}, PRIMARY KEY (series, t, instance_id)) WITHOUT ROWID; ${deletedIdx}`);
  else if (O.hist === 'hour') db.exec(`CREATE TABLE ${BUCKET} (${cols}); CREATE INDEX ${BUCKET}_hour_series_t ON ${BUCKET} (t / 3600000, series, t); ${deletedIdx}`);
  else if (O.hist === 'noidx') db.exec(`CREATE TABLE ${BUCKET} (${cols}); ${deletedIdx}`);
  else throw new Error(`hist=${O.hist}?`);
  db.exec(`CREATE TABLE history_buckets (name TEXT PRIMARY KEY, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO history_buckets VALUES ('${BUCKET}', 0, 0);`);
}

function pragmas(db) {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = OFF');
  db.pragma('cache_size = -4096');
  db.pragma('temp_store = MEMORY');
  db.pragma(`journal_size_limit = ${WAL_LIMIT}`);
  db.pragma('wal_autocheckpoint = 0');
}

function statements(db) {
  const S = {
    live: db.prepare('SELECT rowid, doc, created_at, modified_at FROM entities WHERE tenant = ? AND id = ? AND deleted_at IS NULL'),
    insEntity: db.prepare('INSERT INTO entities (tenant, id, doc, created_at, modified_at, deleted_at) VALUES (?, ?, ?, ?, ?, NULL)'),
    updEntity: db.prepare('UPDATE entities SET doc = ?, created_at = ?, modified_at = ? WHERE rowid = ?'),
    insType: db.prepare('INSERT INTO entity_types (entity, iri) VALUES (?, ?)'),
    insKind: db.prepare('INSERT INTO entity_attr_kinds (entity, attr, kind, instances) VALUES (?, ?, 1, 1)'),
    insSeries: db.prepare('INSERT INTO series (tenant, entity_id, attr, dataset_id) VALUES (?, ?, ?, NULL) ON CONFLICT DO NOTHING'),
    insHist: db.prepare(`INSERT INTO ${BUCKET} (series, t, observed_at, created_at, modified_at, deleted_at, instance_id, value, num, sub)
      VALUES (?, ?, NULL, ?, ?, NULL, ?, NULL, ?, NULL)`),
    insJournal: db.prepare('INSERT INTO journal (tenant, kind, entity_id, at, subject, payload) VALUES (?, ?, ?, ?, NULL, ?)'),
    setApplied: db.prepare('UPDATE applied SET seq = ? WHERE id = 1'),
  };
  if (O.av === 'base' || O.av === 'noidx') {
    S.insAv = db.prepare('INSERT INTO attr_values (entity, attr, inst, seq, typ, num, str) VALUES (?, ?, 0, 0, 1, ?, NULL)');
    // As query-values.ts: only num in SET, so the string index is not rewritten.
    const upd = db.prepare('UPDATE attr_values SET num = ? WHERE entity = ? AND attr = ? AND inst = 0 AND seq = 0');
    S.setAv = (rowid, _old, v) => upd.run(v, rowid, ATTR_ID);
  } else if (O.av === 'valkey') {
    S.insAv = db.prepare('INSERT INTO attr_values (entity, attr, inst, seq, typ, num, str) VALUES (?, ?, 0, 0, 1, ?, NULL)');
    // The old value is known from the previous state (the write core diffs in memory): delete its key, insert the new one.
    const del = db.prepare('DELETE FROM attr_values WHERE attr = ? AND typ = 1 AND num = ? AND entity = ? AND inst = 0 AND seq = 0');
    S.setAv = (rowid, old, v) => { if (old !== v) { del.run(ATTR_ID, old, rowid); S.insAv.run(rowid, ATTR_ID, v); } };
  } else {
    S.insAv = { run() {} };
    S.setAv = () => {};
  }
  return S;
}

// ---- populate ----
function populate(path) {
  for (const x of ['', '-wal', '-shm']) rmSync(path + x, { force: true });
  const db = new Database(path);
  db.pragma(`page_size = ${O.page}`);
  pragmas(db);
  db.pragma('wal_autocheckpoint = 1000');
  schema(db);
  const S = statements(db);
  let now = Date.now() - 3_600_000;
  // Creates as the broker writes them (entity row, type, kinds, values, series, history, journal),
  // interleaved per entity so that the B-trees' pages are allocated as the broker allocates them.
  const tx = db.transaction((from, to) => {
    for (let k = from; k < to; k++) {
      const id = `urn:ngsi-ld:Sensor:${k}`;
      now += 1;
      S.live.get('', id);
      const rowid = Number(S.insEntity.run('', id, docOf(now, now, 21.5), now, now).lastInsertRowid);
      S.insType.run(rowid, TYPE_ID);
      S.insKind.run(rowid, ATTR_ID);
      S.insAv.run(rowid, ATTR_ID, 21.5);
      const series = Number(S.insSeries.run('', id, ATTR_ID).lastInsertRowid);
      const inst = newInstanceId(now);
      S.insHist.run(series, now, now, now, inst, 21.5);
      S.insJournal.run('', 0, id, now, createPayload(inst));
    }
  });
  for (let k = 0; k < O.n; k += 16) tx(k, Math.min(O.n, k + 16));
  if (O.agehist > 0) {
    // Older readings: every series once a "minute", in time order, as a running broker writes them.
    const rows = db.transaction((round) => {
      const t0 = Date.now() - 3_000_000 + round * 60_000;
      for (let k = 0; k < O.n; k++) S.insHist.run(k + 1, t0 + k, t0 - 3_600_000, t0 + k, newInstanceId(t0), Math.round(rnd() * 4000) / 100);
    });
    for (let r = 0; r < O.agehist; r++) rows(r);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

const layoutKey = () => `p${O.page}-n${O.n}-h${O.hist}-a${O.av}-d${O.doc}-g${O.agehist}`;

// ---- run ----
// NOTE: by default the database is populated in this process, so that its pages sit in the page
// cache as the broker's do (written page by page: small folios). cold=1 copies a cached populated
// file and drops its page cache instead: pages then come back through readahead in large folios
// (ext4 on kernel >= 6.16), and write_bytes counts the whole folio a checkpoint dirties.
mkdirSync(DIR, { recursive: true });
const path = `${DIR}/run-${process.pid}.db`;
for (const x of ['', '-wal', '-shm']) rmSync(path + x, { force: true });
const tPop = Date.now();
if (O.cold) {
  const base = `${DIR}/base-${layoutKey()}.db`;
  if (!existsSync(base)) populate(base);
  copyFileSync(base, path);
  const fd = openSync(path, 'r+'); fsyncSync(fd); closeSync(fd);
  execFileSync('dd', [`if=${path}`, 'iflag=nocache', 'count=0', 'status=none']);
} else populate(path);
const popMs = Date.now() - tPop;

const db = new Database(path);
pragmas(db);
const ck = new Database(path); // the checkpointer's connection (a worker thread's in the broker)
ck.pragma('busy_timeout = 5000');
const S = statements(db);
const begin = db.prepare('BEGIN IMMEDIATE'), commit = db.prepare('COMMIT');
const passive = ck.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let journalSeq = 0;

const seriesOf = (k) => k + 1; // series ids were given in creation order (the broker caches them)
const overlay = new Map(); // deferred: entity k -> latest state not yet applied
let pending = []; // deferred: changes not yet applied, in order

const stats = { commits: 0, applies: 0, ckpts: 0, ckptBytes: 0, frames: 0, applyBytes: 0, applyMs: 0, applyMaxMs: 0 };
const checkpointIfNeeded = () => {
  if (fileSize(path + '-wal') <= WAL_LIMIT) return;
  const b0 = writeBytes();
  const r = passive.get();
  stats.ckptBytes += writeBytes() - b0;
  stats.ckpts += 1;
  stats.frames += r.log;
};

/** The live state of entity k (`previous`), as the broker reads it before writing. */
function readLive(k) {
  const o = overlay.get(k);
  if (o !== undefined) return o;
  const row = S.live.get('', `urn:ngsi-ld:Sensor:${k}`);
  if (O.doc === 'compact') {
    const d = JSON.parse(row.doc).a[ATTR_ID][0];
    return { rowid: row.rowid, c: d.c, m: d.m, v: d.v };
  }
  const a = JSON.parse(row.doc).attrs[ATTR_IRI][0];
  return { rowid: row.rowid, c: a.createdAt, m: a.modifiedAt, v: a.value };
}

function applyPending() {
  if (pending.length === 0) return;
  const a0 = writeBytes(), h0 = process.hrtime.bigint();
  begin.run();
  // Coalesced: one entity row and one value row per entity; every history row.
  const last = new Map();
  const oldest = new Map();
  for (const ch of pending) { last.set(ch.k, ch); if (!oldest.has(ch.k)) oldest.set(ch.k, ch.old); }
  if (O.defermode === 'all') for (const ch of last.values()) S.updEntity.run(docOf(ch.c, ch.now, ch.v), ch.c, ch.now, ch.rowid);
  for (const ch of last.values()) S.setAv(ch.rowid, oldest.get(ch.k), ch.v);
  for (const ch of pending) S.insHist.run(seriesOf(ch.k), ch.now, ch.c, ch.now, ch.inst, ch.v);
  S.setApplied.run(pending[pending.length - 1].seq);
  commit.run();
  const ms = Number(process.hrtime.bigint() - h0) / 1e6;
  stats.applyBytes += writeBytes() - a0; stats.applyMs += ms; stats.applyMaxMs = Math.max(stats.applyMaxMs, ms);
  stats.applies += 1;
  pending = [];
  overlay.clear();
  checkpointIfNeeded();
}

function commitBatch(count) {
  begin.run();
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const k = Math.floor(rnd() * O.n);
    const ent = readLive(k);
    const v = Math.round(rnd() * 4000) / 100;
    const inst = newInstanceId(now);
    const ch = { k, rowid: ent.rowid, c: ent.c, now, v, old: ent.v, inst };
    // The write core's order: entity row, value index, history; the journal row last.
    if (O.defer === 0) {
      S.updEntity.run(docOf(ch.c, now, v), ch.c, now, ch.rowid);
      S.setAv(ch.rowid, ch.old, v);
      S.insHist.run(seriesOf(k), now, ch.c, now, inst, v);
    } else if (O.defermode === 'idx') S.updEntity.run(docOf(ch.c, now, v), ch.c, now, ch.rowid);
    journalSeq = Number(S.insJournal.run('', 1, `urn:ngsi-ld:Sensor:${k}`, now, updatePayload(inst, ent, v, now)).lastInsertRowid);
    if (O.defer > 0) {
      ch.seq = journalSeq;
      pending.push(ch);
      overlay.set(k, { rowid: ent.rowid, c: ent.c, m: now, v });
    }
  }
  commit.run();
  stats.commits += 1;
  checkpointIfNeeded();
  if (O.defer > 0 && pending.length >= O.defer) applyPending();
}

function run(updates) {
  for (let done = 0; done < updates;) {
    const c = Math.min(O.batch, updates - done);
    commitBatch(c);
    done += c;
  }
}

// Warm-up, then the measured phase starts right after a checkpoint (the WAL restarts with the next write).
run(O.warm);
applyPending();
passive.get();
Object.assign(stats, { commits: 0, applies: 0, ckpts: 0, ckptBytes: 0, frames: 0, applyBytes: 0, applyMs: 0, applyMaxMs: 0 });
const b0 = writeBytes();
const t0 = process.hrtime.bigint();
run(O.updates);
applyPending();
const t1 = process.hrtime.bigint();

let breakdown;
if (O.breakdown) {
  const wal = readFileSync(path + '-wal');
  const ps = wal.readUInt32BE(8), s1 = wal.readUInt32BE(16), s2 = wal.readUInt32BE(20);
  const pages = []; let commits = 0;
  for (let off = 32; off + 24 + ps <= wal.length; off += 24 + ps) {
    if (wal.readUInt32BE(off + 8) !== s1 || wal.readUInt32BE(off + 12) !== s2) break;
    pages.push(wal.readUInt32BE(off)); if (wal.readUInt32BE(off + 4) !== 0) commits++;
  }
  const owner = new Map(ck.prepare('SELECT name, pageno FROM dbstat').all().map((r) => [r.pageno, r.name]));
  const by = new Map(); for (const p of pages) { const nm = owner.get(p) ?? '?'; by.set(nm, (by.get(nm) ?? 0) + 1); }
  breakdown = { walCommits: commits, framesPerCommit: +(pages.length / commits).toFixed(1),
    perCommit: Object.fromEntries([...by].sort((a, b) => b[1] - a[1]).map(([nm, c]) => [nm, +(c / commits).toFixed(2)])) };
}
// Final checkpoint: what the measured writes cost the database file, counted.
{ const c0 = writeBytes(); const r = passive.get(); stats.ckptBytes += writeBytes() - c0; stats.frames += r.log; stats.ckpts += 1; }
const total = writeBytes() - b0;
const secs = Number(t1 - t0) / 1e9;
const out = {
  cfg: `page=${O.page} hist=${O.hist} av=${O.av} doc=${O.doc} walmb=${O.walmb} batch=${O.batch} defer=${O.defer}${O.defer ? `/${O.defermode}` : ''}${O.agehist ? ` agehist=${O.agehist}` : ''}${O.cold ? ' cold' : ''}`,
  bytesPerUpd: Math.round(total / O.updates),
  walPerUpd: Math.round((total - stats.ckptBytes) / O.updates),
  ckptPerUpd: Math.round(stats.ckptBytes / O.updates),
  framesPerCommit: +(stats.frames / (stats.commits + stats.applies)).toFixed(1),
  ckpts: stats.ckpts, applies: stats.applies,
  ...(O.defer ? { ackWalPerUpd: Math.round((total - stats.ckptBytes - stats.applyBytes) / O.updates), applyWalPerUpd: Math.round(stats.applyBytes / O.updates),
    applyMsAvg: +(stats.applyMs / stats.applies).toFixed(1), applyMsMax: +stats.applyMaxMs.toFixed(1) } : {}),
  updPerSec: Math.round(O.updates / secs),
  dbMiB: +(db.pragma('page_count', { simple: true }) * O.page / 1048576).toFixed(1),
  popMs,
};
if (breakdown) out.breakdown = breakdown;
console.log(JSON.stringify(out));
ck.close(); db.close();
if (!O.keep) for (const x of ['', '-wal', '-shm']) rmSync(path + x, { force: true });
