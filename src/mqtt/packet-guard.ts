// The packet boundaries of one MQTT connection, read from each fixed header as its bytes pass and
// before the broker's parser buffers a body: a first packet other than CONNECT, a remaining length
// over the limit or a malformed one ends the connection at once.

import type { Duplex } from 'node:stream';

/** Why the guard ended a connection (a counter's key). */
export type PacketRefusal = 'not_connect' | 'packet_too_large' | 'malformed_packet';

export interface PacketWatch {
  /** Largest remaining length (variable header and payload) a packet may announce. */
  maxPacketBytes: number;
  /** The whole first packet, the CONNECT, has arrived (not yet parsed or authenticated). */
  onConnect(): void;
  /** Ends the connection; the guard reads no more of it. */
  refuse(reason: PacketRefusal, detail: Readonly<Record<string, unknown>>): void;
}

/** Control packet type of CONNECT in the first byte's high nibble [MQTT-2.2.1]. */
const CONNECT = 1;
/** A remaining length takes at most four bytes [MQTT-2.2.3]. */
const MAX_LENGTH_BYTES = 4;

/**
 * Follows the packets of `stream`, which the broker already reads (call it after handing the stream
 * over). NOTE: with a 'readable' listener on the stream, a 'data' listener does not switch it to
 * flowing mode: 'data' is emitted for each chunk read() hands over, just before read() returns it
 * (Node's stream docs: 'readable' takes precedence). So each chunk is checked before the parser
 * appends it, and the state below, a header split over chunks or a body being passed over, costs no
 * allocation per chunk or packet.
 */
export function watchPackets(stream: Duplex, watch: PacketWatch): void {
  const max = watch.maxPacketBytes;
  let isFirst = true;
  /** Whether the next byte is a remaining-length byte (else a packet's first byte or its body). */
  let inLength = false;
  let length = 0;
  let multiplier = 1;
  let lengthBytes = 0;
  /** Body bytes of the current packet still to pass. */
  let left = 0;

  const stop = (reason: PacketRefusal, detail: Readonly<Record<string, unknown>>): void => {
    stream.off('data', onData);
    watch.refuse(reason, detail);
  };
  const endPacket = (): void => {
    if (!isFirst) return;
    isFirst = false;
    watch.onConnect();
  };
  function onData(chunk: Buffer): void {
    const end = chunk.length;
    let at = 0;
    while (at < end) {
      if (left > 0) {
        const n = Math.min(left, end - at);
        left -= n;
        at += n;
        if (left === 0) endPacket();
        continue;
      }
      const byte = chunk[at++]!; // NOTE: at < end
      if (!inLength) {
        // [MQTT-3.1.0-1] The first packet sent from the client to the server must be CONNECT.
        if (isFirst && byte >> 4 !== CONNECT) {
          stop('not_connect', { packetType: byte >> 4 });
          return;
        }
        inLength = true;
        length = 0;
        multiplier = 1;
        lengthBytes = 0;
        continue;
      }
      length += (byte & 0x7f) * multiplier;
      multiplier *= 128;
      lengthBytes++;
      if ((byte & 0x80) !== 0) {
        if (lengthBytes === MAX_LENGTH_BYTES) {
          stop('malformed_packet', { lengthBytes: lengthBytes + 1 });
          return;
        }
        continue;
      }
      inLength = false;
      if (length > max) {
        stop('packet_too_large', { announcedBytes: length, maxPacketBytes: max });
        return;
      }
      left = length;
      if (left === 0) endPacket();
    }
  }
  stream.on('data', onData);
}
