// DELETE /entities by selection (NGSI-LD §5.6.21): by type, id and idPattern, as batch deletes;
// a selection is required, unimplemented selectors answer 501.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/entities';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const REL = 'http://www.w3.org/ns/json-ld#context';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const ids = (t: TestBroker): string[] =>
  t.broker.store.entities.list('', { limit: 100, offset: 0, count: false }).entities.map((e) => e.id).sort();

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker({ config: { batch: { maxSize: 2 } } });
  for (const [id, type] of [['urn:a:1', 'Room'], ['urn:a:2', 'Room'], ['urn:a:3', 'Room'], ['urn:b:1', 'Sensor'], ['urn:b:2', 'Sensor']]) {
    expect((await b.request('POST', P, { body: { id, type } })).status).toBe(201);
  }
});
afterEach(() => b.close());

describe('DELETE /entities', () => {
  it('204 and deletes every entity of the type, over several rounds', async () => {
    const res = await b.request('DELETE', `${P}?type=Room`);
    expect(res.status).toBe(204);
    expect(ids(b)).toEqual(['urn:b:1', 'urn:b:2']);
  });

  it('accepts the type as an expanded IRI', async () => {
    const link = `<${CORE}>; rel="${REL}"`;
    expect((await b.request('DELETE', `${P}?type=https://uri.etsi.org/ngsi-ld/default-context/Sensor`, { headers: { Link: link } })).status).toBe(204);
    expect(ids(b)).toEqual(['urn:a:1', 'urn:a:2', 'urn:a:3']);
  });

  it('narrows by id and idPattern', async () => {
    expect((await b.request('DELETE', `${P}?type=Room&id=urn:a:1,urn:b:1`)).status).toBe(204);
    expect(ids(b)).toEqual(['urn:a:2', 'urn:a:3', 'urn:b:1', 'urn:b:2']);
    expect((await b.request('DELETE', `${P}?idPattern=${encodeURIComponent('^urn:b:')}`)).status).toBe(204);
    expect(ids(b)).toEqual(['urn:a:2', 'urn:a:3']);
  });

  it('204 when nothing matches', async () => {
    expect((await b.request('DELETE', `${P}?type=Nothing`)).status).toBe(204);
    expect(ids(b)).toHaveLength(5);
  });

  it('400 without a selection, for a bad id and for a bad idPattern', async () => {
    for (const q of ['', '?id=not%20a%20uri', '?idPattern=(', '?type=A;B', '?foo=1']) {
      const res = await b.request('DELETE', `${P}${q}`);
      expect(res.status, q).toBe(400);
    }
    expect(ids(b)).toHaveLength(5);
  });

  it('501 NotImplemented for q, attrs and geo selectors', async () => {
    for (const q of ['?type=Room&q=a==1', '?attrs=temperature', '?georel=near']) {
      const res = await b.request('DELETE', `${P}${q}`);
      expect(res.status, q).toBe(501);
      expect(res.json.type).toBe(ERR + 'NotImplemented');
    }
    expect(ids(b)).toHaveLength(5);
  });
});
