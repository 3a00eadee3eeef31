// The sockets of the embedded broker: a TCP listener and an optional WebSocket listener, both
// handing every connection to Aedes, both tracking their sockets so that a stop leaves none open.

import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { Logger } from '../lib/index.js';
import { MqttListenError } from './errors.js';

export type HandleConnection = (stream: Duplex, req?: IncomingMessage) => void;

export interface Listener {
  readonly port: number;
  /** Stops accepting and resolves once every socket is gone; sockets still open are destroyed. */
  close(): Promise<void>;
  /** Destroys every socket still open (those that never finished CONNECT, or stuck writing). */
  destroySockets(): void;
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

/** Listens for MQTT over TCP; every accepted socket goes to `handle`. */
export async function listenTcp(opts: { port: number; host: string; handle: HandleConnection; log: Logger }): Promise<Listener> {
  // NOTE: noDelay: MQTT packets are small; Nagle's algorithm would hold a notification back until
  // the client's delayed ACK (tens of milliseconds).
  const server = createTcpServer({ noDelay: true }, (socket) => opts.handle(socket));
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

/** Listens for MQTT over WebSocket (subprotocol `mqtt`), for browser dashboards. */
export async function listenWebSocket(opts: { port: number; host: string; handle: HandleConnection; log: Logger }): Promise<Listener> {
  const server = createHttpServer((_req, res) => {
    res.writeHead(426, { Upgrade: 'websocket', Connection: 'close', 'Content-Type': 'text/plain' });
    res.end('MQTT over WebSocket only\n');
  });
  const sockets = trackSockets(server);
  const wss = new WebSocketServer({
    server,
    handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : protocols.has('mqttv3.1') ? 'mqttv3.1' : false),
  });
  wss.on('error', (err) => opts.log.warn('mqtt websocket listener error', { err }));
  wss.on('connection', (ws, req) => {
    ws.on('error', (err) => opts.log.debug('mqtt websocket error', { err: err.message }));
    const stream = createWebSocketStream(ws);
    stream.on('error', (err) => opts.log.debug('mqtt websocket stream error', { err: err.message }));
    opts.handle(stream, req);
  });
  const port = await bind(server, 'mqtt.ws-port', opts.host, opts.port);
  return {
    port,
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

/** Listens for MQTT over TLS (key and certificate in PEM); every accepted socket goes to `handle`. */
export async function listenTls(opts: { port: number; host: string; key: Buffer; cert: Buffer; handle: HandleConnection; log: Logger }): Promise<Listener> {
  const server = createTlsServer({ key: opts.key, cert: opts.cert, noDelay: true }, (socket) => opts.handle(socket));
  // NOTE: TLS sockets are tracked from the raw TCP connection, so one that never finishes its handshake is closed too.
  const sockets = trackSockets(server);
  server.on('tlsClientError', (err) => opts.log.debug('mqtt tls handshake failed', { err: err.message }));
  const port = await bind(server, 'mqtt.tls-port', opts.host, opts.port);
  server.on('error', (err) => opts.log.warn('mqtt tls listener error', { err }));
  return {
    port,
    close: () => closeServer(server, sockets),
    destroySockets: () => {
      for (const s of sockets) s.destroy();
    },
  };
}
