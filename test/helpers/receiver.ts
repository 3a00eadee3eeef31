// A notification receiver on 127.0.0.1: records every request (headers and JSON body), answers
// with a status a test can change, and lets a test wait for a number of requests (bounded).

import { gunzipSync } from 'node:zlib';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The body of a request: JSON when it parses, else its text; undefined when empty. */
export function readBody(req: IncomingMessage, onBody: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    // A gzip request body (Content-Encoding gzip, as a gateway compressing its uplink sends) is read inflated.
    const bytes = Buffer.concat(chunks);
    const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    onBody(body);
  });
}

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any; // eslint-disable-line -- test convenience: assertions walk arbitrary JSON
  /** The status this request was answered with. */
  status: number;
}

export interface Receiver {
  url(path?: string): string;
  port: number;
  received: Received[];
  /** Requests answered 2xx. */
  accepted(): Received[];
  /** The status the next requests get (a function of the request's index for sequences). */
  respondWith(status: number | ((index: number) => number)): void;
  /** Resolves once `count` requests matching `filter` arrived; rejects after `ms`. */
  waitFor(count: number, opts?: { ms?: number; accepted?: boolean }): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  let respond: (index: number) => number = () => 200;
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    readBody(req, (body) => {
      const status = respond(received.length);
      received.push({ path: req.url ?? '', headers: req.headers, body, status });
      res.writeHead(status).end();
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is an object
  const accepted = (): Received[] => received.filter((r) => r.status >= 200 && r.status < 300);
  return {
    port: bound,
    url: (path = '/notify') => `http://127.0.0.1:${bound}${path}`,
    received,
    accepted,
    respondWith(status) {
      respond = typeof status === 'number' ? () => status : status;
    },
    waitFor(count, opts = {}) {
      const list = (): Received[] => (opts.accepted ? accepted() : received);
      if (list().length >= count) return Promise.resolve(list());
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (list().length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(list());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`received ${list().length} of ${count} notifications`));
        }, opts.ms ?? 5_000);
        waiters.add(check);
      });
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
