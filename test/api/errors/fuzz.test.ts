// Property-based fuzzing of the HTTP API: whatever the method, path, query string, headers and
// body, the broker never answers 5xx, every error is a ProblemDetails body, and it stays healthy.
// Two 5xx are the specified answers to a request, not faults: 501 NotImplemented for a known NGSI-LD
// parameter edgeld does not implement, and 503 LdContextNotAvailable for a context it cannot load
// (remote contexts are off here).
// FUZZ_RUNS sets the number of requests (default 9,000 in CI: 6,000 of any kind and 3,000 aimed at the
// query parsers; scripts/faults.mjs --long runs 1,000,000); a failure prints fast-check's seed.

import fc from 'fast-check';
import { fuzzRuns } from '../../helpers/fuzz-runs.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { fuzzQueryRequest, fuzzRequest, SEED_IDS, type FuzzRequest } from '../../helpers/fuzz-requests.js';

const RUNS = fuzzRuns(9_000);
const QUERY_RUNS = Math.round(RUNS / 3);
const ANY_RUNS = RUNS - QUERY_RUNS;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';

let b: TestBroker;
beforeAll(async () => {
  // Remote contexts off: a fuzzed Link header must not reach the network.
  b = await startTestBroker({ config: { contexts: { allowRemote: false, allowedHosts: '' } } });
  for (const [i, id] of SEED_IDS.entries()) {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { body: {
      id, type: id.includes('Room') ? 'Room' : 'Sensor',
      temperature: { type: 'Property', value: 20 + i, observedAt: '2026-01-01T00:00:00Z' },
      name: { type: 'Property', value: `n${i}` },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.4 + i, 52.5] } },
      scope: '/A/B',
    } });
    expect(res.status).toBe(201);
  }
});
afterAll(() => b.close());

async function send(r: FuzzRequest): Promise<{ status: number; type: string | null; text: string }> {
  const res = await b.broker.app.request(`http://127.0.0.1${r.path}`, {
    method: r.method, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}),
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** Sends one request and checks the answer: no 5xx but the specified ones, every error a ProblemDetails. */
async function check(r: FuzzRequest): Promise<void> {
  const res = await send(r);
  // A HEAD answer has no body to tell which error it is: its GET twin is fuzzed too.
  const head = r.method === 'HEAD';
  const specified = (res.status === 501 && (head || res.text.includes(`"type":"${ERR}NotImplemented"`)))
    || (res.status === 503 && (head || res.text.includes(`"type":"${ERR}LdContextNotAvailable"`)));
  if (!specified) expect(res.status, `${r.method} ${r.path}: ${res.text}`).toBeLessThan(500);
  if (res.status >= 400 && r.method !== 'HEAD') {
    expect(res.type, `${r.method} ${r.path}`).toContain('application/json');
    const problem = JSON.parse(res.text) as Record<string, unknown>;
    expect(String(problem['type'])).toMatch(new RegExp(`^${ERR}[A-Za-z]+$`));
    expect(typeof problem['title']).toBe('string');
    expect(problem['status']).toBe(res.status);
  }
}

describe('fuzzed requests', () => {
  it(`never answer 5xx, and every error is ProblemDetails (${ANY_RUNS} requests)`, async () => {
    let sent = 0;
    await fc.assert(fc.asyncProperty(fuzzRequest, async (r) => {
      await check(r);
      sent++;
      if (sent % 250 === 0) expect((await b.request('GET', '/health')).status).toBe(200);
    }), { numRuns: ANY_RUNS });
    expect((await b.request('GET', '/health')).status).toBe(200);
  }, 60_000 + RUNS * 5);

  it(`q, geo-query, temporal and pagination parameters together: no 5xx, errors are ProblemDetails (${QUERY_RUNS} requests)`, async () => {
    await fc.assert(fc.asyncProperty(fuzzQueryRequest, check), { numRuns: QUERY_RUNS });
    expect((await b.request('GET', '/health')).status).toBe(200);
  }, 60_000 + RUNS * 5);
});
