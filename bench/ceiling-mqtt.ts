// The ceiling of MQTT ingestion: a bare Aedes broker whose authorizePublish hook inserts each
// message's payload into one better-sqlite3 table and calls back after the commit, the messages of
// one event-loop turn in one transaction. No topic parsing, JSON, NGSI-LD or history. Started as a
// child process with SERVER_PORT (GET /ready, GET /count), MQTT_PORT and STORAGE_DIR, like the broker.

import Database from 'better-sqlite3';
import { Aedes, type PublishPacket } from 'aedes';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { join } from 'node:path';

const port = Number(process.env.SERVER_PORT ?? '0');
const mqttPort = Number(process.env.MQTT_PORT ?? '0');
const host = process.env.SERVER_HOST ?? '127.0.0.1';
const dir = process.env.STORAGE_DIR ?? '.';

const db = new Database(join(dir, 'ceiling-mqtt.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)');

const insert = db.prepare<[Buffer]>('INSERT INTO messages (payload) VALUES (?)');
const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM messages');
const insertAll = db.transaction((payloads: readonly Buffer[]) => {
  for (const p of payloads) insert.run(p);
});

interface Pending {
  readonly payload: Buffer;
  readonly done: (error?: Error | null) => void;
}

let queue: Pending[] = [];
let isScheduled = false;

/** Commits what this turn queued, then answers each message (Aedes then sends its PUBACK). */
function flush(): void {
  isScheduled = false;
  const batch = queue;
  queue = [];
  let failure: Error | null = null;
  try {
    insertAll(batch.map((p) => p.payload));
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
  }
  for (const p of batch) p.done(failure);
}

const aedes = await Aedes.createBroker({
  authorizePublish: (_client, packet: PublishPacket, done) => {
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    queue.push({ payload, done });
    if (!isScheduled) {
      isScheduled = true;
      setImmediate(flush);
    }
  },
});

const sockets = new Set<Socket>();
const mqtt = createTcpServer((socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  aedes.handle(socket);
});
await new Promise<void>((resolve) => mqtt.listen(mqttPort, host, resolve));

const http = createHttpServer((req, res) => {
  if (req.url === '/ready') {
    res.writeHead(200).end('ok');
    return;
  }
  if (req.url === '/count') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ count: count.get()?.n ?? 0 }));
    return;
  }
  res.writeHead(404).end();
});
http.listen(port, host);

function shutdown(): void {
  aedes.close(() => {
    for (const s of sockets) s.destroy();
    mqtt.close();
    http.closeAllConnections();
    http.close(() => {
      flush();
      db.close();
      process.exit(0);
    });
  });
}

process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
