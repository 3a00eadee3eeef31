// Commands on the embedded broker (edge.md §6): the `cmd` topic of a device, its answers on `cmdexe`
// (checked with zod, applied once by the dispatcher, the QoS 1 PUBACK sent after their commit), and
// the delivery of each command message followed to the device's PUBACK.
//
// NOTE: Aedes tells a PUBACK (its 'ack' event) with the message acknowledged only for a persistent
// session; a clean session's PUBACK names a message id alone. So a command message is given its
// message id here, on its way to the device, from the client's own counter, and the client's PUBACKs
// are read as its parser emits them.

import type { AedesPublishPacket, Client } from 'aedes';
import { z } from 'zod';
import type { CommandAnswer, CommandDispatcher } from '../commands/index.js';
import type { Json } from '../ngsi/index.js';
import type { Logger } from '../lib/index.js';
import { DEFAULT_TENANT_SEGMENT } from './ingest.js';
import { classifyTopic } from './topic-classes.js';

/** What the broker asks of the command dispatcher. */
export type CommandPort = Pick<CommandDispatcher, 'mayForward' | 'delivered' | 'subscribed' | 'answer' | 'refuseAnswer' | 'brokerStarted'>;

/** The topic a device receives its commands on. */
export function commandTopic(tenant: string, deviceId: string): string {
  return `ngsi/${tenant === '' ? DEFAULT_TENANT_SEGMENT : tenant}/${deviceId}/cmd`;
}

/** The MQTT 5 properties the gateway publishes with (§3.3.2.3): those of commands and notifications. */
export interface MqttPublishProperties {
  /** Seconds; the message is not delivered after this long, and is delivered with what is left of it. */
  messageExpiryInterval?: number;
  responseTopic?: string;
  correlationData?: Buffer;
}

/** The topic a device answers its commands on. */
function answerTopic(tenant: string, deviceId: string): string {
  return `ngsi/${tenant === '' ? DEFAULT_TENANT_SEGMENT : tenant}/${deviceId}/cmdexe`;
}

/**
 * The MQTT 5 properties of a command message (its payload as the dispatcher made it): the command's
 * expiry as its Message Expiry Interval (at least a second: an interval of 0 would mean none), the
 * device's `cmdexe` topic as its Response Topic and the command id as its Correlation Data.
 */
export function commandProperties(tenant: string, deviceId: string, payload: string, now: number): MqttPublishProperties {
  const parsed: unknown = JSON.parse(payload);
  const id: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'id') : undefined;
  const expiresAt: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'expiresAt') : undefined;
  const expiresMs = typeof expiresAt === 'string' ? Date.parse(expiresAt) : Number.NaN;
  return {
    responseTopic: answerTopic(tenant, deviceId),
    ...(typeof id === 'string' ? { correlationData: Buffer.from(id) } : {}),
    ...(Number.isFinite(expiresMs) ? { messageExpiryInterval: Math.max(1, Math.ceil((expiresMs - now) / 1000)) } : {}),
  };
}

const ANSWER = z.strictObject({
  id: z.string().min(1).max(200),
  status: z.enum(['OK', 'ERROR']),
  // NOTE: what JSON.parse gave is JSON all through: z.json() would only walk it again, on every answer.
  info: z.unknown().optional(),
});

/**
 * A `cmdexe` payload as an answer, or why it is none. `correlationId`: the Correlation Data of an MQTT
 * 5 answer (the command id its command carried), which names the command when the payload has no `id`
 * and must be that id when it has one.
 */
export function parseAnswer(payload: Buffer, maxPayload: number, correlationId?: string): CommandAnswer | string {
  if (payload.length > maxPayload) return `${payload.length} bytes is over mqtt.max-payload (${maxPayload})`;
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  if (correlationId !== undefined && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const given: unknown = Reflect.get(body, 'id');
    if (given === undefined) body = { ...body, id: correlationId };
    else if (given !== correlationId) return 'id: not the command id of the correlation data';
  }
  const parsed = ANSWER.safeParse(body);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ');
  const { id, status, info } = parsed.data;
  // NOTE: a value of JSON.parse: the ngsi Json type.
  return info === undefined ? { id, status } : { id, status, info: info as Json };
}

/** Command messages on their way to a client, by the message id they were given. */
type InFlight = Map<number, { tenant: string; deviceId: string; payload: Buffer }>;

/** Most command messages followed per client (a device that never acknowledges holds no more). */
const MAX_IN_FLIGHT = 1_000;

/** The next message id of a client's counter, taken (1 to 65535, as Aedes counts). */
function takeMessageId(client: Client): number | undefined {
  // NOTE: Aedes keeps a client's next outgoing message id in `_nextId`; its types omit it.
  const next: unknown = Reflect.get(client, '_nextId');
  if (typeof next !== 'number') return undefined;
  Reflect.set(client, '_nextId', next >= 65_535 ? 1 : next + 1);
  return next;
}

/** The device a filter names concretely: `ngsi/<tenant>/<deviceId>/cmd` (or `…/+`, `…/#`); undefined for any other. */
function deviceOfFilter(filter: string): { tenant: string; deviceId: string } | undefined {
  const parts = filter.split('/');
  const last = parts[3];
  if (parts.length !== 4 || parts[0] !== 'ngsi' || (last !== 'cmd' && last !== '+' && last !== '#')) return undefined;
  const c = classifyTopic(`ngsi/${parts[1]}/${parts[2]}/cmd`);
  return c.kind === 'command' ? { tenant: c.tenant, deviceId: c.deviceId } : undefined;
}

export interface CommandDelivery {
  /** Wraps the broker's authorizeForward: expired or answered commands go nowhere; those to the device are followed. */
  forward(inner: (client: Client, packet: AedesPublishPacket) => AedesPublishPacket | null): (client: Client, packet: AedesPublishPacket) => AedesPublishPacket | null;
  /** A client connected: its PUBACKs are read, and its restored subscriptions count as subscriptions. */
  connected(client: Client): void;
  /** A client subscribed: a `cmd` topic it names gets its pending commands again. */
  subscribed(filters: readonly string[]): void;
}

/**
 * Follows command messages to their device. `isDevice`: whether a client is the device itself (any
 * client when authentication is off; administrators reading along do not acknowledge for it).
 */
export function createCommandDelivery(port: CommandPort, isDevice: (client: Client, tenant: string, deviceId: string) => boolean, log: Logger): CommandDelivery {
  const inFlight = new WeakMap<Client, InFlight>();
  return {
    forward: (inner) => (client, packet) => {
      const out = inner(client, packet);
      if (out === null) return null;
      const c = classifyTopic(out.topic);
      if (c.kind !== 'command') return out;
      const payload = Buffer.isBuffer(out.payload) ? out.payload : Buffer.from(out.payload);
      if (!port.mayForward(c.tenant, c.deviceId, payload)) return null;
      const flights = inFlight.get(client);
      if (out.qos === 0 || flights === undefined || !isDevice(client, c.tenant, c.deviceId) || flights.size >= MAX_IN_FLIGHT) return out;
      const given: unknown = Reflect.get(out, 'messageId');
      const messageId = typeof given === 'number' && given > 0 ? given : takeMessageId(client);
      if (messageId === undefined) return out;
      flights.set(messageId, { tenant: c.tenant, deviceId: c.deviceId, payload });
      // NOTE: Aedes gives the packet it writes the message id of the one handed back here (a copy: the
      // message itself goes to other clients too).
      return { ...out, messageId };
    },
    connected(client) {
      const flights: InFlight = new Map();
      inFlight.set(client, flights);
      // NOTE: Aedes parses a client's packets with mqtt-packet's parser, kept in `_parser`; its types omit it.
      const parser: unknown = Reflect.get(client, '_parser');
      if (typeof parser === 'object' && parser !== null && typeof Reflect.get(parser, 'on') === 'function') {
        (parser as { on(event: 'packet', fn: (p: { cmd: string; messageId?: number }) => void): void }).on('packet', (p) => {
          if (p.cmd !== 'puback' || p.messageId === undefined) return;
          const flight = flights.get(p.messageId);
          if (flight === undefined) return;
          flights.delete(p.messageId);
          port.delivered(flight.tenant, flight.deviceId, flight.payload);
        });
      } else {
        log.warn('the PUBACKs of this client cannot be followed: commands to it stay PENDING until answered', { clientId: client.id });
      }
      const subscriptions: unknown = Reflect.get(client, 'subscriptions');
      if (typeof subscriptions === 'object' && subscriptions !== null) this.subscribed(Object.keys(subscriptions));
    },
    subscribed(filters) {
      for (const filter of filters) {
        const device = deviceOfFilter(filter);
        if (device !== undefined) port.subscribed(device.tenant, device.deviceId);
      }
    },
  };
}
