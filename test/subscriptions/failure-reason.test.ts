// The short reason a failed notification leaves on its subscription (notification.lastFailureReason):
// a refused connection, over HTTP and MQTT, whatever the wrapping of the sender's error.

import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/lib/index.js';
import { createMqttSender, sendHttp, type MqttSender } from '../../src/subscriptions/index.js';
import { failureReason } from '../../src/subscriptions/failure-reason.js';

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // NOTE: a TCP server's address is an AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let sender: MqttSender | undefined;
afterEach(async () => {
  await sender?.close();
  sender = undefined;
});

describe('the reason of a failed notification', () => {
  it('names a refused connection over HTTP', async () => {
    const port = await closedPort();
    const err = await sendHttp({ uri: `http://127.0.0.1:${port}/n`, headers: {}, body: '{}' }, 2_000).then(() => undefined, (e: unknown) => e);
    expect(failureReason(err)).toBe('connection refused');
  });

  it('names a refused connection over MQTT', async () => {
    const port = await closedPort();
    sender = createMqttSender({ isLocal: () => false, publishLocal: () => Promise.resolve(), connectTimeoutMs: 2_000, log: silentLogger });
    const err = await sender.send(`mqtt://127.0.0.1:${port}/t`, { metadata: {}, body: {} }, { qos: 0, version: 'mqtt3.1.1', timeoutMs: 3_000 })
      .then(() => undefined, (e: unknown) => e);
    expect(failureReason(err)).toBe('connection refused');
  });

  it('keeps a short message as it is, and cuts a long one', () => {
    expect(failureReason(new Error('HTTP 503 Service Unavailable'))).toBe('HTTP 503 Service Unavailable');
    expect(failureReason(new Error('x'.repeat(500)))).toHaveLength(200);
  });
});
