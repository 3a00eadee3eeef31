// The HTTP listener: serves the Hono app on Node's http server and closes it with a drain.

import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../lib/index.js';
import type { App } from './app.js';

export interface HttpListener {
  port: number;
  /** Stops accepting, waits for in-flight requests (at most `timeoutMs`), then drops the rest. */
  close(timeoutMs: number): Promise<void>;
}

export function listenHttp(app: App, opts: { port: number; host: string; log: Logger }): Promise<HttpListener> {
  return new Promise((resolve, reject) => {
    let server: ServerType | undefined;
    const onError = (err: unknown): void => reject(err);
    server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host }, (info: AddressInfo) => {
      const s = server!;
      s.off('error', onError);
      resolve({
        port: info.port,
        close: (timeoutMs) => new Promise<void>((done) => {
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
    server.once('error', onError);
  });
}
