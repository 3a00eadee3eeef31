// The MQTT broker's durable session state as plain records: what the embedded broker's persistence
// (mqtt/) needs and the store keeps. NOTE: here because both can import lib; an edge never imports
// store, and store never imports an edge. Packets are opaque: the mqtt module encodes them.

/** A packet as the mqtt module encodes it: its payload, and its other fields (`meta`). */
export interface MqttPacketRecord {
  meta: Buffer;
  payload: Buffer;
}

/** A packet on its way to a client; its ids are kept beside it to find it again. */
export interface MqttQueuedPacket extends MqttPacketRecord {
  brokerId: string | undefined;
  brokerCounter: number | undefined;
  /** Assigned when a delivery starts; undefined while the packet waits. */
  messageId: number | undefined;
}

/** One subscription of a persistent session; `options` are its other SUBSCRIBE fields (JSON text). */
export interface MqttSubscriptionRecord {
  topic: string;
  qos: number;
  options: string;
}

export interface MqttStoredSubscription extends MqttSubscriptionRecord {
  clientId: string;
}

export interface MqttWillRecord extends MqttPacketRecord {
  clientId: string;
  /** The broker instance the client was connected to. */
  brokerId: string;
}

/** Durable storage of retained messages, persistent sessions and wills (the store implements it). */
export interface MqttSessionStore {
  /** Retained messages in topic order, after `afterTopic` ('' for the first page). */
  retainedPage(afterTopic: string, limit: number): Array<{ topic: string; packet: MqttPacketRecord }>;
  /** Replaces the retained message of the topic. */
  putRetained(topic: string, packet: MqttPacketRecord): void;
  deleteRetained(topic: string): void;

  /** Subscriptions in (client, topic) order, after the given one (undefined for the first page). */
  subscriptionsPage(after: { clientId: string; topic: string } | undefined, limit: number): MqttStoredSubscription[];
  /** Adds or replaces subscriptions of a client, in one transaction. */
  addSubscriptions(clientId: string, subs: readonly MqttSubscriptionRecord[]): void;
  removeSubscriptions(clientId: string, topics: readonly string[]): void;
  clearSubscriptions(clientId: string): void;

  /** Appends the packet to the queue of each client, in one transaction. */
  enqueue(clientIds: readonly string[], packet: MqttQueuedPacket): void;
  /** The position of the newest packet queued for the client; 0 when none. */
  lastQueued(clientId: string): number;
  /** Queued packets of a client in queue order, with positions in (afterSeq, upToSeq]. */
  queuedPage(clientId: string, afterSeq: number, upToSeq: number, limit: number): Array<MqttQueuedPacket & { seq: number }>;
  /** Sets the message id of the first queued packet with that origin; false when there is none. */
  assignMessageId(clientId: string, brokerId: string, brokerCounter: number, messageId: number): boolean;
  /**
   * Replaces the first queued packet with that message id (not one of `exceptBrokerId`'s, when
   * given) by `packet` (a PUBREL after PUBREC, or a redelivery); false when there is none.
   */
  replaceQueued(clientId: string, messageId: number, exceptBrokerId: string | undefined, packet: MqttQueuedPacket): boolean;
  /** Removes and returns the first queued packet with that message id (acknowledged). */
  takeQueued(clientId: string, messageId: number): MqttQueuedPacket | undefined;
  /** Removes and returns the first queued packet with that origin (its broker and counter). */
  takeQueuedFrom(clientId: string, brokerId: string, brokerCounter: number): MqttQueuedPacket | undefined;

  /** Stores a QoS 2 packet received from a client, replacing one with the same message id. */
  putIncoming(clientId: string, messageId: number, packet: MqttPacketRecord): void;
  incoming(clientId: string, messageId: number): MqttPacketRecord | undefined;
  deleteIncoming(clientId: string, messageId: number): boolean;
  clearIncoming(clientId: string): void;

  /** Replaces the will of the client. */
  putWill(will: MqttWillRecord): void;
  will(clientId: string): MqttWillRecord | undefined;
  /** Removes and returns the will of the client. */
  takeWill(clientId: string): MqttWillRecord | undefined;
  /** Wills in client order, after `afterClientId` ('' for the first page). */
  willsPage(afterClientId: string, limit: number): MqttWillRecord[];

  /** The principal a client id's session belongs to (`device:…` or `subject:…`), if bound. */
  sessionOwner(clientId: string): string | undefined;
  /** Binds a client id's session to a principal, replacing a binding. */
  putSessionOwner(clientId: string, owner: string): void;
  deleteSessionOwner(clientId: string): void;

  /**
   * Sets a session's expiry interval (seconds) and when it ends (ms since the epoch), or undefined
   * while its client is connected.
   */
  putSessionExpiry(clientId: string, intervalS: number, expiresAt: number | undefined): void;
  /** The session never expires, or has ended: no expiry is kept for it. */
  deleteSessionExpiry(clientId: string): void;
  /** At start: the sessions whose client was connected when the broker stopped expire from `now`. */
  startSessionExpiries(now: number): void;
  /** Client ids whose session expiry is at or before `now`, earliest first. */
  expiredSessions(now: number, limit: number): string[];
  /** The earliest pending session expiry, or undefined when none is. */
  nextSessionExpiry(): number | undefined;
  /** Removes everything stored of a session (subscriptions, queue, QoS 2 state, will, expiry), in one transaction. */
  endSession(clientId: string): void;
}
