// What a connection to the embedded broker may cost before it is authenticated: connection caps per
// address and in total, a deadline for the whole CONNECT packet, and the packet size limit; each
// refusal is counted and logged, at most one line per reason and interval.

import type { Duplex } from 'node:stream';
import type { Clock, Logger } from '../lib/index.js';
import { watchPackets, type PacketRefusal } from './packet-guard.js';

export interface ConnectionLimits {
  /** Largest remaining length a packet may announce; over it the connection is closed. */
  maxPacketBytes: number;
  /** Milliseconds from accepting a connection (TLS and WebSocket handshakes included) to its whole CONNECT. */
  connectTimeout: number;
  /** Connections open at once from one address. */
  maxConnectionsPerAddress: number;
  /** Connections open at once over every listener. */
  maxConnections: number;
}

/** The limits of a broker started without any; the defaults of the mqtt.* options. */
export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = {
  maxPacketBytes: 262_144,
  connectTimeout: 10_000,
  maxConnectionsPerAddress: 64,
  maxConnections: 1_024,
};

/** Why a connection was refused or closed before its time (the counters' keys). */
export type ConnectionRefusal = 'connection_limit' | 'address_limit' | 'connect_timeout' | PacketRefusal;

export const CONNECTION_REFUSALS: readonly ConnectionRefusal[] = [
  'connection_limit', 'address_limit', 'connect_timeout', 'not_connect', 'packet_too_large', 'malformed_packet',
];

export interface ConnectionStats {
  /** Connections open now, those still before CONNECT included. */
  open: number;
  /** Refused or closed by a limit, since start. */
  refused: Readonly<Record<ConnectionRefusal, number>>;
}

/** An admitted connection. */
export interface Admission {
  /**
   * Checks the MQTT bytes of the connection: the accepted socket itself, or the TLS or WebSocket stream
   * over it. Call it right after the broker took the stream (see watchPackets).
   */
  watch(stream: Duplex): void;
  /** Counts and logs a refusal found elsewhere (a WebSocket message over its limit) and closes the connection. */
  refuse(reason: ConnectionRefusal, detail?: Readonly<Record<string, unknown>>): void;
}

export interface ConnectionGate {
  readonly limits: Readonly<ConnectionLimits>;
  /**
   * Counts a newly accepted socket (before any handshake) against the caps and starts its CONNECT
   * deadline; over a cap it is destroyed and undefined returned.
   */
  admit(socket: Duplex, remoteAddress: string | undefined): Admission | undefined;
  stats(): ConnectionStats;
}

/** Least time between two log lines of one refusal reason. */
const LOG_INTERVAL_MS = 10_000;

/** `::ffff:10.0.0.5` → `10.0.0.5`: an IPv4 client of a dual-stack listener counts as itself. */
function addressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown';
  return remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.') ? remoteAddress.slice(7) : remoteAddress;
}

/** Logs the first refusal of a reason, then at most one line per interval with the count since. */
function createRefusalLog(log: Logger, clock: Clock): (reason: ConnectionRefusal, fields: Readonly<Record<string, unknown>>) => void {
  const lastAt = new Map<ConnectionRefusal, number>();
  const since = new Map<ConnectionRefusal, number>();
  return (reason, fields) => {
    const now = clock.now();
    const last = lastAt.get(reason);
    if (last !== undefined && now - last < LOG_INTERVAL_MS) {
      since.set(reason, (since.get(reason) ?? 0) + 1);
      return;
    }
    lastAt.set(reason, now);
    const unlogged = since.get(reason) ?? 0;
    since.set(reason, 0);
    log.warn('mqtt connection refused', { reason, ...fields, ...(unlogged > 0 ? { alsoRefusedSinceLastLine: unlogged } : {}) });
  };
}

export function createConnectionGate(deps: { limits: ConnectionLimits; log: Logger; clock: Clock }): ConnectionGate {
  const { limits } = deps;
  const perAddress = new Map<string, number>();
  let open = 0;
  const refused = Object.fromEntries(CONNECTION_REFUSALS.map((r) => [r, 0])) as Record<ConnectionRefusal, number>; // NOTE: one key per refusal, just built
  const report = createRefusalLog(deps.log, deps.clock);

  const refuse = (reason: ConnectionRefusal, address: string, streams: readonly Duplex[], detail: Readonly<Record<string, unknown>> = {}): void => {
    refused[reason]++;
    report(reason, { address, ...detail });
    for (const s of streams) s.destroy();
  };
  const release = (address: string): void => {
    open--;
    const n = (perAddress.get(address) ?? 1) - 1;
    if (n === 0) perAddress.delete(address);
    else perAddress.set(address, n);
  };

  return {
    limits,
    admit(socket, remoteAddress) {
      const address = addressKey(remoteAddress);
      if (socket.destroyed) return undefined;
      const fromAddress = perAddress.get(address) ?? 0;
      if (open >= limits.maxConnections) {
        refuse('connection_limit', address, [socket], { maxConnections: limits.maxConnections });
        return undefined;
      }
      if (fromAddress >= limits.maxConnectionsPerAddress) {
        refuse('address_limit', address, [socket], { maxConnectionsPerAddress: limits.maxConnectionsPerAddress });
        return undefined;
      }
      open++;
      perAddress.set(address, fromAddress + 1);
      let watched: Duplex | undefined;
      let isEnded = false;
      const end = (reason: ConnectionRefusal, detail?: Readonly<Record<string, unknown>>): void => {
        if (isEnded) return;
        isEnded = true;
        refuse(reason, address, watched ? [watched, socket] : [socket], detail);
      };
      // MQTT 3.1.1 §3.1.4: a server that receives no CONNECT within a reasonable time should close the connection.
      const deadline = setTimeout(() => end('connect_timeout', { connectTimeout: limits.connectTimeout }), limits.connectTimeout);
      deadline.unref();
      socket.once('close', () => {
        clearTimeout(deadline);
        release(address);
      });
      return {
        watch(stream) {
          watched = stream;
          watchPackets(stream, { maxPacketBytes: limits.maxPacketBytes, onConnect: () => clearTimeout(deadline), refuse: end });
        },
        refuse: end,
      };
    },
    stats: () => ({ open, refused: { ...refused } }),
  };
}
