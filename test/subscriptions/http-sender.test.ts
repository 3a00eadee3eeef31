// The HTTP notification sender: requests of a lane pipelined on one keep-alive connection and
// answered in order, against real receivers on 127.0.0.1 (node's HTTP server, and raw TCP servers
// for answers node would not give: chunked, Connection: close, HTTP/1.0, silence).

import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { sendHttp } from '../../src/subscriptions/http-sender.js';

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

interface Got {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  socket: Socket;
}

/** A node HTTP server on an ephemeral port; `answer` writes each response. */
async function startHttp(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void = (_q, res) => res.writeHead(204).end()):
  Promise<{ url: string; got: Got[] }> {
  const got: Got[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      got.push({ path: req.url ?? '', headers: req.headers, body, socket: req.socket });
      answer(req, res, body);
    });
  });
  await listen(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got }; // NOTE: a listening TCP server's address is an object
}

async function listen(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => {
    (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    server.close(() => resolve());
  }));
}

/**
 * A raw TCP receiver: `reply(index)` is what it writes for the index-th request it reads (undefined:
 * nothing); `closeAfter(index)` ends the connection after that answer.
 */
async function startRaw(reply: (index: number) => string | undefined, closeAfter: (index: number) => boolean = () => false):
  Promise<{ url: string; bodies: string[]; connections: () => number }> {
  const bodies: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    let isClosing = false;
    socket.on('data', (chunk: Buffer) => {
      // Like a server closing a connection: what comes after is never read.
      if (isClosing) return;
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length:\s*(\d+)/i.exec(pending.subarray(0, end).toString('latin1'))?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const index = bodies.length;
        bodies.push(pending.subarray(end + 4, end + 4 + length).toString('utf8'));
        pending = pending.subarray(end + 4 + length);
        const text = reply(index);
        if (text !== undefined) socket.write(text);
        if (closeAfter(index)) {
          isClosing = true;
          socket.end();
          return;
        }
      }
    });
  });
  await listen(server);
  closers.push(async () => {
    for (const s of sockets) s.destroy();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, connections: () => connections }; // NOTE: a listening TCP server's address is an object
}

let laneCount = 0;
const newLane = (): string => `lane-${++laneCount}`;
const outcome = (p: Promise<void>): Promise<string> => p.then(() => 'ok', (err: Error) => err.message);

describe('the HTTP notification sender', () => {
  it('pipelines the requests of a lane on one connection, answered and received in order', async () => {
    const receiver = await startHttp((_req, res, body) => {
      // Answers out of step with the arrivals: order must come from the connection, not timing.
      setImmediate(() => res.writeHead(Number(body) % 2 === 0 ? 204 : 200, { 'Content-Length': '2' }).end('ok'));
    });
    const lane = newLane();
    const sends = Array.from({ length: 200 }, (_, i) => sendHttp({ uri: `${receiver.url}/notify?x=1`, headers: JSON_HEADERS, body: String(i), lane }, 5_000));
    await Promise.all(sends);
    expect(receiver.got.map((g) => Number(g.body))).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(new Set(receiver.got.map((g) => g.socket)).size).toBe(1);
    expect(receiver.got[0]).toMatchObject({ path: '/notify?x=1', headers: { 'content-type': 'application/json', 'content-length': '1' } });
  });

  it('reads answers with chunked bodies, bodies of a given length and interim 100 answers', async () => {
    const answers = [
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Trailer: t\r\n\r\n',
      'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nnope',
      'HTTP/1.1 204 No Content\r\n\r\n',
    ];
    const receiver = await startRaw((i) => answers[i]);
    const lane = newLane();
    const results = await Promise.all(answers.map((_, i) => outcome(sendHttp({ uri: receiver.url, headers: JSON_HEADERS, body: `{"n":${i}}`, lane }, 5_000))));
    expect(results).toEqual(['ok', 'ok', 'ok', 'HTTP 500 Internal Server Error', 'ok']);
    expect(receiver.connections()).toBe(1);
  });

  it('sends again, on a new connection, what a receiver closing after each answer left unanswered', async () => {
    // HTTP/1.0 without keep-alive, then Connection: close: each answer ends its connection.
    const receiver = await startRaw(
      (i) => (i % 2 === 0 ? 'HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n' : 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
      () => true,
    );
    const lane = newLane();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => outcome(sendHttp({ uri: receiver.url, headers: JSON_HEADERS, body: String(i), lane }, 5_000))));
    expect(results).toEqual(Array(6).fill('ok'));
    // Each request once, in order: after the first close the lane no longer pipelines.
    expect(receiver.bodies).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  it('takes an answer whose body runs to the close of the connection', async () => {
    const receiver = await startRaw(() => 'HTTP/1.1 202 Accepted\r\n\r\nbody until the close', () => true);
    expect(await outcome(sendHttp({ uri: receiver.url, headers: JSON_HEADERS, body: '{}', lane: newLane() }, 5_000))).toBe('ok');
  });

  it('reconnects once a receiver has closed an idle keep-alive connection', async () => {
    const receiver = await startRaw(() => 'HTTP/1.1 204 No Content\r\n\r\n', (i) => i === 0);
    const lane = newLane();
    expect(await outcome(sendHttp({ uri: receiver.url, headers: JSON_HEADERS, body: '1', lane }, 5_000))).toBe('ok');
    expect(await outcome(sendHttp({ uri: receiver.url, headers: JSON_HEADERS, body: '2', lane }, 5_000))).toBe('ok');
    expect(receiver.bodies).toEqual(['1', '2']);
    expect(receiver.connections()).toBe(2);
  });

  it('fails on an unreachable endpoint, a silent one (its timeout) and garbage', async () => {
    const closed = await startRaw(() => undefined);
    const port = new URL(closed.url).port;
    await closers.shift()!();
    expect(await outcome(sendHttp({ uri: `http://127.0.0.1:${port}/n`, headers: JSON_HEADERS, body: '{}', lane: newLane() }, 5_000)))
      .toMatch(/^cannot reach the endpoint: .*ECONNREFUSED/);
    const silent = await startRaw(() => undefined);
    const lane = newLane();
    const [first, second] = await Promise.all([1, 2].map((n) => outcome(sendHttp({ uri: silent.url, headers: JSON_HEADERS, body: String(n), lane }, 100))));
    expect(first).toBe('timeout after 100 ms');
    expect(second).toBe('the connection was given up after a timeout');
    const garbage = await startRaw(() => 'SSH-2.0-OpenSSH\r\n\r\n');
    expect(await outcome(sendHttp({ uri: garbage.url, headers: JSON_HEADERS, body: '{}', lane: newLane() }, 5_000))).toBe('the endpoint did not answer in HTTP/1.x');
  });

  it('sends the credentials of the URI as Basic authorization, unless receiverInfo gives one', async () => {
    const receiver = await startHttp();
    const { host } = new URL(receiver.url);
    await sendHttp({ uri: `http://al%40ice:s%3Acret@${host}/n`, headers: JSON_HEADERS, body: '{}' }, 5_000);
    await sendHttp({ uri: `http://alice:secret@${host}/n`, headers: { ...JSON_HEADERS, authorization: 'Bearer t' }, body: '{}' }, 5_000);
    expect(receiver.got[0]!.headers.authorization).toBe(`Basic ${Buffer.from('al@ice:s:cret').toString('base64')}`);
    expect(receiver.got[1]!.headers.authorization).toBe('Bearer t');
    expect(receiver.got[0]!.headers.host).toBe(host);
  });

  it('refuses header names and values that would break the request, and what is not an HTTP URL', async () => {
    const receiver = await startHttp();
    expect(await outcome(sendHttp({ uri: receiver.url, headers: { 'X-A': 'a\r\nX-Injected: 1' }, body: '{}' }, 5_000))).toMatch(/not a valid value for header X-A/);
    expect(await outcome(sendHttp({ uri: receiver.url, headers: { 'X A': 'a' }, body: '{}' }, 5_000))).toMatch(/not a valid header name/);
    expect(await outcome(sendHttp({ uri: 'ftp://127.0.0.1/x', headers: {}, body: '{}' }, 5_000))).toMatch(/not an HTTP URL/);
    expect(await outcome(sendHttp({ uri: 'not a uri', headers: {}, body: '{}' }, 5_000))).toMatch(/not a URL/);
    expect(receiver.got).toHaveLength(0);
  });

  it('verifies the certificate of an https receiver', async () => {
    const server = createHttpsServer({ key: readFileSync('test/fixtures/tls/key.pem'), cert: readFileSync('test/fixtures/tls/cert.pem') },
      (_req, res) => res.writeHead(204).end());
    await listen(server);
    const port = (server.address() as AddressInfo).port; // NOTE: a listening TCP server's address is an object
    expect(await outcome(sendHttp({ uri: `https://127.0.0.1:${port}/n`, headers: JSON_HEADERS, body: '{}', lane: newLane() }, 5_000)))
      .toMatch(/^cannot reach the endpoint: .*(self[- ]signed|certificate|IP)/i);
  });
});
