// What the broker's persistence needs from durable storage: plain records in, plain records out.
// server.ts hands it the store's MQTT session repository, which has this shape.

/** A packet as packet-codec.ts encodes it: its payload, and its other fields (`meta`). */
export interface StoredPacket {
  meta: Buffer;
  payload: Buffer;
}

/** A packet on its way to a client, with the ids it is found by. */
export interface QueuedPacket extends StoredPacket {
  brokerId: string | undefined;
  brokerCounter: number | undefined;
  messageId: number | undefined;
}

export interface StoredSubscription {
  clientId: string;
  topic: string;
  qos: number;
  /** The other SUBSCRIBE fields, JSON text. */
  options: string;
}

export interface StoredWill extends StoredPacket {
  clientId: string;
  brokerId: string;
}

/** Durable storage of retained messages, persistent sessions and wills. */
export interface MqttSessionStore {
  retainedPage(afterTopic: string, limit: number): Array<{ topic: string; packet: StoredPacket }>;
  putRetained(topic: string, packet: StoredPacket): void;
  deleteRetained(topic: string): void;

  subscriptionsPage(after: { clientId: string; topic: string } | undefined, limit: number): StoredSubscription[];
  addSubscriptions(clientId: string, subs: ReadonlyArray<Omit<StoredSubscription, 'clientId'>>): void;
  removeSubscriptions(clientId: string, topics: readonly string[]): void;
  clearSubscriptions(clientId: string): void;

  enqueue(clientIds: readonly string[], packet: QueuedPacket): void;
  lastQueued(clientId: string): number;
  queuedPage(clientId: string, afterSeq: number, upToSeq: number, limit: number): Array<QueuedPacket & { seq: number }>;
  assignMessageId(clientId: string, brokerId: string, brokerCounter: number, messageId: number): boolean;
  replaceQueued(clientId: string, messageId: number, exceptBrokerId: string | undefined, packet: QueuedPacket): boolean;
  takeQueued(clientId: string, messageId: number | undefined): QueuedPacket | undefined;

  putIncoming(clientId: string, messageId: number, packet: StoredPacket): void;
  incoming(clientId: string, messageId: number): StoredPacket | undefined;
  deleteIncoming(clientId: string, messageId: number): boolean;
  clearIncoming(clientId: string): void;

  putWill(will: StoredWill): void;
  will(clientId: string): StoredWill | undefined;
  takeWill(clientId: string): StoredWill | undefined;
  willsPage(afterClientId: string, limit: number): StoredWill[];
}
