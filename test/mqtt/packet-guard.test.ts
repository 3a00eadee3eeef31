// The packet guard follows fixed headers across chunk boundaries on a stream a reader already reads,
// without switching it to flowing mode, and refuses before the reader gets an oversized packet's chunk.

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { watchPackets, type PacketRefusal } from '../../src/mqtt/packet-guard.js';

/** A stream read the way Aedes reads it (on 'readable', read(null)), guarded as the broker guards it. */
function guarded(maxPacketBytes: number) {
  const stream = new PassThrough();
  const seen: Buffer[] = [];
  const events: string[] = [];
  stream.on('readable', () => {
    let chunk: Buffer | null;
    while ((chunk = stream.read() as Buffer | null) !== null) { // NOTE: a byte stream without encoding reads Buffers
      events.push(`read ${chunk.length}`);
      seen.push(chunk);
    }
  });
  watchPackets(stream, {
    maxPacketBytes,
    onConnect: () => events.push('connect'),
    refuse: (reason: PacketRefusal, detail) => events.push(`refuse ${reason} ${JSON.stringify(detail)}`),
  });
  /** Writes each chunk and lets the reader take it. */
  const feed = async (...chunks: number[][]): Promise<void> => {
    for (const c of chunks) {
      stream.write(Buffer.from(c));
      await new Promise((r) => setImmediate(r));
    }
  };
  return { stream, events, feed };
}

const connect = [0x10, 0x0d, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3c, 0x00, 0x01, 0x78];

describe('packet guard', () => {
  it('reports the CONNECT once its last byte passed, with the header and body split over chunks', async () => {
    const g = guarded(1_024);
    await g.feed(connect.slice(0, 1), connect.slice(1, 5), connect.slice(5, 14));
    expect(g.events).not.toContain('connect');
    await g.feed(connect.slice(14));
    expect(g.events.filter((e) => e === 'connect')).toHaveLength(1);
    expect(g.stream.readableFlowing).toBe(false);
  });

  it('refuses a packet whose remaining length, split over chunks, is over the limit, before the reader gets that chunk', async () => {
    const g = guarded(1_024);
    // CONNECT, then a PINGREQ (no body), then a PUBLISH announcing 16,384 bytes (0x80 0x80 0x01).
    await g.feed([...connect, 0xc0, 0x00, 0x30, 0x80], [0x80, 0x01, 0, 0, 0]);
    expect(g.events).toEqual([
      'connect', `read ${connect.length + 4}`, `refuse packet_too_large ${JSON.stringify({ announcedBytes: 16_384, maxPacketBytes: 1_024 })}`, 'read 5',
    ]);
  });

  it('passes a packet of exactly the limit and refuses one byte more', async () => {
    const g = guarded(connect.length - 2); // the CONNECT's remaining length
    const atLimit = [0x30, 0x0d, 0x00, 0x01, 0x74, ...Array.from({ length: 10 }, () => 0x61)];
    await g.feed(connect, atLimit);
    expect(g.events.some((e) => e.startsWith('refuse'))).toBe(false);
    await g.feed([0x30, 0x0e]);
    expect(g.events.at(-2)).toBe(`refuse packet_too_large ${JSON.stringify({ announcedBytes: 14, maxPacketBytes: 13 })}`);
  });

  it('refuses a first packet that is not CONNECT at its first byte [MQTT-3.1.0-1]', async () => {
    const g = guarded(1_024);
    await g.feed([0x30]);
    expect(g.events).toEqual([`refuse not_connect ${JSON.stringify({ packetType: 3 })}`, 'read 1']);
  });

  it('accepts later packets of any type, bodies skipped exactly', async () => {
    const g = guarded(1_024);
    const publish = [0x30, 0x05, 0x00, 0x01, 0x74, 0x68, 0x69];
    await g.feed([...connect, ...publish, ...publish.slice(0, 3)], publish.slice(3), [0xe0, 0x00]);
    expect(g.events.some((e) => e.startsWith('refuse'))).toBe(false);
    // A byte after DISCONNECT is a new packet's first byte: a remaining length of five bytes is malformed.
    await g.feed([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(g.events.at(-2)).toBe(`refuse malformed_packet ${JSON.stringify({ lengthBytes: 5 })}`);
  });
});
