// The HTTP server itself: what Node's parser refuses is answered with ProblemDetails, a body over
// the limit is read before its 413 so that the client receives it, and a closing listener ends each
// keep-alive connection after its in-flight request with Connection: close.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { request, Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { listenHttp } from '../../../src/http/listen.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { within } from '../../helpers/process.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';

/** Sends raw bytes and resolves with everything the server answered before closing. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

function bodyOf(answer: string): Record<string, unknown> {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('requests the HTTP parser refuses', () => {
  let b: TestBroker;
  let port: number;
  beforeEach(async () => {
    b = await startTestBroker();
    port = await b.broker.listen();
  });
  afterEach(() => b.close());

  it('431 with a ProblemDetails body for a URL over 16 KiB', async () => {
    const answer = await raw(port, `GET /ngsi-ld/v1/entities?type=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(answer)).toMatchObject({ type: ERR + 'RequestHeaderFieldsTooLarge', status: 431 });
  });

  it('501 with a ProblemDetails body for an unknown method, 400 for a malformed request', async () => {
    const unknown = await raw(port, 'FOO /ngsi-ld/v1/entities HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(unknown).toMatch(/^HTTP\/1\.1 501 /);
    expect(bodyOf(unknown)).toMatchObject({ type: ERR + 'NotImplemented', status: 501 });
    const malformed = await raw(port, 'GET / HTTP/1.1\r\nHost x\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(malformed)).toMatchObject({ type: ERR + 'InvalidRequest', status: 400 });
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });

  it('a 3 MB body: the 413 comes after the whole body, and the client reads it', async () => {
    const size = 3_000_000;
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let answer = '';
    let reset = false;
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', () => (reset = true));
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(`POST /ngsi-ld/v1/entities HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
    socket.write('a'.repeat(size / 3));
    // An answer now would come while the client still sends: wait a bounded time for none to come.
    const early = await Promise.race([
      new Promise<boolean>((r) => socket.once('data', () => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), 700)),
    ]);
    expect(early).toBe(false);
    socket.write('a'.repeat(size - size / 3));
    await within((async () => { while (!answer.includes('}')) await new Promise((r) => setTimeout(r, 5)); })(), 10_000, '413');
    socket.end();
    await within(ended, 5_000, 'close');
    expect(reset).toBe(false);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(bodyOf(answer)).toMatchObject({ type: ERR + 'PayloadTooLarge', status: 413 });
  });
});

describe('closing the listener', () => {
  it('answers the in-flight request with Connection: close, then closes', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let entered = false;
    const app = new Hono();
    app.get('/slow', async (c) => {
      entered = true;
      await gate;
      return c.text('ok');
    });
    app.get('/fast', (c) => c.text('ok'));
    const quiet = { warn() {}, info() {}, error() {}, debug() {}, child: () => quiet, isEnabled: () => false };
    // NOTE: the app's env type is not needed by the listener; the logger is a silent stand-in.
    const limits = { headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, maxConnections: 100 };
    const listener = await listenHttp(app as never, { port: 0, host: '127.0.0.1', log: quiet as never, limits });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) => new Promise<string | undefined>((resolve, reject) => {
      request(`http://127.0.0.1:${listener.port}${path}`, { agent }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.headers.connection));
      }).once('error', reject).end();
    });
    expect(await get('/fast')).toBe('keep-alive');
    const slow = get('/slow');
    // Until the slow request is in its handler (the gate holds it there): a bounded wait.
    await within((async () => { while (!entered) await new Promise((r) => setTimeout(r, 5)); })(), 5_000, 'in flight');
    const closed = listener.close(5_000);
    release();
    expect(await slow).toBe('close');
    await within(closed, 5_000, 'listener closed');
    agent.destroy();
  });
});
