// Migration 14: the embedded MQTT broker's own state, so that it survives a restart: retained
// messages, the subscriptions and queued packets of persistent sessions, QoS 2 packets received but
// not yet released, and wills. A packet is two BLOBs: its payload, and its other fields as the mqtt
// module encodes them (meta).

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE mqtt_retained (
      topic   TEXT PRIMARY KEY,
      meta    BLOB NOT NULL,
      payload BLOB NOT NULL
    ) WITHOUT ROWID;

    -- Subscriptions of clients connected with clean: false only; options are the rest of the
    -- SUBSCRIBE entry (JSON).
    CREATE TABLE mqtt_subscriptions (
      client_id TEXT    NOT NULL,
      topic     TEXT    NOT NULL,
      qos       INTEGER NOT NULL,
      options   TEXT    NOT NULL,
      PRIMARY KEY (client_id, topic)
    ) WITHOUT ROWID;

    -- Packets on their way to a client, in order of seq: publishes waiting for the client or for its
    -- PUBACK/PUBREC, and PUBRELs waiting for PUBCOMP. message_id is NULL until a delivery assigns one.
    CREATE TABLE mqtt_outgoing (
      seq            INTEGER PRIMARY KEY,
      client_id      TEXT    NOT NULL,
      broker_id      TEXT,
      broker_counter INTEGER,
      message_id     INTEGER,
      meta           BLOB    NOT NULL,
      payload        BLOB    NOT NULL
    );
    CREATE INDEX mqtt_outgoing_client ON mqtt_outgoing (client_id);
    CREATE INDEX mqtt_outgoing_message ON mqtt_outgoing (client_id, message_id);
    CREATE INDEX mqtt_outgoing_origin ON mqtt_outgoing (client_id, broker_id, broker_counter);

    -- QoS 2 publishes received from a client and not yet released (PUBREL) [MQTT-4.3.3-2].
    CREATE TABLE mqtt_incoming (
      client_id  TEXT    NOT NULL,
      message_id INTEGER NOT NULL,
      meta       BLOB    NOT NULL,
      payload    BLOB    NOT NULL,
      PRIMARY KEY (client_id, message_id)
    ) WITHOUT ROWID;

    -- broker_id: the broker instance the client was connected to, so that the wills of a broker that
    -- is gone (a restart) can be told from those of live connections.
    CREATE TABLE mqtt_wills (
      client_id TEXT PRIMARY KEY,
      broker_id TEXT NOT NULL,
      meta      BLOB NOT NULL,
      payload   BLOB NOT NULL
    ) WITHOUT ROWID;
  `);
}
