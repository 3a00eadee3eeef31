// The HTTP listener's bounds on slow and numerous clients: header, request and keep-alive timeouts
// and a connection cap, set on Node's server from the server.* options instead of Node's defaults
// (60 s for headers, 300 s for a request, no connection cap).

import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { listenHttp, type HttpListener } from '../../../src/http/listen.js';
import { silentLogger } from '../../../src/lib/index.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { within } from '../../helpers/process.js';

/** A connected socket, its answer so far, and a promise of its close. */
async function open(port: number): Promise<{ socket: Socket; answer: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d) => (answer += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await within(new Promise<void>((r) => socket.once('connect', () => r())), 5_000, 'connect');
  return { socket, answer: () => answer, closed };
}

describe('HTTP listener limits', () => {
  let listener: HttpListener | undefined;
  let b: TestBroker | undefined;
  afterEach(async () => {
    await listener?.close(1_000);
    await b?.close();
    listener = undefined;
    b = undefined;
  });

  it('sets the timeouts and the connection cap on the server', async () => {
    const limits = { headersTimeout: 7_000, requestTimeout: 20_000, keepAliveTimeout: 3_000, maxConnections: 64 };
    // NOTE: the listener does not need the app's env type.
    listener = await listenHttp(new Hono() as never, { port: 0, host: '127.0.0.1', log: silentLogger, limits });
    expect(listener.limits()).toEqual(limits);
  });

  it('answers 408 and closes a connection whose headers do not arrive within server.headers-timeout', async () => {
    b = await startTestBroker({ config: { server: { headersTimeout: 300, requestTimeout: 600 } } });
    const port = await b.broker.listen();
    const slow = await open(port);
    // A request line and one header, then nothing: the headers never end.
    slow.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    await within(slow.closed, 5_000, 'closed by the header timeout');
    expect(slow.answer()).toMatch(/^HTTP\/1\.1 408 /);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });

  it('closes connections beyond server.max-connections at once, and serves again once one ends', async () => {
    b = await startTestBroker({ config: { server: { maxConnections: 2 } } });
    const port = await b.broker.listen();
    const first = await open(port);
    const second = await open(port);
    const third = await open(port);
    await within(third.closed, 5_000, 'the third connection closed');
    expect(third.answer()).toBe('');
    first.socket.destroy();
    await first.closed;
    // The server counts the closed connection down: the next one is served.
    const served = await within((async () => {
      for (;;) {
        const next = await open(port);
        next.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        await next.closed;
        if (next.answer().startsWith('HTTP/1.1 200')) return true;
      }
    })(), 5_000, 'served after one closed');
    expect(served).toBe(true);
    second.socket.destroy();
  });
});
