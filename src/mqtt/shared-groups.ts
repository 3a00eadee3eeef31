// The groups of shared subscriptions (MQTT 5 §4.8.2) on the embedded broker: each message matching a
// group's filter goes to one connected member (round robin), at the lower of the member's granted QoS
// and the message's, through the member's own delivery path (Aedes numbers it, writes it and, for a
// persistent session, leaves the stored queue alone: see isSharedDelivery). A QoS 1 message not
// acknowledged when its member's connection ends goes to another member; with no member connected,
// messages wait in the group, MAX_PENDING at most (the ones after are dropped and counted). Waiting
// and unacknowledged messages are held in memory only.

import type { Aedes, AedesPublishPacket, Client } from 'aedes';
import type { Logger } from '../lib/index.js';
import type { MqttQos } from '../subscriptions/index.js';
import { deliveryOf, takeMessageId, watchAcks } from './aedes-client.js';
import { parseShareName, type ShareName } from './share-name.js';

/** Messages a group keeps while no member can take them; those after are dropped (counted). */
const MAX_PENDING = 1_000;
/** Unacknowledged messages a member holds; a group's messages wait for another while all hold this many. */
const MAX_IN_FLIGHT = 100;
/** The broker id of shared deliveries: Aedes' duplicate check and the session queue leave them alone. */
const SHARED_BROKER_ID = '$edgeld/share';

export interface SharedStats {
  groups: number;
  /** Members of every group, connected or not (persistent sessions stay members while offline). */
  members: number;
  /** Messages dropped because their group held MAX_PENDING already or lost its last member. */
  dropped: number;
}

/** Whether Aedes is delivering a message of a shared group (not one of a session's stored queue). */
export function isSharedDelivery(packet: { brokerId?: string | undefined }): boolean {
  return packet.brokerId === SHARED_BROKER_ID;
}

interface Message {
  topic: string;
  payload: Buffer;
  qos: MqttQos;
  /** MQTT 5 properties of the publish, carried as they came. */
  properties: unknown;
}

interface Member {
  clientId: string;
  qos: MqttQos;
  /** The connection now, undefined while a persistent member is away. */
  client: Client | undefined;
  inFlight: number;
}

interface Group {
  key: string;
  name: ShareName;
  members: Member[];
  /** Round robin: the index of the member tried first next. */
  next: number;
  pending: Message[];
  listen: (packet: AedesPublishPacket, cb: () => void) => void;
}

interface Flight {
  group: Group;
  member: Member;
  message: Message;
}

/** The parts of Aedes the groups use: its emitter and a member's delivery, named in Aedes' own terms. */
export interface SharedGroupsDeps {
  aedes: Pick<Aedes, 'subscribe' | 'unsubscribe'>;
  /** Whether the client may read this message (the broker's authorizeForward). */
  mayRead(client: Client, packet: AedesPublishPacket): boolean;
  log: Logger;
}

export interface SharedGroups {
  /** A client joins (or rejoins, after a reconnection or a restart) the group of a stored shared filter. */
  join(client: Client, stored: string, qos: MqttQos): void;
  /** A persistent member found in the session store at start: a member, away until it connects. */
  restore(clientId: string, stored: string, qos: MqttQos): void;
  /** The client leaves the groups of these stored filters (others ignored). */
  leave(client: Client, filters: readonly string[]): void;
  /** The client's connection is gone: its unacknowledged messages go to other members. */
  disconnected(client: Client): void;
  /** A client is connected (CONNACK sent): a persistent member takes what its groups kept. */
  connected(client: Client): void;
  /** The session of a client id ended (a clean session starts, or it expired): it leaves every group. */
  forget(clientId: string): void;
  stats(): SharedStats;
  close(): void;
}

const minQos = (a: MqttQos, b: MqttQos): MqttQos => (a < b ? a : b);
// NOTE: a publish's qos is 0, 1 or 2 (mqtt-packet checks it).
const qosOf = (packet: AedesPublishPacket): MqttQos => packet.qos as MqttQos;

/** The groups of one broker (a resource: close() leaves the broker's emitter). */
class SharedGroupSet implements SharedGroups {
  readonly #deps: SharedGroupsDeps;
  readonly #groups = new Map<string, Group>();
  /** The unacknowledged shared messages of each connection, by message id. */
  readonly #flights = new WeakMap<Client, Map<number, Flight>>();
  #dropped = 0;
  /** Numbers shared deliveries for Aedes' duplicate check: each one is new to the client. */
  #counter = 0;

  constructor(deps: SharedGroupsDeps) {
    this.#deps = deps;
  }

  join(client: Client, stored: string, qos: MqttQos): void {
    const group = this.#groupOf(stored);
    if (group === undefined) return;
    this.#follow(client);
    const member = memberOf(group, client.id);
    if (member === undefined) group.members.push({ clientId: client.id, qos, client, inFlight: 0 });
    else {
      if (member.client !== undefined && member.client !== client) this.#takeBack(member.client, group);
      member.qos = qos;
      member.client = client;
    }
    this.#deps.log.debug('mqtt shared subscription joined', { clientId: client.id, group: group.name.group, filter: group.name.filter, qos });
    this.#drain(group);
  }

  restore(clientId: string, stored: string, qos: MqttQos): void {
    const group = this.#groupOf(stored);
    if (group !== undefined && memberOf(group, clientId) === undefined) group.members.push({ clientId, qos, client: undefined, inFlight: 0 });
  }

  leave(client: Client, filters: readonly string[]): void {
    for (const stored of filters) {
      const group = this.#groups.get(stored);
      const member = group && memberOf(group, client.id);
      if (group === undefined || member === undefined || (member.client !== undefined && member.client !== client)) continue;
      member.client = undefined;
      this.#takeBack(client, group);
      this.#removeMember(group, member);
    }
  }

  disconnected(client: Client): void {
    const gone: Array<[Group, Member]> = [];
    for (const group of this.#groups.values()) {
      const member = memberOf(group, client.id);
      if (member?.client !== client) continue;
      member.client = undefined;
      gone.push([group, member]);
    }
    this.#takeBack(client);
    // A clean session ends with its connection, and its memberships with it.
    if (client.clean) for (const [group, member] of gone) this.#removeMember(group, member);
  }

  connected(client: Client): void {
    for (const group of this.#groups.values()) if (memberOf(group, client.id)?.client === client) this.#drain(group);
  }

  forget(clientId: string): void {
    for (const group of [...this.#groups.values()]) {
      const member = memberOf(group, clientId);
      if (member === undefined) continue;
      const { client } = member;
      member.client = undefined;
      if (client !== undefined) this.#takeBack(client, group);
      this.#removeMember(group, member);
    }
  }

  stats(): SharedStats {
    let members = 0;
    for (const g of this.#groups.values()) members += g.members.length;
    return { groups: this.#groups.size, members, dropped: this.#dropped };
  }

  close(): void {
    for (const g of this.#groups.values()) this.#deps.aedes.unsubscribe(g.name.filter, g.listen, () => undefined);
    this.#groups.clear();
  }

  #drop(group: Group, n: number, why: string): void {
    if (n === 0) return;
    this.#dropped += n;
    this.#deps.log.warn('mqtt shared subscription messages dropped', { group: group.name.group, filter: group.name.filter, messages: n, why });
  }

  /** Sends the message to the member: 'sent', 'away' (not connected now) or 'refused' (may not read it). */
  #send(group: Group, member: Member, message: Message): 'sent' | 'away' | 'refused' {
    const { client } = member;
    const deliver = client && deliveryOf(client);
    // NOTE: nothing goes to a client before its CONNACK (a persistent member rejoins while connecting).
    if (client === undefined || deliver === undefined || client.closed || !client.connected) return 'away';
    const qos = minQos(member.qos, message.qos);
    const packet: Record<string, unknown> = {
      cmd: 'publish', topic: message.topic, payload: message.payload, qos, retain: false, dup: false,
      brokerId: SHARED_BROKER_ID, brokerCounter: ++this.#counter,
    };
    if (message.properties !== undefined) packet['properties'] = message.properties;
    // NOTE: the fields Aedes' own packets carry; authorizeForward reads topic and payload.
    if (!this.#deps.mayRead(client, packet as unknown as AedesPublishPacket)) return 'refused';
    if (qos > 0) {
      const messageId = takeMessageId(client);
      const own = this.#flights.get(client);
      if (messageId === undefined || own === undefined) return 'away';
      packet['messageId'] = messageId;
      own.set(messageId, { group, member, message });
      member.inFlight += 1;
    }
    deliver(packet, () => undefined);
    return 'sent';
  }

  /**
   * Hands the message to the next member that can take it: 'sent'; 'wait' when a member that might
   * read it is away or busy; 'unread' when every member is connected and none may read it.
   */
  #dispatch(group: Group, message: Message): 'sent' | 'wait' | 'unread' {
    const n = group.members.length;
    let isWaiting = n === 0;
    for (let i = 0; i < n; i++) {
      const at = (group.next + i) % n;
      const member = group.members[at]!; // NOTE: at < n
      if (member.inFlight >= MAX_IN_FLIGHT) {
        isWaiting = true;
        continue;
      }
      const sent = this.#send(group, member, message);
      if (sent === 'sent') {
        group.next = (at + 1) % n;
        return 'sent';
      }
      if (sent === 'away') isWaiting = true;
    }
    return isWaiting ? 'wait' : 'unread';
  }

  #drain(group: Group): void {
    let done = 0;
    // NOTE: done < length; a message no member may read goes nowhere, as with any subscription.
    while (done < group.pending.length && this.#dispatch(group, group.pending[done]!) !== 'wait') done++;
    if (done > 0) group.pending.splice(0, done);
  }

  #hold(group: Group, message: Message, isFirst: boolean): void {
    if (group.pending.length >= MAX_PENDING) {
      this.#drop(group, 1, `the group holds ${MAX_PENDING} messages already`);
      return;
    }
    if (isFirst) group.pending.unshift(message);
    else group.pending.push(message);
  }

  #groupOf(stored: string): Group | undefined {
    const existing = this.#groups.get(stored);
    if (existing) return existing;
    const name = parseShareName(stored);
    if (name === undefined || name === 'invalid') return undefined;
    // [MQTT-4.7.2-1] A filter starting with a wildcard matches no topic starting with `$`.
    const isWildcardFirst = name.filter.startsWith('+') || name.filter.startsWith('#');
    const group: Group = {
      key: stored, name, members: [], next: 0, pending: [],
      listen: (packet, cb) => {
        cb();
        if (packet.cmd !== 'publish' || (isWildcardFirst && packet.topic.startsWith('$'))) return;
        const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
        const message: Message = { topic: packet.topic, payload, qos: qosOf(packet), properties: Reflect.get(packet, 'properties') };
        if (group.pending.length > 0 || this.#dispatch(group, message) === 'wait') this.#hold(group, message, false);
      },
    };
    this.#groups.set(stored, group);
    this.#deps.aedes.subscribe(name.filter, group.listen, () => undefined);
    this.#deps.log.info('mqtt shared subscription group created', { group: name.group, filter: name.filter });
    return group;
  }

  #removeMember(group: Group, member: Member): void {
    const at = group.members.indexOf(member);
    if (at < 0) return;
    group.members.splice(at, 1);
    if (group.next > at) group.next -= 1;
    if (group.next >= group.members.length) group.next = 0;
    if (group.members.length > 0) return;
    this.#groups.delete(group.key);
    this.#deps.aedes.unsubscribe(group.name.filter, group.listen, () => undefined);
    this.#drop(group, group.pending.length, 'the last member left the group');
    group.pending.length = 0;
    this.#deps.log.info('mqtt shared subscription group removed', { group: group.name.group, filter: group.name.filter });
  }

  /** The client's unacknowledged messages (of one group, or of all) go back to their groups, first in line. */
  #takeBack(client: Client, only?: Group): void {
    const own = this.#flights.get(client);
    if (own === undefined) return;
    const back = new Set<Group>();
    for (const [messageId, f] of [...own].reverse()) {
      if (only !== undefined && f.group !== only) continue;
      own.delete(messageId);
      f.member.inFlight -= 1;
      this.#hold(f.group, f.message, true);
      back.add(f.group);
    }
    for (const g of back) this.#drain(g);
  }

  /** Follows the client's acknowledgements: each frees its member for the next waiting message. */
  #follow(client: Client): void {
    if (this.#flights.has(client)) return;
    const own = new Map<number, Flight>();
    this.#flights.set(client, own);
    const isWatched = watchAcks(client, (messageId) => {
      const f = own.get(messageId);
      if (f === undefined) return;
      own.delete(messageId);
      f.member.inFlight -= 1;
      this.#drain(f.group);
    });
    if (!isWatched) this.#deps.log.warn('the acknowledgements of this client cannot be followed: its shared messages are not redelivered', { clientId: client.id });
  }
}

const memberOf = (group: Group, clientId: string): Member | undefined => group.members.find((m) => m.clientId === clientId);

export function createSharedGroups(deps: SharedGroupsDeps): SharedGroups {
  return new SharedGroupSet(deps);
}
