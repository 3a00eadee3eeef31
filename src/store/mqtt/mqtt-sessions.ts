// The embedded MQTT broker's durable state: retained messages, persistent sessions (subscriptions and
// the packets queued for a client), QoS 2 packets awaiting PUBREL, wills, and the principal each
// client id's session belongs to. Packets are opaque here.

import type BetterSqlite3 from 'better-sqlite3';
import type {
  MqttPacketRecord, MqttQueuedPacket, MqttSessionStore, MqttStoredSubscription, MqttSubscriptionRecord, MqttWillRecord,
} from '../../lib/index.js';
import type { RunInTx } from '../transactions.js';

interface QueuedRow {
  seq: number;
  broker_id: string | null;
  broker_counter: number | null;
  message_id: number | null;
  meta: Buffer;
  payload: Buffer;
}

interface WillRow {
  client_id: string;
  broker_id: string;
  meta: Buffer;
  payload: Buffer;
}

const toQueued = (r: QueuedRow): MqttQueuedPacket & { seq: number } => ({
  seq: r.seq, brokerId: r.broker_id ?? undefined, brokerCounter: r.broker_counter ?? undefined, messageId: r.message_id ?? undefined,
  meta: r.meta, payload: r.payload,
});

const toWill = (r: WillRow): MqttWillRecord => ({ clientId: r.client_id, brokerId: r.broker_id, meta: r.meta, payload: r.payload });

function prepareMqttSessionStatements(db: BetterSqlite3.Database) {
  return {
    retainedPage: db.prepare<[string, number], { topic: string; meta: Buffer; payload: Buffer }>(
      'SELECT topic, meta, payload FROM mqtt_retained WHERE topic > ? ORDER BY topic LIMIT CAST(? AS INTEGER)',
    ),
    putRetained: db.prepare<[string, Buffer, Buffer]>('INSERT OR REPLACE INTO mqtt_retained (topic, meta, payload) VALUES (?, ?, ?)'),
    deleteRetained: db.prepare<[string]>('DELETE FROM mqtt_retained WHERE topic = ?'),

    subsFirst: db.prepare<[number], { client_id: string; topic: string; qos: number; options: string }>(
      'SELECT client_id, topic, qos, options FROM mqtt_subscriptions ORDER BY client_id, topic LIMIT CAST(? AS INTEGER)',
    ),
    subsAfter: db.prepare<[string, string, number], { client_id: string; topic: string; qos: number; options: string }>(
      'SELECT client_id, topic, qos, options FROM mqtt_subscriptions WHERE (client_id, topic) > (?, ?) ORDER BY client_id, topic LIMIT CAST(? AS INTEGER)',
    ),
    putSub: db.prepare<[string, string, number, string]>(
      'INSERT OR REPLACE INTO mqtt_subscriptions (client_id, topic, qos, options) VALUES (?, ?, ?, ?)',
    ),
    deleteSub: db.prepare<[string, string]>('DELETE FROM mqtt_subscriptions WHERE client_id = ? AND topic = ?'),
    clearSubs: db.prepare<[string]>('DELETE FROM mqtt_subscriptions WHERE client_id = ?'),

    insertQueued: db.prepare<[string, string | null, number | null, number | null, Buffer, Buffer]>(
      'INSERT INTO mqtt_outgoing (client_id, broker_id, broker_counter, message_id, meta, payload) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    lastQueued: db.prepare<[string], { seq: number | null }>('SELECT max(seq) AS seq FROM mqtt_outgoing WHERE client_id = ?'),
    queuedPage: db.prepare<[string, number, number, number], QueuedRow>(
      `SELECT seq, broker_id, broker_counter, message_id, meta, payload FROM mqtt_outgoing
       WHERE client_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT CAST(? AS INTEGER)`,
    ),
    assignMessageId: db.prepare<[number, string, string, number]>(
      `UPDATE mqtt_outgoing SET message_id = ? WHERE seq = (
         SELECT seq FROM mqtt_outgoing WHERE client_id = ? AND broker_id = ? AND broker_counter = ? ORDER BY seq LIMIT 1)`,
    ),
    replaceQueued: db.prepare<[string | null, number | null, number, Buffer, Buffer, string, number, string | null, string | null]>(
      `UPDATE mqtt_outgoing SET broker_id = ?, broker_counter = ?, message_id = ?, meta = ?, payload = ? WHERE seq = (
         SELECT seq FROM mqtt_outgoing WHERE client_id = ? AND message_id = ? AND (? IS NULL OR broker_id IS NOT ?) ORDER BY seq LIMIT 1)`,
    ),
    firstByMessageId: db.prepare<[string, number], QueuedRow>(
      `SELECT seq, broker_id, broker_counter, message_id, meta, payload FROM mqtt_outgoing
       WHERE client_id = ? AND message_id = ? ORDER BY seq LIMIT 1`,
    ),
    deleteQueued: db.prepare<[number]>('DELETE FROM mqtt_outgoing WHERE seq = ?'),
    firstByOrigin: db.prepare<[string, string, number], QueuedRow>(
      `SELECT seq, broker_id, broker_counter, message_id, meta, payload FROM mqtt_outgoing
       WHERE client_id = ? AND broker_id = ? AND broker_counter = ? ORDER BY seq LIMIT 1`,
    ),

    putIncoming: db.prepare<[string, number, Buffer, Buffer]>(
      'INSERT OR REPLACE INTO mqtt_incoming (client_id, message_id, meta, payload) VALUES (?, ?, ?, ?)',
    ),
    getIncoming: db.prepare<[string, number], MqttPacketRecord>('SELECT meta, payload FROM mqtt_incoming WHERE client_id = ? AND message_id = ?'),
    deleteIncoming: db.prepare<[string, number]>('DELETE FROM mqtt_incoming WHERE client_id = ? AND message_id = ?'),
    clearIncoming: db.prepare<[string]>('DELETE FROM mqtt_incoming WHERE client_id = ?'),

    putWill: db.prepare<[string, string, Buffer, Buffer]>('INSERT OR REPLACE INTO mqtt_wills (client_id, broker_id, meta, payload) VALUES (?, ?, ?, ?)'),
    getWill: db.prepare<[string], WillRow>('SELECT client_id, broker_id, meta, payload FROM mqtt_wills WHERE client_id = ?'),
    deleteWill: db.prepare<[string]>('DELETE FROM mqtt_wills WHERE client_id = ?'),
    getOwner: db.prepare<[string], { owner: string }>('SELECT owner FROM mqtt_session_owners WHERE client_id = ?'),
    putOwner: db.prepare<[string, string]>('INSERT OR REPLACE INTO mqtt_session_owners (client_id, owner) VALUES (?, ?)'),
    deleteOwner: db.prepare<[string]>('DELETE FROM mqtt_session_owners WHERE client_id = ?'),
    putExpiry: db.prepare<[string, number, number | null]>(
      'INSERT OR REPLACE INTO mqtt_session_expiry (client_id, interval_s, expires_at) VALUES (?, ?, ?)',
    ),
    startExpiries: db.prepare<[number]>('UPDATE mqtt_session_expiry SET expires_at = ? + interval_s * 1000 WHERE expires_at IS NULL'),
    deleteExpiry: db.prepare<[string]>('DELETE FROM mqtt_session_expiry WHERE client_id = ?'),
    expiredSessions: db.prepare<[number, number], { client_id: string }>(
      'SELECT client_id FROM mqtt_session_expiry WHERE expires_at <= ? ORDER BY expires_at LIMIT CAST(? AS INTEGER)',
    ),
    nextExpiry: db.prepare<[], { at: number | null }>('SELECT min(expires_at) AS at FROM mqtt_session_expiry'),
    clearQueued: db.prepare<[string]>('DELETE FROM mqtt_outgoing WHERE client_id = ?'),
    willsPage: db.prepare<[string, number], WillRow>(
      'SELECT client_id, broker_id, meta, payload FROM mqtt_wills WHERE client_id > ? ORDER BY client_id LIMIT CAST(? AS INTEGER)',
    ),
  };
}

export function createMqttSessionRepository(db: BetterSqlite3.Database, atomic: RunInTx): MqttSessionStore {
  const st = prepareMqttSessionStatements(db);
  const take = (row: QueuedRow | undefined): MqttQueuedPacket | undefined => {
    if (!row) return undefined;
    st.deleteQueued.run(row.seq);
    const { seq: _seq, ...packet } = toQueued(row);
    return packet;
  };

  return {
    retainedPage: (afterTopic, limit) => st.retainedPage.all(afterTopic, limit).map((r) => ({ topic: r.topic, packet: { meta: r.meta, payload: r.payload } })),
    putRetained: (topic, packet) => void st.putRetained.run(topic, packet.meta, packet.payload),
    deleteRetained: (topic) => void st.deleteRetained.run(topic),

    subscriptionsPage(after, limit) {
      const rows = after ? st.subsAfter.all(after.clientId, after.topic, limit) : st.subsFirst.all(limit);
      return rows.map((r) => ({ clientId: r.client_id, topic: r.topic, qos: r.qos, options: r.options }));
    },
    addSubscriptions: (clientId, subs) => atomic(() => {
      for (const s of subs) st.putSub.run(clientId, s.topic, s.qos, s.options);
    }),
    removeSubscriptions: (clientId, topics) => atomic(() => {
      for (const t of topics) st.deleteSub.run(clientId, t);
    }),
    clearSubscriptions: (clientId) => void st.clearSubs.run(clientId),

    enqueue: (clientIds, p) => atomic(() => {
      for (const id of clientIds) st.insertQueued.run(id, p.brokerId ?? null, p.brokerCounter ?? null, p.messageId ?? null, p.meta, p.payload);
    }),
    lastQueued: (clientId) => st.lastQueued.get(clientId)?.seq ?? 0,
    queuedPage: (clientId, afterSeq, upToSeq, limit) => st.queuedPage.all(clientId, afterSeq, upToSeq, limit).map(toQueued),
    assignMessageId: (clientId, brokerId, brokerCounter, messageId) =>
      st.assignMessageId.run(messageId, clientId, brokerId, brokerCounter).changes > 0,
    replaceQueued: (clientId, messageId, exceptBrokerId, p) => st.replaceQueued.run(
      p.brokerId ?? null, p.brokerCounter ?? null, messageId, p.meta, p.payload, clientId, messageId, exceptBrokerId ?? null, exceptBrokerId ?? null,
    ).changes > 0,
    // NOTE: every PUBACK asks, and a clean session has nothing queued: a read alone answers it, no
    // write transaction. The delete of one row by its key is atomic by itself.
    takeQueued: (clientId, messageId) => take(st.firstByMessageId.get(clientId, messageId)),
    takeQueuedFrom: (clientId, brokerId, brokerCounter) => take(st.firstByOrigin.get(clientId, brokerId, brokerCounter)),

    putIncoming: (clientId, messageId, p) => void st.putIncoming.run(clientId, messageId, p.meta, p.payload),
    incoming: (clientId, messageId) => st.getIncoming.get(clientId, messageId),
    deleteIncoming: (clientId, messageId) => st.deleteIncoming.run(clientId, messageId).changes > 0,
    clearIncoming: (clientId) => void st.clearIncoming.run(clientId),

    putWill: (w) => void st.putWill.run(w.clientId, w.brokerId, w.meta, w.payload),
    will(clientId) {
      const row = st.getWill.get(clientId);
      return row && toWill(row);
    },
    takeWill: (clientId) => atomic(() => {
      const row = st.getWill.get(clientId);
      if (!row) return undefined;
      st.deleteWill.run(clientId);
      return toWill(row);
    }),
    willsPage: (afterClientId, limit) => st.willsPage.all(afterClientId, limit).map(toWill),

    sessionOwner: (clientId) => st.getOwner.get(clientId)?.owner,
    putSessionOwner: (clientId, owner) => void st.putOwner.run(clientId, owner),
    deleteSessionOwner: (clientId) => void st.deleteOwner.run(clientId),

    putSessionExpiry: (clientId, intervalS, expiresAt) => void st.putExpiry.run(clientId, intervalS, expiresAt ?? null),
    startSessionExpiries: (now) => void st.startExpiries.run(now),
    deleteSessionExpiry: (clientId) => void st.deleteExpiry.run(clientId),
    expiredSessions: (now, limit) => st.expiredSessions.all(now, limit).map((r) => r.client_id),
    nextSessionExpiry: () => st.nextExpiry.get()?.at ?? undefined,
    endSession: (clientId) => atomic(() => {
      st.clearSubs.run(clientId);
      st.clearQueued.run(clientId);
      st.clearIncoming.run(clientId);
      st.deleteWill.run(clientId);
      st.deleteExpiry.run(clientId);
    }),
  };
}
