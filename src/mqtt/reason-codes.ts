// MQTT 5 refusals of one PUBLISH with the reason code that says why (§3.4.2.1): a device learns that a
// measurement was not authorized, malformed or over quota, and keeps its connection. MQTT 3.1.1 has no
// negative acknowledgement: its clients get the behaviour of authorize.ts (acknowledged, dropped).
//
// NOTE: Aedes 2.0.0-beta.1 answers every refusal of its authorizePublish hook with 0x87 (Not
// authorized); the other codes are written here, and the packet is marked the way Aedes marks one it
// refused itself (`_notAuthorized`), so that it neither acknowledges it again nor publishes it. A test
// (test/mqtt/reason-codes.test.ts) fails if a later Aedes reads that mark differently.

import type { Client, PublishPacket } from 'aedes';
import mqttPacket from 'mqtt-packet';
import type { DropReason } from './payload.js';

/** PUBACK reason codes of MQTT 5 (§3.4.2.1) that edgeld sends. */
export const PUBACK = {
  UNSPECIFIED_ERROR: 0x80,
  NOT_AUTHORIZED: 0x87,
  TOPIC_NAME_INVALID: 0x90,
  QUOTA_EXCEEDED: 0x97,
  PAYLOAD_FORMAT_INVALID: 0x99,
} as const;

type PubackCode = (typeof PUBACK)[keyof typeof PUBACK];

/** The PUBACK reason code of a measurement ingestion dropped. */
export function pubackCodeOf(reason: DropReason): PubackCode {
  switch (reason) {
    case 'topic': return PUBACK.TOPIC_NAME_INVALID;
    case 'too-large': case 'not-json': case 'shape': case 'observed-at': case 'invalid': return PUBACK.PAYLOAD_FORMAT_INVALID;
    case 'unknown-device': case 'forbidden': return PUBACK.NOT_AUTHORIZED;
    case 'disk-full': return PUBACK.QUOTA_EXCEEDED;
    case 'failed': return PUBACK.UNSPECIFIED_ERROR;
  }
}

/**
 * Whether a publish can be refused with a reason code: a QoS 1 or 2 PUBLISH of an MQTT 5 client, as it
 * came over the wire with its packet identifier (not its will, which has none and which Aedes drops on
 * an error).
 */
export function mayRefuseWithCode(client: Client | null, packet: PublishPacket): client is Client {
  return client !== null && client.version === 5 && packet.qos > 0 && typeof packet.messageId === 'number';
}

/**
 * Answers an MQTT 5 client's QoS 1/2 publish with a PUBACK/PUBREC carrying `code` and, unless the
 * client asked for no problem information [MQTT-3.1.2-29], `why` as its Reason String; the publish
 * goes no further. Then calls `done` as authorizePublish must.
 */
export function refuseWithCode(client: Client, packet: PublishPacket, code: PubackCode, why: string, done: (err: Error | null) => void): void {
  // NOTE: Aedes keeps the client's Request Problem Information in `_requestProblemInformation`; its types omit it.
  const properties = Reflect.get(client, '_requestProblemInformation') === false ? undefined : { reasonString: why };
  const ack = { cmd: packet.qos === 2 ? 'pubrec' as const : 'puback' as const, messageId: packet.messageId ?? 0, reasonCode: code, ...(properties ? { properties } : {}) };
  mqttPacket.writeToStream(ack, client.conn, { protocolVersion: 5 });
  Reflect.set(packet, '_notAuthorized', true);
  done(null);
}
