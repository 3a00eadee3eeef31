// DELETE /entities by selection (NGSI-LD v1.9 §5.6.21 Purge Entities): by type, id, idPattern, q,
// attrs, scopeQ and geo-query, as batch deletes, or only some attributes with drop / keep; a
// selection is required.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const P = '/ngsi-ld/v1/entities';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const REL = 'http://www.w3.org/ns/json-ld#context';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
const ids = (t: TestBroker): string[] =>
  t.broker.store.entities.list({ tenant: '' }, { limit: 100, offset: 0, count: false }).entities.map((e) => e.id).sort();

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
    for (const q of ['', '?id=not%20a%20uri', '?idPattern=(', '?type=A;(', '?foo=1', '?keep=temperature']) {
      const res = await b.request('DELETE', `${P}${q}`);
      expect(res.status, q).toBe(400);
    }
    expect(ids(b)).toHaveLength(5);
  });

  it('selects by q, attrs, scopeQ and a type expression', async () => {
    const body = (id: string, extra: object) => ({ id, type: 'Room', ...extra });
    await b.request('POST', P, { body: body('urn:c:1', { temperature: { type: 'Property', value: 30 }, scope: '/plant/A' }) });
    await b.request('POST', P, { body: body('urn:c:2', { temperature: { type: 'Property', value: 10 } }) });
    expect((await b.request('DELETE', `${P}?q=temperature>20`)).status).toBe(204);
    expect(ids(b)).toContain('urn:c:2');
    expect(ids(b)).not.toContain('urn:c:1');
    expect((await b.request('DELETE', `${P}?attrs=temperature`)).status).toBe(204);
    expect(ids(b)).not.toContain('urn:c:2');
    await b.request('POST', P, { body: body('urn:c:3', { scope: '/plant/B' }) });
    expect((await b.request('DELETE', `${P}?type=Room&scopeQ=/plant/%23`)).status).toBe(204);
    expect(ids(b)).toEqual(['urn:a:1', 'urn:a:2', 'urn:a:3', 'urn:b:1', 'urn:b:2']);
    expect((await b.request('DELETE', `${P}?type=${encodeURIComponent('Room|Sensor')}&local=true`)).status).toBe(204);
    expect(ids(b)).toEqual([]);
  });

  it('drop deletes only the attributes named, keep all but those; the entities stay', async () => {
    const attrs = { a: { type: 'Property', value: 1 }, b: { type: 'Property', value: 2 }, c: { type: 'Property', value: 3 } };
    await b.request('POST', P, { body: { id: 'urn:d:1', type: 'Tank', ...attrs } });
    await b.request('POST', P, { body: { id: 'urn:d:2', type: 'Tank', ...attrs } });
    await b.request('POST', P, { body: { id: 'urn:d:3', type: 'Tank', b: attrs.b } });
    expect((await b.request('DELETE', `${P}?type=Tank&drop=a,c`)).status).toBe(204);
    const names = async (id: string) => Object.keys((await b.request('GET', `${P}/${id}`)).json).filter((k) => k !== 'id' && k !== 'type').sort();
    expect(await names('urn:d:1')).toEqual(['b']);
    expect(await names('urn:d:3')).toEqual(['b']);
    await b.request('POST', `${P}/urn:d:2/attrs`, { body: { a: attrs.a } });
    expect((await b.request('DELETE', `${P}?id=urn:d:2&keep=b`)).status).toBe(204);
    expect(await names('urn:d:2')).toEqual(['b']);
    expect(ids(b)).toEqual(expect.arrayContaining(['urn:d:1', 'urn:d:2', 'urn:d:3']));
  });

  it('400 BadRequestData for keep and drop together, and nothing changes', async () => {
    const res = await b.request('DELETE', `${P}?type=Room&keep=a&drop=b`);
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(ERR + 'BadRequestData');
    expect(ids(b)).toHaveLength(5);
  });
});
