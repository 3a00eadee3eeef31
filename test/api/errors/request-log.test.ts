// A request log line of an error answer says why: the ProblemDetails type and title beside the status.

import { describe, expect, it } from 'vitest';
import { createFixedClock, createLogger } from '../../../src/lib/index.js';
import { createBroker } from '../../../src/server.js';
import { T0, testConfig } from '../../helpers/broker.js';

describe('request log lines', () => {
  it('carry the error type and title of 4xx answers, and none for successes', async () => {
    const lines: string[] = [];
    const log = createLogger('info', 'edgeld', (line) => lines.push(line));
    const broker = createBroker({ config: testConfig(), log, clock: createFixedClock(T0), dbPath: ':memory:' });
    try {
      await broker.app.request('http://127.0.0.1/ngsi-ld/v1/entities?foo=1');
      await broker.app.request('http://127.0.0.1/ngsi-ld/v1/entities/urn:x:missing');
      await broker.app.request('http://127.0.0.1/nowhere');
      await broker.app.request('http://127.0.0.1/health');
      const requests = lines.join('\n').split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(requests.map((r) => [r['status'], r['type'], r['title']])).toEqual([
        [400, 'InvalidRequest', "Unknown query parameter 'foo'"],
        [404, 'ResourceNotFound', 'Entity not found'],
        [404, 'ResourceNotFound', 'No such resource'],
        [200, undefined, undefined],
      ]);
    } finally {
      await broker.close();
    }
  });

  it('carry the request id: the client\'s when it sends a plain one, else a drawn one', async () => {
    const lines: string[] = [];
    const log = createLogger('info', 'edgeld', (line) => lines.push(line));
    const broker = createBroker({ config: testConfig(), log, clock: createFixedClock(T0), dbPath: ':memory:' });
    try {
      await broker.app.request('http://127.0.0.1/health', { headers: { 'X-Request-Id': 'probe-42' } });
      await broker.app.request('http://127.0.0.1/health', { headers: { 'X-Request-Id': 'not plain\u0001' } });
      const ids = lines.filter((l) => l.includes('"msg":"request"')).map((l) => (JSON.parse(l) as { requestId: string }).requestId);
      expect(ids[0]).toBe('probe-42');
      expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await broker.close();
    }
  });
});
