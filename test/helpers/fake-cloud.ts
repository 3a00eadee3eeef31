// A fake cloud NGSI-LD broker on 127.0.0.1 for federation tests: records every request, answers
// what the test decides (status and body, garbage, or no answer at all), keeps the context source
// registrations it is sent (create, update, delete, as a broker would answer them), and lets a test
// wait for requests (bounded waits only).

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
  /** The context source registrations it holds, by id (as created, then patched). */
  registrations: Map<string, any>; // eslint-disable-line -- test convenience
  /**
   * How requests are answered (default: /csourceRegistrations as a broker answers them, else 204,
   * and [] for GET); undefined from `fn` is the default answer.
   */
  answer(fn: (req: CloudRequest, index: number) => CloudAnswer | undefined): void;
  /** Resolves once `pred` holds of the requests; rejects after `ms`. */
  waitFor(pred: (reqs: CloudRequest[]) => boolean, ms?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

const REGISTRATIONS = '/ngsi-ld/v1/csourceRegistrations';

/** NGSI-LD §5.9.2, §5.9.3, §5.9.5: create (409 when it exists), merge-patch (404 when unknown), delete. */
function answerRegistration(req: CloudRequest, held: Map<string, any>): CloudAnswer | undefined { // eslint-disable-line -- test convenience
  const path = req.path.split('?')[0]!;
  if (path === REGISTRATIONS && req.method === 'POST') {
    const id = String(req.body?.id);
    if (held.has(id)) return { status: 409, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/AlreadyExists', title: 'Already exists', detail: id } };
    held.set(id, req.body);
    return { status: 201 };
  }
  if (!path.startsWith(`${REGISTRATIONS}/`)) return undefined;
  const id = decodeURIComponent(path.slice(REGISTRATIONS.length + 1));
  const found = held.get(id);
  const notFound: CloudAnswer = { status: 404, body: { type: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound', title: 'Not found', detail: id } };
  if (found === undefined) return notFound;
  if (req.method === 'PATCH') held.set(id, { ...found, ...req.body });
  else if (req.method === 'DELETE') held.delete(id);
  else if (req.method === 'GET') return { status: 200, body: found };
  return { status: 204 };
}

const defaultAnswer = (req: CloudRequest, held: Map<string, any>): CloudAnswer => // eslint-disable-line -- test convenience
  answerRegistration(req, held) ?? (req.method === 'GET' ? { status: 200, body: [] } : { status: 204 });

export async function startFakeCloud(port = 0): Promise<FakeCloud> {
  const requests: CloudRequest[] = [];
  const registrations = new Map<string, any>(); // eslint-disable-line -- test convenience
  let answerOf: (req: CloudRequest, index: number) => CloudAnswer | undefined = () => undefined;
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    readBody(req, (body) => {
      const r: CloudRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(r);
      const answer = answerOf(r, requests.length - 1) ?? defaultAnswer(r, registrations);
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
    registrations,
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
