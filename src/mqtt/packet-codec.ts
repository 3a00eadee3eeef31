// Packets to and from storage. The payload is kept as bytes; every other field (functions aside, such
// as a delivery's write callback) goes through node:v8 serialization, which keeps Buffers and fields
// set to undefined and is documented as safe to store (readers accept older formats).

import { deserialize, serialize } from 'node:v8';
import type { MqttPacketRecord } from '../lib/index.js';

/** How the payload was held: a Buffer, a string (stored as UTF-8), or absent (PUBREL). */
type PayloadKind = 'buffer' | 'string' | 'none';

function fieldsOf(packet: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(packet)) {
    if (k !== 'payload' && typeof v !== 'function') fields[k] = v;
  }
  return fields;
}

export function encodePacket(packet: object): MqttPacketRecord {
  const payload: unknown = Reflect.get(packet, 'payload');
  let kind: PayloadKind = 'none';
  let bytes: Buffer = Buffer.alloc(0);
  if (typeof payload === 'string') {
    kind = 'string';
    bytes = Buffer.from(payload);
  } else if (payload instanceof Uint8Array) {
    kind = 'buffer';
    bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  }
  return { meta: serialize({ fields: fieldsOf(packet), kind }), payload: bytes };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/** The fields encodePacket kept, as a plain object; throws on a record it did not write. */
export function decodePacket(stored: MqttPacketRecord): Record<string, unknown> {
  const meta: unknown = deserialize(stored.meta);
  if (!isRecord(meta) || !isRecord(meta['fields'])) throw new Error('not a stored MQTT packet');
  const packet = { ...meta['fields'] };
  if (meta['kind'] === 'string') packet['payload'] = stored.payload.toString();
  else if (meta['kind'] === 'buffer') packet['payload'] = stored.payload;
  return packet;
}

/**
 * A copy as Aedes' own Packet makes it (aedes-packet): the fields a stored publish keeps, defaults
 * filled in, and an unassigned messageId for QoS > 0 [MQTT-2.3.1-1].
 */
export function copyPacket(original: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const k of ['clientId', 'nl', 'properties', 'messageExpiry']) {
    if (Object.hasOwn(original, k)) copy[k] = original[k];
  }
  copy['cmd'] = original['cmd'] || 'publish';
  copy['brokerId'] = original['brokerId'] || undefined;
  copy['brokerCounter'] = original['brokerCounter'] || 0;
  copy['topic'] = original['topic'];
  copy['payload'] = original['payload'] || Buffer.alloc(0);
  copy['qos'] = original['qos'] || 0;
  copy['retain'] = original['retain'] || false;
  copy['dup'] = original['dup'] || false;
  if ((typeof copy['qos'] === 'number' && copy['qos'] > 0) || copy['cmd'] !== 'publish') copy['messageId'] = undefined;
  return copy;
}
