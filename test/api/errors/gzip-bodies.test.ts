// Request bodies with Content-Encoding (RFC 9110 §8.4): gzip is inflated within the body limit
// (a body that would inflate past it is refused with 413 as it inflates), a broken one is 400, and
// any other coding is 415; every refusal is a ProblemDetails and writes nothing.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { readResponse, startTestBroker, type TestBroker, type TestResponse } from '../../helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const ENTITIES = '/ngsi-ld/v1/entities';

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker({ config: { http: { bodyLimit: 4_096 } } });
});
afterEach(() => b.close());

async function send(path: string, body: Uint8Array | string, encoding: string | undefined): Promise<TestResponse> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (encoding !== undefined) headers['Content-Encoding'] = encoding;
  return readResponse(await b.broker.app.request(`http://127.0.0.1${path}`, { method: 'POST', headers, body }));
}

const sensor = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: 'Sensor', temperature: { type: 'Property', value: 21.5 }, ...extra });

describe('Content-Encoding of request bodies', () => {
  it('a gzip body is inflated: the entity it holds is created as the plain body would be', async () => {
    const res = await send(ENTITIES, gzipSync(JSON.stringify(sensor('urn:ngsi-ld:Sensor:g1'))), 'gzip');
    expect(res.status).toBe(201);
    const got = await b.request('GET', `${ENTITIES}/urn:ngsi-ld:Sensor:g1`);
    expect(got.json).toMatchObject({ id: 'urn:ngsi-ld:Sensor:g1', type: 'Sensor', temperature: { type: 'Property', value: 21.5 } });
  });

  it('x-gzip, a coding name in capitals and identity around it are taken as gzip', async () => {
    expect((await send(ENTITIES, gzipSync(JSON.stringify(sensor('urn:ngsi-ld:Sensor:g2'))), 'X-GZIP')).status).toBe(201);
    expect((await send(ENTITIES, gzipSync(JSON.stringify(sensor('urn:ngsi-ld:Sensor:g3'))), 'identity, Gzip')).status).toBe(201);
    expect((await send(ENTITIES, JSON.stringify(sensor('urn:ngsi-ld:Sensor:g4')), 'identity')).status).toBe(201);
  });

  it('a gzip batch is inflated and every entity of it written', async () => {
    const batch = Array.from({ length: 20 }, (_, i) => sensor(`urn:ngsi-ld:Sensor:b${i}`));
    const res = await send('/ngsi-ld/v1/entityOperations/upsert', gzipSync(JSON.stringify(batch)), 'gzip');
    expect(res.status).toBe(201);
    const list = await b.request('GET', `${ENTITIES}?type=Sensor&limit=100`);
    expect((list.json as unknown[]).length).toBe(20);
  });

  it('413 for a small gzip body that inflates past the body limit, and nothing is written', async () => {
    // 4 KiB is the limit: 200 KB of spaces compress to a few hundred bytes.
    const bomb = gzipSync(JSON.stringify(sensor('urn:ngsi-ld:Sensor:bomb', { note: { type: 'Property', value: ' '.repeat(200_000) } })));
    expect(bomb.length).toBeLessThan(4_096);
    const res = await send(ENTITIES, bomb, 'gzip');
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ type: `${ERR}PayloadTooLarge`, status: 413 });
    expect((await b.request('GET', `${ENTITIES}/urn:ngsi-ld:Sensor:bomb`)).status).toBe(404);
  });

  it('413 for a compressed body itself over the limit', async () => {
    const random = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 251));
    const res = await send(ENTITIES, gzipSync(random), 'gzip');
    expect(res.status).toBe(413);
  });

  it('400 for a body that is not gzip though it says so, and for JSON that is not valid once inflated', async () => {
    const notGzip = await send(ENTITIES, JSON.stringify(sensor('urn:ngsi-ld:Sensor:x')), 'gzip');
    expect(notGzip.status).toBe(400);
    expect(notGzip.json).toMatchObject({ type: `${ERR}InvalidRequest`, title: 'Malformed gzip body' });
    const truncated = gzipSync(JSON.stringify(sensor('urn:ngsi-ld:Sensor:y')));
    expect((await send(ENTITIES, truncated.subarray(0, truncated.length - 8), 'gzip')).status).toBe(400);
    const badJson = await send(ENTITIES, gzipSync('{"id": '), 'gzip');
    expect(badJson.status).toBe(400);
    expect(badJson.json).toMatchObject({ type: `${ERR}InvalidRequest`, title: 'Malformed JSON body' });
  });

  it('415 for a coding other than gzip, and for two codings in a row', async () => {
    for (const coding of ['br', 'deflate', 'gzip, gzip', 'compress']) {
      const res = await send(ENTITIES, gzipSync(JSON.stringify(sensor('urn:ngsi-ld:Sensor:z'))), coding);
      expect(res.status, coding).toBe(415);
      expect(res.json).toMatchObject({ type: `${ERR}UnsupportedMediaType`, title: 'Unsupported Content-Encoding' });
    }
    expect((await b.request('GET', `${ENTITIES}/urn:ngsi-ld:Sensor:z`)).status).toBe(404);
  });
});
