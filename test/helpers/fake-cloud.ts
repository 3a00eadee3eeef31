// A fake cloud NGSI-LD broker on 127.0.0.1 for federation tests: records every request, answers
// what the test decides (status and body, garbage, or no answer at all), and lets a test wait for
// requests (bounded waits only).

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './receiver.js';

export interface CloudRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any; // eslint-disable-line -- test convenience: assertions walk arbitrary JSON
}

/** An answer: status and JSON body (or raw text), 'hang' (never answered) or 'reset' (connection destroyed). */
export type CloudAnswer = { status: number; body?: unknown; raw?: string } | 'hang' | 'reset';

export interface FakeCloud {
  url: string;
  port: number;
  requests: CloudRequest[];
  /** How requests are answered (default: 204, and [] for GET). */
  answer(fn: (req: CloudRequest, index: number) => CloudAnswer | undefined): void;
  /** Resolves once `pred` holds of the requests; rejects after `ms`. */
  waitFor(pred: (reqs: CloudRequest[]) => boolean, ms?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

const defaultAnswer = (req: CloudRequest): CloudAnswer => (req.method === 'GET' ? { status: 200, body: [] } : { status: 204 });

export async function startFakeCloud(port = 0): Promise<FakeCloud> {
  const requests: CloudRequest[] = [];
  let answerOf: (req: CloudRequest, index: number) => CloudAnswer | undefined = () => undefined;
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    readBody(req, (body) => {
      const r: CloudRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(r);
      const answer = answerOf(r, requests.length - 1) ?? defaultAnswer(r);
      if (answer === 'hang') hanging.add(res);
      else if (answer === 'reset') req.socket.destroy();
      else if (answer.raw !== undefined) res.writeHead(answer.status, { 'Content-Type': 'text/html' }).end(answer.raw);
      else if (answer.body === undefined) res.writeHead(answer.status).end();
      else res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is an object
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    requests,
    answer(fn) {
      answerOf = fn;
    },
    waitFor(pred, ms = 5_000, what = 'requests') {
      if (pred(requests)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pred(requests)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${requests.length} requests: ${requests.map((r) => `${r.method} ${r.path}`).join(', ')}`));
        }, ms);
        waiters.add(check);
      });
    },
    close: () => new Promise((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Polls `cond` until it holds; rejects after `ms` (a bounded wait on a condition, not a sleep). */
export async function waitUntil(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
