// The HTTP listener: serves the Hono app on Node's http server (https when given a key and
// certificate, whose pair can be replaced while it serves), answers what Node's parser refuses
// with ProblemDetails, hands WebSocket upgrades of one path over (MQTT for the dashboard), bounds
// slow and numerous clients (header, request and keep-alive timeouts, a connection cap), and closes
// with a drain that ends keep-alive connections after their request.

import { serve, type ServerType } from '@hono/node-server';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  InvalidRequestError, NotImplementedError, RequestHeaderFieldsTooLargeError, RequestTimeoutError, type NgsiError,
} from '../ngsi/index.js';
import { secureContextOptions, type Logger, type TlsPair } from '../lib/index.js';
import type { App } from './app-env.js';
import { problemOf } from './problem.js';

/** Bounds on slow and numerous clients (server.headers-timeout and the like). */
export interface HttpServerLimits {
  /** Milliseconds to receive a request line and headers (Node's default: 60 s). */
  headersTimeout: number;
  /** Milliseconds to receive a whole request (Node's default: 300 s). */
  requestTimeout: number;
  /** Milliseconds an idle keep-alive connection stays open. */
  keepAliveTimeout: number;
  /** Most open connections; further ones are closed at once (Node's default: no limit). */
  maxConnections: number;
}

/** How often Node looks for requests past their timeouts, at most (its default, 30 s, would stretch them). */
const MAX_TIMEOUT_CHECK_MS = 1_000;

export interface HttpListener {
  port: number;
  /** The bounds in force, read back from the server. */
  limits(): HttpServerLimits;
  /** HTTPS: new connections get this key and certificate; open ones keep theirs. Throws on a plain listener. */
  setTlsPair(pair: TlsPair): void;
  /**
   * Stops accepting; every response from now on carries `Connection: close` and each connection
   * closes after its in-flight request; what is still open after `timeoutMs` is dropped.
   */
  close(timeoutMs: number): Promise<void>;
}

/** Upgrade requests (WebSocket) to one path, handed over with their socket; other paths get 404. */
export interface UpgradeHandler {
  path: string;
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** Node's parser errors (llhttp codes) as the NGSI-LD error each one is answered with. */
function parserError(err: Error & { code?: string }): NgsiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new RequestHeaderFieldsTooLargeError('Request headers too large', 'The request line and headers may take 16 KiB at most');
    case 'HPE_INVALID_METHOD':
      return new NotImplementedError('Unknown HTTP method', 'Methods: GET, POST, PUT, PATCH, DELETE');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError('Request timeout', 'The request was not received whole in time');
    default:
      return new InvalidRequestError('Malformed HTTP request', err.code ?? err.message);
  }
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request', 404: 'Not Found', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 501: 'Not Implemented',
};

/** The raw HTTP/1.1 answer to a request Node could not parse: a ProblemDetails body, then close. */
function rawProblemResponse(err: NgsiError): string {
  const body = JSON.stringify(problemOf(err));
  return `HTTP/1.1 ${err.status} ${REASONS[err.status] ?? 'Error'}\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Serves a request that asked for another protocol (`Upgrade: h2c`, as `curl --http2` sends) as the
 * plain HTTP/1.1 request it also is, then closes the connection. NOTE: with an `upgrade` listener,
 * Node hands every request carrying an Upgrade header to it, parser detached and body unread: the
 * request is rebuilt with its body (the bytes after the head, then the socket's up to its
 * Content-Length) and given to the app. A chunked body cannot be read without the parser: 501.
 */
function serveAsHttp(server: ServerType, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const length = Number(req.headers['content-length'] ?? 0);
  if (req.headers['transfer-encoding'] !== undefined || !Number.isSafeInteger(length) || length < 0) {
    socket.end(rawProblemResponse(new NotImplementedError('A chunked request body with an Upgrade header is not supported; send it without Upgrade')));
    return;
  }
  const request = new IncomingMessage(socket as Socket);
  request.method = req.method;
  request.url = req.url;
  request.headers = req.headers;
  request.rawHeaders = req.rawHeaders;
  request.httpVersionMajor = req.httpVersionMajor;
  request.httpVersionMinor = req.httpVersionMinor;
  request.httpVersion = req.httpVersion;
  let missing = length;
  const feed = (chunk: Buffer): void => {
    const part = chunk.subarray(0, missing);
    missing -= part.length;
    if (part.length > 0) request.push(part);
    if (missing === 0) {
      socket.off('data', feed);
      request.complete = true;
      request.push(null);
    }
  };
  feed(head);
  if (missing > 0) socket.on('data', feed);
  const res = new ServerResponse(request);
  res.assignSocket(socket as Socket);
  res.shouldKeepAlive = false;
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  server.emit('request', request, res);
}

/** The path of a request target (`/mqtt?x` → `/mqtt`). */
const pathOf = (url: string | undefined): string => (url ?? '').split('?')[0] ?? '';

/** Sets the bounds on Node's server (each a public property of http.Server). */
function applyLimits(server: ServerType, limits: HttpServerLimits): void {
  if (!('headersTimeout' in server)) return;
  server.headersTimeout = limits.headersTimeout;
  server.requestTimeout = limits.requestTimeout;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  server.maxConnections = limits.maxConnections;
}

function limitsOf(server: ServerType): HttpServerLimits {
  if (!('headersTimeout' in server)) throw new Error('not a node:http server');
  const { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections } = server;
  return { headersTimeout, requestTimeout, keepAliveTimeout, maxConnections };
}

/** Node's server for the app: http, or https with the pair (a handshake is bounded like the headers). */
function createServer(app: App, opts: ListenOptions): { server: ServerType; https: HttpsServer | undefined; ready: Promise<AddressInfo> } {
  const { limits } = opts;
  // NOTE: the timeouts are enforced when Node checks its connections, so they are checked often enough to matter.
  const serverOptions = {
    headersTimeout: limits.headersTimeout, requestTimeout: limits.requestTimeout, keepAliveTimeout: limits.keepAliveTimeout,
    connectionsCheckingInterval: Math.max(50, Math.min(MAX_TIMEOUT_CHECK_MS, Math.floor(limits.headersTimeout / 4))),
  };
  let onListening: (info: AddressInfo) => void = () => {};
  const ready = new Promise<AddressInfo>((resolve) => {
    onListening = resolve;
  });
  const base = { fetch: app.fetch, port: opts.port, hostname: opts.host };
  if (opts.tls === undefined) return { server: serve({ ...base, serverOptions }, onListening), https: undefined, ready };
  // NOTE: Node counts the header timeout from the end of the handshake: a client that never finishes
  // one would hold its connection for the TLS default (120 s) instead.
  const tlsOptions = { ...serverOptions, ...secureContextOptions(opts.tls), handshakeTimeout: limits.headersTimeout };
  const server = serve({ ...base, createServer: createHttpsServer, serverOptions: tlsOptions }, onListening);
  const https = server as HttpsServer; // NOTE: made by createHttpsServer just above
  https.on('tlsClientError', (err: Error & { code?: string }) => opts.log.debug('https handshake failed', { code: err.code, err: err.message }));
  return { server, https, ready };
}

interface ListenOptions {
  port: number;
  host: string;
  log: Logger;
  limits: HttpServerLimits;
  upgrade?: UpgradeHandler;
  /** Serve HTTPS with this key and certificate (TLS 1.2 or later). */
  tls?: TlsPair;
}

export function listenHttp(app: App, opts: ListenOptions): Promise<HttpListener> {
  return new Promise((resolve, reject) => {
    let closing = false;
    const open = new Set<ServerResponse>();
    // Upgraded connections (WebSocket) are no longer HTTP: the server would wait for them to end.
    const upgraded = new Set<Duplex>();
    const onError = (err: unknown): void => reject(err);
    const { server, https, ready } = createServer(app, opts);
    void ready.then((info) => {
      const s = server;
      s.off('error', onError);
      resolve({
        port: info.port,
        limits: () => limitsOf(s),
        setTlsPair: (pair) => {
          if (https === undefined) throw new Error('the HTTP listener serves plain HTTP');
          https.setSecureContext(secureContextOptions(pair));
        },
        close: (timeoutMs) => new Promise<void>((done) => {
          closing = true;
          for (const socket of upgraded) socket.destroy();
          // In-flight responses not yet started end their connection too.
          for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
          const timer = setTimeout(() => {
            opts.log.warn('shutdown timeout: closing remaining connections');
            if ('closeAllConnections' in s) s.closeAllConnections();
            done();
          }, timeoutMs);
          timer.unref();
          s.close(() => {
            clearTimeout(timer);
            done();
          });
          if ('closeIdleConnections' in s) s.closeIdleConnections();
        }),
      });
    });
    applyLimits(server, opts.limits);
    // NOTE: runs after the app's listener has started the request, before any response is written
    // (the app answers asynchronously): once closing, the response says `Connection: close` and Node
    // closes the connection after it, so keep-alive clients cannot keep a draining broker busy.
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      if (closing) {
        res.shouldKeepAlive = false;
        return;
      }
      open.add(res);
      res.once('close', () => open.delete(res));
    });
    server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      const problem = parserError(err);
      opts.log.info('request refused by the HTTP parser', { status: problem.status, type: problem.errorType, code: err.code });
      socket.end(rawProblemResponse(problem));
    });
    const { upgrade } = opts;
    if (upgrade) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        socket.on('error', () => socket.destroy());
        if (closing) {
          socket.destroy();
          return;
        }
        if (pathOf(req.url) !== upgrade.path || String(req.headers.upgrade).toLowerCase() !== 'websocket') {
          serveAsHttp(server, req, socket, head);
          return;
        }
        upgraded.add(socket);
        socket.once('close', () => upgraded.delete(socket));
        upgrade.handle(req, socket, head);
      });
    }
    server.once('error', onError);
  });
}
