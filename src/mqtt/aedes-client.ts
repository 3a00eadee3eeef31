// What shared subscriptions use of an Aedes client beyond its typed surface, each present in Aedes
// 1.x and 2.x alike (read in both sources): its outgoing message id counter, its own QoS delivery
// path, and its packet parser.

import type { Client } from 'aedes';

/** The next outgoing message id of a client (1 to 65535, as Aedes counts), taken. */
export function takeMessageId(client: Client): number | undefined {
  // NOTE: Aedes (1.x and 2.x) keeps a client's next outgoing message id in `_nextId`; its types omit it.
  const next: unknown = Reflect.get(client, '_nextId');
  if (typeof next !== 'number') return undefined;
  Reflect.set(client, '_nextId', next >= 65_535 ? 1 : next + 1);
  return next;
}

/** A client's own QoS delivery: authorizeForward, message id, write, inflight (Aedes 1.x and 2.x). */
export function deliveryOf(client: Client): ((packet: Record<string, unknown>, cb: () => void) => void) | undefined {
  // NOTE: `deliverQoS` is set on every Aedes client in its constructor; its types omit it.
  const fn: unknown = Reflect.get(client, 'deliverQoS');
  return typeof fn === 'function' ? (fn as (packet: Record<string, unknown>, cb: () => void) => void) : undefined; // NOTE: Aedes' deliverQoS(packet, cb)
}

/** What a client's packet parser offers: its 'packet' event. */
interface PacketParser {
  on(event: 'packet', fn: (p: { cmd: string; messageId?: number }) => void): void;
  prependListener(event: 'packet', fn: (p: never) => void): void;
}

/** A client's packet parser, or undefined where Aedes keeps none. */
export function parserOf(client: Client): PacketParser | undefined {
  // NOTE: Aedes (1.x and 2.x) parses a client's packets with mqtt-packet's parser, kept in `_parser`, and
  // handles each on its 'packet' event; its types omit it.
  const parser: unknown = Reflect.get(client, '_parser');
  if (typeof parser !== 'object' || parser === null) return undefined;
  return typeof Reflect.get(parser, 'on') === 'function' && typeof Reflect.get(parser, 'prependListener') === 'function' ? parser as PacketParser : undefined;
}

/** Calls `onAck` with the message id of each PUBACK the client sends. */
export function watchAcks(client: Client, onAck: (messageId: number) => void): boolean {
  const parser = parserOf(client);
  if (parser === undefined) return false;
  parser.on('packet', (p) => {
    if (p.cmd === 'puback' && p.messageId !== undefined) onAck(p.messageId);
  });
  return true;
}
