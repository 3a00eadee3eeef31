// The sockets of the embedded broker: a TCP listener, an optional TLS listener, an optional
// WebSocket listener (wss with a key and certificate) and the WebSocket upgrades another server hands
// over (the HTTP port's /mqtt), all admitting every connection through the connection gate (caps,
// CONNECT deadline, packet size), handing it to Aedes and tracking their sockets so that a stop leaves
// none open. The TLS ones take a new key and certificate without dropping open connections.

import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { secureContextOptions, type Logger, type TlsPair } from '../lib/index.js';
import type { Admission, ConnectionGate } from './connection-gate.js';
import { MqttListenError } from './errors.js';

export type HandleConnection = (stream: Duplex, req?: IncomingMessage) => void;

/** What every listener needs: where connections go, the gate they pass first, and the log. */
export interface ListenerDeps {
  handle: HandleConnection;
  gate: ConnectionGate;
  log: Logger;
}

export interface Listener {
  readonly port: number;
  /** Stops accepting and resolves once every socket is gone; sockets still open are destroyed. */
  close(): Promise<void>;
  /** Destroys every socket still open (those that never finished CONNECT, or stuck writing). */
  destroySockets(): void;
}

/** A listener over TLS: new connections get the pair last set, open ones keep theirs. */
export interface SecureListener extends Listener {
  setTlsPair(pair: TlsPair): void;
}

function trackSockets(server: TcpServer | HttpServer | TlsServer): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

function bind(server: TcpServer | HttpServer | TlsServer, option: MqttListenError['option'], host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new MqttListenError(option, host, port, err));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port); // NOTE: a listening TCP server's address is an object
    });
  });
}

function closeServer(server: TcpServer | HttpServer | TlsServer, sockets: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      for (const s of sockets) s.destroy();
      resolve();
      return;
    }
    server.close(() => resolve());
  });
}

/** Hands an admitted stream to Aedes, then watches its packets (in that order: see watchPackets). */
function handOverStream(admission: Admission, stream: Duplex, handle: HandleConnection, req?: IncomingMessage): void {
  handle(stream, req);
  admission.watch(stream);
}

/** Listens for MQTT over TCP; every socket the gate admits goes to `handle`. */
export async function listenTcp(opts: ListenerDeps & { port: number; host: string }): Promise<Listener> {
  // NOTE: noDelay: MQTT packets are small; Nagle's algorithm would hold a notification back until
  // the client's delayed ACK (tens of milliseconds).
  const server = createTcpServer({ noDelay: true }, (socket) => {
    const admission = opts.gate.admit(socket, socket.remoteAddress);
    if (admission) handOverStream(admission, socket, opts.handle);
  });
  const sockets = trackSockets(server);
  const port = await bind(server, 'mqtt.port', opts.host, opts.port);
  server.on('error', (err) => opts.log.warn('mqtt tcp listener error', { err }));
  return {
    port,
    close: () => closeServer(server, sockets),
    destroySockets: () => {
      for (const s of sockets) s.destroy();
    },
  };
}

const mqttSubprotocol = (protocols: Set<string>): string | false =>
  (protocols.has('mqtt') ? 'mqtt' : protocols.has('mqttv3.1') ? 'mqttv3.1' : false);

/**
 * Largest WebSocket message from a client: one whole packet at the size limit with its longest fixed
 * header (ws's own default is 100 MiB, buffered before the packet guard sees a byte).
 */
const wsMaxPayload = (gate: ConnectionGate): number => gate.limits.maxPacketBytes + 5;

/** Admissions of the sockets that carry connections: set on the TCP socket, found from the socket a connection runs on. */
interface Admissions {
  set(raw: Socket, admission: Admission): void;
  get(socket: Socket): Admission | undefined;
}

/** Admissions of sockets that carry their connection themselves (plain WebSocket, upgrades handed over). */
function admissionsBySocket(): Admissions {
  const map = new WeakMap<Socket, Admission>();
  return { set: (raw, admission) => map.set(raw, admission), get: (socket) => map.get(socket) };
}

/**
 * Admissions of TCP sockets under TLS. NOTE: the gate admits the raw TCP connection (the handshake
 * counts against the caps and the CONNECT deadline); the TLS socket over it is found by its peer's
 * address and port, which it shares.
 */
function admissionsByPeer(): Admissions {
  const map = new Map<string, Admission>();
  const peerOf = (socket: Socket): string => `${socket.remoteAddress}|${socket.remotePort}`;
  return {
    set: (raw, admission) => {
      const peer = peerOf(raw);
      map.set(peer, admission);
      raw.once('close', () => map.delete(peer));
    },
    get: (socket) => map.get(peerOf(socket)),
  };
}

/** Hands every WebSocket connection of `wss` whose socket was admitted to Aedes as a stream. */
function handOver(wss: WebSocketServer, admissions: Admissions, opts: ListenerDeps): void {
  wss.on('error', (err) => opts.log.warn('mqtt websocket listener error', { err }));
  wss.on('connection', (ws, req) => {
    const admission = admissions.get(req.socket);
    ws.on('error', (err: Error & { code?: string }) => {
      // ws refused a message over maxPayload from its frame header, before buffering it.
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') admission?.refuse('packet_too_large', { maxWebSocketMessageBytes: wsMaxPayload(opts.gate) });
      else opts.log.debug('mqtt websocket error', { err: err.message });
    });
    if (admission === undefined) {
      ws.terminate();
      return;
    }
    const stream = createWebSocketStream(ws);
    stream.on('error', (err) => opts.log.debug('mqtt websocket stream error', { err: err.message }));
    handOverStream(admission, stream, opts.handle, req);
  });
}

/** Listens for MQTT over WebSocket (subprotocol `mqtt`), for browser dashboards; wss with a key and certificate. */
export async function listenWebSocket(opts: ListenerDeps & { port: number; host: string; tls?: TlsPair | undefined }): Promise<SecureListener> {
  const upgradeRequired = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(426, { Upgrade: 'websocket', Connection: 'close', 'Content-Type': 'text/plain' });
    res.end('MQTT over WebSocket only\n');
  };
  const https = opts.tls === undefined ? undefined : createHttpsServer(secureContextOptions(opts.tls), upgradeRequired);
  const server = https ?? createHttpServer(upgradeRequired);
  if (https) https.on('tlsClientError', (err) => opts.log.debug('mqtt wss handshake failed', { err: err.message }));
  const sockets = trackSockets(server);
  const admissions = https ? admissionsByPeer() : admissionsBySocket();
  // Before the HTTP request and the WebSocket handshake: those count against the caps and the CONNECT deadline.
  server.on('connection', (socket: Socket) => {
    const admission = opts.gate.admit(socket, socket.remoteAddress);
    if (admission) admissions.set(socket, admission);
  });
  const wss = new WebSocketServer({ server, handleProtocols: mqttSubprotocol, maxPayload: wsMaxPayload(opts.gate) });
  handOver(wss, admissions, opts);
  const port = await bind(server, 'mqtt.ws-port', opts.host, opts.port);
  return {
    port,
    setTlsPair: (pair) => {
      if (https === undefined) throw new Error('mqtt.ws-port serves plain WebSocket');
      https.setSecureContext(secureContextOptions(pair));
    },
    close: async () => {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeServer(server, sockets);
    },
    destroySockets: () => {
      for (const client of wss.clients) client.terminate();
      for (const s of sockets) s.destroy();
    },
  };
}

export interface UpgradeAcceptor {
  /** Completes a WebSocket handshake another server received and hands the connection to Aedes. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Stops accepting; resolves once the handshakes under way are done. */
  close(): Promise<void>;
  /** Ends every connection it accepted. */
  destroySockets(): void;
}

/** MQTT over WebSocket on the upgrade requests of another server (a path of the HTTP listener). */
export function acceptWebSocketUpgrades(opts: ListenerDeps): UpgradeAcceptor {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: mqttSubprotocol, maxPayload: wsMaxPayload(opts.gate) });
  const admissions = admissionsBySocket();
  handOver(wss, admissions, opts);
  let closed = false;
  return {
    handleUpgrade(req, socket, head) {
      if (closed) {
        socket.destroy();
        return;
      }
      const admission = opts.gate.admit(socket, req.socket.remoteAddress);
      if (admission === undefined) return;
      admissions.set(req.socket, admission); // NOTE: the socket the request came on (TLS under HTTPS), the one the connection runs on
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    close: () => {
      closed = true;
      return new Promise<void>((resolve) => wss.close(() => resolve()));
    },
    destroySockets: () => {
      for (const client of wss.clients) client.terminate();
    },
  };
}

/** Listens for MQTT over TLS (key and certificate in PEM, TLS 1.2 or later); every admitted socket goes to `handle` once secure. */
export async function listenTls(opts: ListenerDeps & { port: number; host: string; tls: TlsPair }): Promise<SecureListener> {
  const admissions = admissionsByPeer();
  const server = createTlsServer({ ...secureContextOptions(opts.tls), noDelay: true }, (socket) => {
    const admission = admissions.get(socket);
    if (admission === undefined) {
      socket.destroy();
      return;
    }
    handOverStream(admission, socket, opts.handle);
  });
  server.on('connection', (raw: Socket) => {
    const admission = opts.gate.admit(raw, raw.remoteAddress);
    if (admission !== undefined) admissions.set(raw, admission);
  });
  // NOTE: TLS sockets are tracked from the raw TCP connection, so one that never finishes its handshake is closed too.
  const sockets = trackSockets(server);
  server.on('tlsClientError', (err) => opts.log.debug('mqtt tls handshake failed', { err: err.message }));
  const port = await bind(server, 'mqtt.tls-port', opts.host, opts.port);
  server.on('error', (err) => opts.log.warn('mqtt tls listener error', { err }));
  return {
    port,
    setTlsPair: (pair) => server.setSecureContext(secureContextOptions(pair)),
    close: () => closeServer(server, sockets),
    destroySockets: () => {
      for (const s of sockets) s.destroy();
    },
  };
}
