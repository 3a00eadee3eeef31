// The groups of shared subscriptions (MQTT 5 §4.8.2) on the embedded broker: each message matching a
// group's filter goes to one connected member (round robin), at the lower of the member's granted QoS
// and the message's, through the member's own delivery path (Aedes numbers it, writes it and, for a
// persistent session, leaves the stored queue alone: see isSharedDelivery). A QoS 1/2 message not
// acknowledged when its member goes goes to another member; with no member connected, messages wait
// in the group, MAX_PENDING at most (the ones after are dropped and counted).

import type { Aedes, AedesPublishPacket, Client } from 'aedes';
import type { Logger } from '../lib/index.js';
import type { MqttQos } from '../subscriptions/index.js';
import { parseShareName, type ShareName } from './share-name.js';

/** Messages a group keeps while no member can take them; those after are dropped (counted). */
export const MAX_PENDING = 1_000;
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
  /** A client is connected (CONNACK sent): a clean session starts without the memberships of an earlier one; a persistent one takes what its groups kept. */
  connected(client: Client): void;
  stats(): SharedStats;
  close(): void;
}

/** The next outgoing message id of a client (1 to 65535, as Aedes counts), taken. */
function takeMessageId(client: Client): number | undefined {
  // NOTE: Aedes (1.x and 2.x) keeps a client's next outgoing message id in `_nextId`; its types omit it.
  const next: unknown = Reflect.get(client, '_nextId');
  if (typeof next !== 'number') return undefined;
  Reflect.set(client, '_nextId', next >= 65_535 ? 1 : next + 1);
  return next;
}

type Deliver = (packet: Record<string, unknown>, cb: () => void) => void;

/** A client's own QoS delivery: authorizeForward, message id, write, inflight (Aedes 1.x and 2.x). */
function deliveryOf(client: Client): Deliver | undefined {
  // NOTE: `deliverQoS` is set on every Aedes client in its constructor; its types omit it.
  const fn: unknown = Reflect.get(client, 'deliverQoS');
  return typeof fn === 'function' ? (fn as Deliver) : undefined;
}

/** Calls `onAck` with the message id of each PUBACK (and PUBCOMP) the client sends. */
function watchAcks(client: Client, onAck: (messageId: number) => void): boolean {
  // NOTE: Aedes parses a client's packets with mqtt-packet's parser, kept in `_parser`; its types omit it.
  const parser: unknown = Reflect.get(client, '_parser');
  if (typeof parser !== 'object' || parser === null || typeof Reflect.get(parser, 'on') !== 'function') return false;
  (parser as { on(event: 'packet', fn: (p: { cmd: string; messageId?: number }) => void): void }).on('packet', (p) => {
    if ((p.cmd === 'puback' || p.cmd === 'pubcomp') && p.messageId !== undefined) onAck(p.messageId);
  });
  return true;
}

const minQos = (a: MqttQos, b: MqttQos): MqttQos => (a < b ? a : b);
// NOTE: a publish's qos is 0, 1 or 2 (mqtt-packet checks it).
const qosOf = (packet: AedesPublishPacket): MqttQos => packet.qos as MqttQos;

export function createSharedGroups(deps: SharedGroupsDeps): SharedGroups {
  const { aedes, mayRead, log } = deps;
  const groups = new Map<string, Group>();
  const flights = new WeakMap<Client, Map<number, Flight>>();
  let dropped = 0;
  let counter = 0;

  const drop = (group: Group, n: number, why: string): void => {
    if (n === 0) return;
    dropped += n;
    log.warn('mqtt shared subscription messages dropped', { group: group.name.group, filter: group.name.filter, messages: n, why });
  };

  /** Sends the message to the member: 'sent', 'away' (not connected now) or 'refused' (may not read it). */
  function send(group: Group, member: Member, message: Message): 'sent' | 'away' | 'refused' {
    const { client } = member;
    const deliver = client && deliveryOf(client);
    // NOTE: nothing goes to a client before its CONNACK (a persistent member rejoins while connecting).
    if (client === undefined || deliver === undefined || client.closed || !client.connected) return 'away';
    const qos = minQos(member.qos, message.qos);
    const packet: Record<string, unknown> = {
      cmd: 'publish', topic: message.topic, payload: message.payload, qos, retain: false, dup: false,
      brokerId: SHARED_BROKER_ID, brokerCounter: ++counter,
    };
    if (message.properties !== undefined) packet['properties'] = message.properties;
    // NOTE: the fields Aedes' own packets carry; authorizeForward reads topic and payload.
    if (!mayRead(client, packet as unknown as AedesPublishPacket)) return 'refused';
    if (qos > 0) {
      const messageId = takeMessageId(client);
      const own = flights.get(client);
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
  function dispatch(group: Group, message: Message): 'sent' | 'wait' | 'unread' {
    const n = group.members.length;
    let isWaiting = n === 0;
    for (let i = 0; i < n; i++) {
      const at = (group.next + i) % n;
      const member = group.members[at]!; // NOTE: at < n
      if (member.inFlight >= MAX_IN_FLIGHT) {
        isWaiting = true;
        continue;
      }
      const sent = send(group, member, message);
      if (sent === 'sent') {
        group.next = (at + 1) % n;
        return 'sent';
      }
      if (sent === 'away') isWaiting = true;
    }
    return isWaiting ? 'wait' : 'unread';
  }

  function drain(group: Group): void {
    let done = 0;
    // NOTE: done < length; a message no member may read goes nowhere, as with any subscription.
    while (done < group.pending.length && dispatch(group, group.pending[done]!) !== 'wait') done++;
    if (done > 0) group.pending.splice(0, done);
  }

  function hold(group: Group, message: Message, first: boolean): void {
    if (group.pending.length >= MAX_PENDING) {
      drop(group, 1, `the group holds ${MAX_PENDING} messages already`);
      return;
    }
    if (first) group.pending.unshift(message);
    else group.pending.push(message);
  }

  function groupOf(stored: string): Group | undefined {
    const existing = groups.get(stored);
    if (existing) return existing;
    const name = parseShareName(stored);
    if (name === undefined || name === 'invalid') return undefined;
    // [MQTT-4.7.2-1] A filter starting with a wildcard matches no topic starting with `$`.
    const wildcardFirst = name.filter.startsWith('+') || name.filter.startsWith('#');
    const group: Group = {
      key: stored, name, members: [], next: 0, pending: [],
      listen: (packet, cb) => {
        cb();
        if (packet.cmd !== 'publish' || (wildcardFirst && packet.topic.startsWith('$'))) return;
        const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
        const message: Message = { topic: packet.topic, payload, qos: qosOf(packet), properties: Reflect.get(packet, 'properties') };
        if (group.pending.length > 0 || dispatch(group, message) === 'wait') hold(group, message, false);
      },
    };
    groups.set(stored, group);
    aedes.subscribe(name.filter, group.listen, () => undefined);
    log.info('mqtt shared subscription group created', { group: name.group, filter: name.filter });
    return group;
  }

  function removeMember(group: Group, member: Member): void {
    const at = group.members.indexOf(member);
    if (at < 0) return;
    group.members.splice(at, 1);
    if (group.next > at) group.next -= 1;
    if (group.next >= group.members.length) group.next = 0;
    if (group.members.length > 0) return;
    groups.delete(group.key);
    aedes.unsubscribe(group.name.filter, group.listen, () => undefined);
    drop(group, group.pending.length, 'the last member left the group');
    group.pending.length = 0;
    log.info('mqtt shared subscription group removed', { group: group.name.group, filter: group.name.filter });
  }

  /** The client's unacknowledged messages (of the given group, or every group) go back to their groups, first in line. */
  function takeBack(client: Client, only?: Group): void {
    const own = flights.get(client);
    if (own === undefined) return;
    const back = new Set<Group>();
    for (const [messageId, f] of [...own].reverse()) {
      if (only !== undefined && f.group !== only) continue;
      own.delete(messageId);
      f.member.inFlight -= 1;
      hold(f.group, f.message, true);
      back.add(f.group);
    }
    for (const g of back) drain(g);
  }

  function connect(client: Client): void {
    if (flights.has(client)) return;
    const own = new Map<number, Flight>();
    flights.set(client, own);
    const watched = watchAcks(client, (messageId) => {
      const f = own.get(messageId);
      if (f === undefined) return;
      own.delete(messageId);
      f.member.inFlight -= 1;
      drain(f.group);
    });
    if (!watched) log.warn('the acknowledgements of this client cannot be followed: its shared messages are not redelivered', { clientId: client.id });
  }

  const memberOf = (group: Group, clientId: string): Member | undefined => group.members.find((m) => m.clientId === clientId);

  return {
    join(client, stored, qos) {
      const group = groupOf(stored);
      if (group === undefined) return;
      connect(client);
      const member = memberOf(group, client.id);
      if (member === undefined) group.members.push({ clientId: client.id, qos, client, inFlight: 0 });
      else {
        if (member.client !== undefined && member.client !== client) takeBack(member.client, group);
        member.qos = qos;
        member.client = client;
      }
      log.debug('mqtt shared subscription joined', { clientId: client.id, group: group.name.group, filter: group.name.filter, qos });
      drain(group);
    },
    restore(clientId, stored, qos) {
      const group = groupOf(stored);
      if (group !== undefined && memberOf(group, clientId) === undefined) group.members.push({ clientId, qos, client: undefined, inFlight: 0 });
    },
    leave(client, filters) {
      for (const stored of filters) {
        const group = groups.get(stored);
        const member = group && memberOf(group, client.id);
        if (group === undefined || member === undefined || (member.client !== undefined && member.client !== client)) continue;
        member.client = undefined;
        takeBack(client, group);
        removeMember(group, member);
      }
    },
    disconnected(client) {
      const gone: Array<[Group, Member]> = [];
      for (const group of groups.values()) {
        const member = memberOf(group, client.id);
        if (member?.client !== client) continue;
        member.client = undefined;
        gone.push([group, member]);
      }
      takeBack(client);
      // A clean session ends with its connection, and its memberships with it.
      if (client.clean) for (const [group, member] of gone) removeMember(group, member);
    },
    connected(client) {
      for (const group of [...groups.values()]) {
        const member = memberOf(group, client.id);
        if (member === undefined) continue;
        if (member.client === client) drain(group);
        else if (member.client === undefined && client.clean) removeMember(group, member);
      }
    },
    stats: () => {
      let members = 0;
      for (const g of groups.values()) members += g.members.length;
      return { groups: groups.size, members, dropped };
    },
    close() {
      for (const g of groups.values()) aedes.unsubscribe(g.name.filter, g.listen, () => undefined);
      groups.clear();
    },
  };
}
