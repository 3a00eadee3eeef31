// A q or idPattern regular expression that backtracks catastrophically must neither freeze the
// broker nor answer wrongly: both the SQL translation and the in-memory evaluation use the
// linear-time engine, and the HTTP server keeps answering meanwhile.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/entities';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const long = `${'a'.repeat(40_000)}!`;
const idOf = (n: number) => `urn:ngsi-ld:T:${'a'.repeat(40)}${n}`;

let b: TestBroker;
let port: number;
beforeAll(async () => {
  b = await startTestBroker();
  for (const [i, name] of [[1, long], [2, 'aaaa']] as const) {
    expect((await b.request('POST', P, { body: { id: idOf(i), type: 'T', name: { type: 'Property', value: name } } })).status).toBe(201);
  }
  port = await b.broker.listen();
});
afterAll(() => b.close());

describe('catastrophic patterns', () => {
  it('q ~= over a long value answers the right entities', async () => {
    const res = await b.request('GET', `${P}?type=T&q=${encodeURIComponent('name~="^(a+)+$"')}`);
    expect(res.status).toBe(200);
    expect(res.json.map((e: { id: string }) => e.id)).toEqual([idOf(2)]);
  });

  it('idPattern with nested quantifiers answers the right entities', async () => {
    const res = await b.request('GET', `${P}?type=T&idPattern=${encodeURIComponent('^urn:ngsi-ld:T:(a|aa)+2$')}`);
    expect(res.status).toBe(200);
    expect(res.json.map((e: { id: string }) => e.id)).toEqual([idOf(2)]);
  });

  it('the POST query (other path) and a concurrent /health are both answered', async () => {
    const base = `http://127.0.0.1:${port}`;
    const query = fetch(`${base}/ngsi-ld/v1/entityOperations/query`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'Query', entities: [{ type: 'T', idPattern: '^(u|ur|urn|:|n|g|s|i|-|l|T|a)+$' }], q: 'name~="(a*)*b"' }),
    });
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    const res = await query;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
  });

  it('a pattern the engine cannot run in linear time is 400 BadRequestData, not a slow match', async () => {
    for (const q of [`q=${encodeURIComponent('name~="(a)\\1"')}`, `idPattern=${encodeURIComponent('(?=a)')}`]) {
      const res = await b.request('GET', `${P}?type=T&${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.type, q).toBe(ERR + 'BadRequestData');
    }
  });
});
