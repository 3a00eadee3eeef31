// Aedes persistence that survives a restart. Retained messages and the subscriptions of persistent
// sessions stay in Aedes' in-memory persistence (the topic trie matched on every publish) and are
// written through to storage, which fills them again at start. Queued packets, QoS 2 packets and
// wills live only in storage: each is found by key, and a long-offline client's queue costs no heap.

import { Readable } from 'node:stream';
import type { Client } from 'aedes';
import MemoryPersistence from 'aedes-persistence/asyncPersistence.js';
import { copyPacket, decodePacket, encodePacket } from './packet-codec.js';
import { isSharedDelivery } from './shared-groups.js';
import type { MqttQueuedPacket, MqttSessionStore, MqttWillRecord } from '../lib/index.js';

type Packet = Parameters<MemoryPersistence['storeRetained']>[0];
type Subscription = Parameters<MemoryPersistence['addSubscriptions']>[1][number];
type WillPacket = NonNullable<Awaited<ReturnType<MemoryPersistence['getWill']>>>;

const PAGE = 256;

// NOTE: the packets handed back are rebuilt from storage with the fields Aedes stored; its types
// cannot see through the decoding.
const asPacket = (fields: Record<string, unknown>): Packet => fields as unknown as Packet;

function numberOr(x: unknown): number | undefined {
  return typeof x === 'number' ? x : undefined;
}

function toQueued(packet: Record<string, unknown>): MqttQueuedPacket {
  const brokerId = packet['brokerId'];
  return {
    ...encodePacket(packet),
    brokerId: typeof brokerId === 'string' ? brokerId : undefined,
    brokerCounter: numberOr(packet['brokerCounter']),
    messageId: numberOr(packet['messageId']),
  };
}

/** A queued packet as Aedes stored it, with the message id assigned since. */
function fromQueued(q: MqttQueuedPacket): Packet {
  const packet = decodePacket(q);
  if (q.messageId !== undefined) packet['messageId'] = q.messageId;
  return asPacket(packet);
}

/** The SUBSCRIBE fields kept besides topic and QoS (MQTT 5 options, when a client sent them). */
function optionsOf(sub: Subscription): string {
  const { topic: _topic, qos: _qos, ...rest } = sub;
  return JSON.stringify(rest);
}

function parseOptions(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  return typeof parsed === 'object' && parsed !== null ? { ...parsed } : {};
}

/** Told when a session's subscriptions are wiped (a clean session starts, a session expires): its shared memberships end. */
type SessionEnd = (clientId: string) => void;

/** Aedes' in-memory persistence, messages of shared subscriptions kept out of the session queues (shared-groups.ts). */
export class MemorySessionPersistence extends MemoryPersistence {
  readonly #onSessionEnd: SessionEnd | undefined;

  constructor(onSessionEnd?: SessionEnd) {
    super();
    this.#onSessionEnd = onSessionEnd;
  }

  override async outgoingUpdate(client: Client, packet: Packet): Promise<void> {
    if (isSharedDelivery(packet)) return;
    await super.outgoingUpdate(client, packet);
  }

  override async cleanSubscriptions(client: Client): Promise<void> {
    await super.cleanSubscriptions(client);
    this.#onSessionEnd?.(client.id);
  }
}

/** A persistent session being resumed: the origins of the messages delivered to it since. */
interface Resumption {
  delivered: Set<string>;
}

/** A published message's origin (its broker and that broker's counter), which names it in every queue. */
function originOf(packet: { brokerId?: string | undefined; brokerCounter?: number | undefined }): string | undefined {
  const { brokerId, brokerCounter } = packet;
  return brokerId !== undefined && brokerCounter !== undefined ? `${brokerId}:${brokerCounter}` : undefined;
}

export class SqlitePersistence extends MemoryPersistence {
  readonly #store: MqttSessionStore;
  readonly #resuming = new Map<string, Resumption>();
  /** Deliveries that keep their message, and deliveries of a message another one keeps (see outgoingUpdate). */
  readonly #first = new WeakSet<object>();
  readonly #second = new WeakSet<object>();
  readonly #onSessionEnd: SessionEnd | undefined;
  /** The Aedes instance (its id is read when a will is stored); set by setup. */
  #broker: { id: string } = { id: '' };

  constructor(store: MqttSessionStore, onSessionEnd?: SessionEnd) {
    super();
    this.#store = store;
    this.#onSessionEnd = onSessionEnd;
  }

  /** Called by Aedes before it accepts clients: loads retained messages and persistent subscriptions. */
  override async setup(broker: Parameters<MemoryPersistence['setup']>[0]): Promise<void> {
    await super.setup(broker);
    this.#broker = broker;
    for (let page = this.#store.retainedPage('', PAGE); page.length > 0; page = this.#store.retainedPage(page[page.length - 1]!.topic, PAGE)) {
      for (const { packet } of page) await super.storeRetained(asPacket(decodePacket(packet)));
    }
    let after: { clientId: string; topic: string } | undefined;
    for (let page = this.#store.subscriptionsPage(after, PAGE); page.length > 0; page = this.#store.subscriptionsPage(after, PAGE)) {
      const byClient = new Map<string, Subscription[]>();
      for (const s of page) {
        // NOTE: the options were written by optionsOf from a Subscription.
        const sub = { ...parseOptions(s.options), topic: s.topic, qos: s.qos } as Subscription;
        byClient.set(s.clientId, [...(byClient.get(s.clientId) ?? []), sub]);
      }
      // NOTE: the in-memory persistence reads only the id of a client.
      for (const [id, subs] of byClient) await super.addSubscriptions({ id } as Client, subs);
      const last = page[page.length - 1]!;
      after = { clientId: last.clientId, topic: last.topic };
    }
  }

  // Storage first: when a write fails, memory does not claim what storage lacks.

  override async storeRetained(packet: Packet): Promise<void> {
    if (packet.cmd !== 'publish') return;
    // [MQTT-3.3.1-10] A retained message with an empty payload removes the one of its topic.
    if (packet.payload.length === 0) this.#store.deleteRetained(packet.topic);
    else this.#store.putRetained(packet.topic, encodePacket(packet));
    await super.storeRetained(packet);
  }

  override async addSubscriptions(client: Client, subs: Subscription[]): Promise<void> {
    this.#store.addSubscriptions(client.id, subs.map((s) => ({ topic: s.topic, qos: s.qos, options: optionsOf(s) })));
    await super.addSubscriptions(client, subs);
  }

  override async removeSubscriptions(client: Client, topics: string[]): Promise<void> {
    this.#store.removeSubscriptions(client.id, topics);
    await super.removeSubscriptions(client, topics);
  }

  override async cleanSubscriptions(client: Client): Promise<void> {
    this.#store.clearSubscriptions(client.id);
    await super.cleanSubscriptions(client);
    this.#onSessionEnd?.(client.id);
  }

  override async outgoingEnqueue(sub: { clientId: string }, packet: Packet): Promise<void> {
    await this.outgoingEnqueueCombi([sub], packet);
  }

  override async outgoingEnqueueCombi(subs: Array<{ clientId: string }>, packet: Packet): Promise<void> {
    // NOTE: a QoS 1/2 publish nobody persistent subscribes to must not cost a write.
    if (subs.length === 0) return;
    this.#store.enqueue(subs.map((s) => s.clientId), toQueued(copyPacket({ ...packet })));
  }

  /**
   * A persistent session is resumed (Aedes reads its subscriptions first): until its queue is replayed
   * (Aedes' clientReady, see resumed()), a message may reach it twice, live and from the queue.
   */
  override async subscriptionsByClient(client: Client): ReturnType<MemoryPersistence['subscriptionsByClient']> {
    this.#resuming.set(client.id, { delivered: new Set() });
    return super.subscriptionsByClient(client);
  }

  /** The session's queue is replayed (or its connection ended): each delivery is its own again. */
  resumed(clientId: string): void {
    this.#resuming.delete(clientId);
  }

  /**
   * Whether a delivery of a queued message goes to the client: not when another delivery of it on this
   * connection started first (while the session is resumed), nor when it left the queue meanwhile.
   * The broker's authorizeForward asks it first.
   */
  mayDeliver(client: Client, packet: Packet): boolean {
    if (this.#second.has(packet)) return false;
    // NOTE: on every delivery to every client: a session not being resumed costs two lookups, no more.
    return !this.#deliveredBefore(client.id, packet, false) || this.#first.has(packet);
  }

  /**
   * Whether a message went to the client already on the connection that resumes its session (never
   * outside a resumption); `record`: this delivery counts from now on when it is the first.
   */
  #deliveredBefore(clientId: string, packet: { brokerId?: string | undefined; brokerCounter?: number | undefined }, record: boolean): boolean {
    const r = this.#resuming.get(clientId);
    if (r === undefined) return false;
    const key = originOf(packet);
    if (key === undefined) return false;
    if (r.delivered.has(key)) return true;
    if (record) r.delivered.add(key);
    return false;
  }

  /**
   * A delivery starts (its message id is assigned), or a PUBREL takes the place of its publish.
   * NOTE: while a session is resumed, Aedes delivers a message queued for it both live (its
   * subscriptions are restored before its queue is replayed) and from the queue: the first delivery
   * keeps the message, a later one is marked here and refused by mayDeliver (the replay asks after
   * this; a live delivery asked before, and goes out twice at worst: QoS 1 is at least once).
   */
  override async outgoingUpdate(client: Client, packet: Packet): Promise<void> {
    // A message of a shared subscription is kept by its group, not in the session's queue.
    if (isSharedDelivery(packet)) return;
    const { brokerId, brokerCounter, messageId } = packet as Packet & { messageId?: number }; // NOTE: PUBREL has no broker ids
    if (this.#deliveredBefore(client.id, packet, true)) {
      this.#second.add(packet);
      return;
    }
    if (brokerId !== undefined && brokerCounter !== undefined && messageId !== undefined
      && this.#store.assignMessageId(client.id, brokerId, brokerCounter, messageId)) {
      this.#first.add(packet);
      return;
    }
    if (messageId !== undefined && this.#store.replaceQueued(client.id, messageId, brokerId, toQueued({ ...packet }))) return;
    // NOTE: not queued (any more): acknowledged through another delivery. Aedes would end the
    // connection on an error here; the replay skips it instead, and a live delivery goes out.
    this.#second.add(packet);
  }

  /**
   * PUBACK or PUBCOMP: the packet with that message id is done. A publish (acknowledged, or its delivery
   * refused) is taken by its origin when it has one: a message refused on its way live still carries
   * its publisher's message id, which may be another queued message's.
   */
  override async outgoingClearMessageId(client: Client, packet: Packet): Promise<Packet> {
    const fields = packet as Packet & { messageId?: unknown; cmd?: unknown };
    let taken: MqttQueuedPacket | undefined;
    if (fields.cmd === 'publish' && packet.brokerId !== undefined && packet.brokerCounter !== undefined) {
      // NOTE: not while another delivery of the message goes on (see outgoingUpdate): its PUBACK takes it.
      if (this.mayDeliver(client, packet)) taken = this.#store.takeQueuedFrom(client.id, packet.brokerId, packet.brokerCounter);
    } else {
      const id = numberOr(fields.messageId);
      taken = id === undefined ? undefined : this.#store.takeQueued(client.id, id);
    }
    // NOTE: Aedes' own persistence resolves with undefined when nothing had that id.
    return (taken ? fromQueued(taken) : undefined) as Packet;
  }

  /** The client's queue as it is now, oldest first, read page by page; while resumed, without what went out live. */
  override outgoingStream(client: Client): Readable {
    const store = this.#store;
    const upTo = store.lastQueued(client.id);
    const deliveredLive = (q: MqttQueuedPacket): boolean => this.#deliveredBefore(client.id, q, false);
    function* queued(): Generator<Packet> {
      for (let after = 0, page = store.queuedPage(client.id, after, upTo, PAGE); page.length > 0; page = store.queuedPage(client.id, after, upTo, PAGE)) {
        for (const q of page) if (!deliveredLive(q)) yield fromQueued(q);
        after = page[page.length - 1]!.seq;
      }
    }
    return Readable.from(queued());
  }

  override async incomingStorePacket(client: Client, packet: Packet): Promise<void> {
    const messageId = numberOr(Reflect.get(packet, 'messageId'));
    if (messageId === undefined) throw new Error('a QoS 2 packet without a message id');
    this.#store.putIncoming(client.id, messageId, encodePacket({ ...copyPacket({ ...packet }), messageId }));
  }

  override async incomingGetPacket(client: Client, packet: Packet): Promise<Packet> {
    const stored = this.#store.incoming(client.id, numberOr(Reflect.get(packet, 'messageId')) ?? -1);
    if (!stored) throw new Error('no such packet');
    return asPacket(decodePacket(stored));
  }

  override async incomingDelPacket(client: Client, packet: Packet): Promise<void> {
    if (!this.#store.deleteIncoming(client.id, numberOr(Reflect.get(packet, 'messageId')) ?? -1)) throw new Error('no such packet');
  }

  /** [MQTT-3.1.2-6] A clean session starts without the QoS 2 state of the previous one. */
  override async cleanIncoming(client: Client): Promise<void> {
    this.#store.clearIncoming(client.id);
  }

  override async putWill(client: Client, packet: Packet): Promise<void> {
    const brokerId = this.#broker.id;
    Object.assign(packet, { brokerId, clientId: client.id });
    this.#store.putWill({ clientId: client.id, brokerId, ...encodePacket(packet) });
  }

  override async getWill(client: Client): Promise<WillPacket | undefined> {
    const will = this.#store.will(client.id);
    return will && this.#toWill(will);
  }

  /**
   * Removes the will of a client. Given the broker the will was stored by, removes it only when it is
   * still that broker's: a will published for a broker that is gone must not take the will of the
   * client's new connection with it.
   */
  override async delWill(client: { id: string; brokerId?: string | undefined }): Promise<WillPacket | undefined> {
    const stored = this.#store.will(client.id);
    if (!stored || (client.brokerId !== undefined && client.brokerId !== stored.brokerId)) return undefined;
    const taken = this.#store.takeWill(client.id);
    return taken && this.#toWill(taken);
  }

  /** The wills of clients of brokers not in `brokers` (for a single broker: of an earlier run). */
  override streamWill(brokers: Record<string, unknown> = {}): Readable {
    const store = this.#store;
    const toWill = (w: MqttWillRecord): WillPacket => this.#toWill(w);
    function* wills(): Generator<WillPacket> {
      for (let page = store.willsPage('', PAGE); page.length > 0; page = store.willsPage(page[page.length - 1]!.clientId, PAGE)) {
        for (const w of page) if (!Object.hasOwn(brokers, w.brokerId)) yield toWill(w);
      }
    }
    return Readable.from(wills());
  }

  /** An expired session (MQTT 5 Session Expiry): everything stored of it is removed, from memory too. */
  async endSession(clientId: string): Promise<void> {
    this.#store.endSession(clientId);
    // NOTE: the in-memory persistence reads only the id of a client.
    await super.cleanSubscriptions({ id: clientId } as Client);
  }

  #toWill(w: MqttWillRecord): WillPacket {
    return asPacket(decodePacket(w));
  }
}
