// The plain HTTP port beside HTTPS (server.redirect-port): answers every request with 308 to the same
// host and path over HTTPS on server.port, serves nothing else, and closes each connection after its
// answer. Bounded like the HTTPS listener (header and request timeouts, a connection cap).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../lib/index.js';
import type { HttpServerLimits } from './listen.js';

export interface RedirectListener {
  port: number;
  /** Stops accepting and ends every connection. */
  close(): Promise<void>;
}

/** The redirect port could not be opened; `cause` holds the listen error (EADDRINUSE and the like). */
export class RedirectListenError extends Error {
  override name = 'RedirectListenError';
  constructor(readonly host: string, readonly port: number, cause: unknown) {
    super(`server.redirect-port: cannot listen on ${host}:${port}`, { cause });
  }
}

/** A host name, IPv4 address or bracketed IPv6 address, then an optional port: what a Host header may hold. */
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d*)?$/;

/** The host of the request without its port; the address it came in on when the Host header is absent or odd. */
function hostOf(req: IncomingMessage): string {
  const m = HOST.exec(req.headers.host ?? '');
  if (m?.[1] !== undefined) return m[1];
  const local = req.socket.localAddress ?? '127.0.0.1';
  return local.includes(':') ? `[${local}]` : local;
}

/** `https://<host>[:<port>]<path>`: the path as requested when it is one (origin form), else `/`. */
function httpsLocation(req: IncomingMessage, httpsPort: number): string {
  const target = req.url ?? '/';
  const path = target.startsWith('/') && !target.startsWith('//') ? target : '/';
  return `https://${hostOf(req)}${httpsPort === 443 ? '' : `:${httpsPort}`}${path}`;
}

/** Listens on `port`; every request gets 308 to `httpsPort`. */
export function listenRedirect(opts: { port: number; host: string; httpsPort: number; log: Logger; limits: HttpServerLimits }): Promise<RedirectListener> {
  const { limits } = opts;
  const server = createServer({ headersTimeout: limits.headersTimeout, requestTimeout: limits.requestTimeout }, (req: IncomingMessage, res: ServerResponse) => {
    // NOTE: 308, not 301: the client repeats the method and body (a POST stays a POST) [RFC 9110 §15.4.9].
    res.shouldKeepAlive = false;
    res.writeHead(308, { Location: httpsLocation(req, opts.httpsPort), 'Content-Length': 0 });
    res.end();
  });
  server.maxConnections = limits.maxConnections;
  server.on('clientError', (_err, socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new RedirectListenError(opts.host, opts.port, err));
    server.once('error', onError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onError);
      server.on('error', (err) => opts.log.warn('redirect listener error', { err }));
      resolve({
        port: (server.address() as AddressInfo).port, // NOTE: a listening TCP server's address is an object
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}
