// The drain's HTTP transport against a real server on 127.0.0.1: replies read whole or refused past
// their limit, keep-alive connections reused, a forbidden header character refused before anything
// is sent, and a request that outlives its signal aborted.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpTransport } from '../../src/lib/index.js';

let server: Server;
let base: string;
let connections: number;
let seen: Array<{ method: string; url: string; body: string; headers: IncomingMessage['headers'] }>;
let handler: (req: IncomingMessage, res: ServerResponse, body: string) => void;

beforeEach(async () => {
  connections = 0;
  seen = [];
  handler = (_req, res) => res.writeHead(204).end();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      handler(req, res, body);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request = (over: Partial<Parameters<ReturnType<typeof createHttpTransport>>[1]> = {}) => ({
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}', signal: AbortSignal.timeout(5_000), maxBytes: 1_000, ...over,
});

describe('the federation HTTP transport', () => {
  it('sends method, path, query, headers and body, and reads the reply; connections are kept and reused', async () => {
    handler = (_req, res, body) => res.writeHead(207, { 'Content-Type': 'application/json' }).end(JSON.stringify({ echo: body }));
    const send = createHttpTransport();
    for (let i = 0; i < 3; i++) {
      const reply = await send(`${base}/ngsi-ld/v1/entityOperations/upsert?options=update`, request({ headers: { Link: '<x>', 'NGSILD-Tenant': 't1' } }));
      expect(reply.status).toBe(207);
      expect(JSON.parse(reply.bytes?.toString('utf8') ?? '')).toEqual({ echo: '{"a":1}' });
    }
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual(Array(3).fill(['POST', '/ngsi-ld/v1/entityOperations/upsert?options=update', '{"a":1}']));
    expect(seen[0]?.headers).toMatchObject({ link: '<x>', 'ngsild-tenant': 't1', 'content-length': '7' });
    expect(connections).toBe(1);
  });

  it('answers no bytes for a reply over the limit, and an empty body as empty', async () => {
    handler = (_req, res) => res.writeHead(200).end('x'.repeat(5_000));
    const send = createHttpTransport();
    expect((await send(`${base}/big`, request())).bytes).toBeUndefined();
    handler = (_req, res) => res.writeHead(204).end();
    const { body: _none, ...withoutBody } = request({ method: 'DELETE' });
    expect((await send(`${base}/empty`, withoutBody)).bytes?.length).toBe(0);
  });

  it('refuses a header value with a line break before sending anything', async () => {
    const send = createHttpTransport();
    await expect(send(`${base}/x`, request({ headers: { Authorization: 'Bearer a\r\nX-Injected: 1' } }))).rejects.toThrow();
    expect(seen).toEqual([]);
  });

  it('aborts a request its signal gives up on, and fails on a refused connection', async () => {
    handler = () => undefined; // never answers
    const send = createHttpTransport();
    const signal = AbortSignal.timeout(100);
    await expect(send(`${base}/slow`, request({ signal }))).rejects.toThrow();
    expect(signal.aborted).toBe(true);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(send(`http://127.0.0.1:${port}/`, request())).rejects.toThrow();
  });
});
