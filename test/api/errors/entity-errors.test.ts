// Every status code and error type that applies to the entity endpoints (behaviour sections 2-3):
// media types, Link headers, unknown parameters, invalid content, missing resources, limits.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const REL = 'http://www.w3.org/ns/json-ld#context';
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
let b: TestBroker;

const entity = (id: string, extra: Record<string, unknown> = {}) => ({
  id, type: 'Room', temperature: { type: 'Property', value: 20 }, ...extra,
});

async function expectProblem(res: { status: number; json: any; headers: Headers }, status: number, type: string): Promise<void> {
  expect(res.status, JSON.stringify(res.json)).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/json');
  expect(res.json.type).toBe(ERR + type);
  expect(res.json.status).toBe(status);
  expect(typeof res.json.title).toBe('string');
  expect(JSON.stringify(res.json)).not.toMatch(/at .*\.ts:\d+/);
}

beforeAll(async () => {
  b = await startTestBroker({ config: { http: { bodyLimit: 4096 } } });
  expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:r1') })).status).toBe(201);
});
afterAll(() => b.close());

describe('media types and contexts', () => {
  it('415 for an unsupported Content-Type', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { raw: JSON.stringify(entity('urn:ngsi-ld:Room:x')), headers: { 'Content-Type': 'text/plain' } });
    await expectProblem(res, 415, 'UnsupportedMediaType');
  });
  it('415 for a missing Content-Type', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { raw: JSON.stringify(entity('urn:ngsi-ld:Room:x')) });
    await expectProblem(res, 415, 'UnsupportedMediaType');
  });
  it('400 BadRequestData for application/json with @context in the body', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { body: { ...entity('urn:ngsi-ld:Room:x'), '@context': CORE } });
    await expectProblem(res, 400, 'BadRequestData');
  });
  it('400 BadRequestData for application/ld+json without @context', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:x'), headers: { 'Content-Type': 'application/ld+json' } });
    await expectProblem(res, 400, 'BadRequestData');
  });
  it('400 BadRequestData for application/ld+json together with a Link header', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', {
      body: { ...entity('urn:ngsi-ld:Room:x'), '@context': CORE },
      headers: { 'Content-Type': 'application/ld+json', Link: `<${CORE}>; rel="${REL}"` },
    });
    await expectProblem(res, 400, 'BadRequestData');
  });
  it('400 BadRequestData for a malformed Link header', async () => {
    for (const linkValue of [`${CORE}; rel="${REL}"`, `<${CORE}>; rel="next"`, `<not a url>; rel="${REL}"`]) {
      const res = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { headers: { Link: linkValue } });
      await expectProblem(res, 400, 'BadRequestData');
    }
  });
  it('tolerates a Link header without type', async () => {
    const res = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { headers: { Link: `<${CORE}>; rel="${REL}"` } });
    expect(res.status).toBe(200);
  });
  it('406 for an unsupported Accept', async () => {
    const res = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { headers: { Accept: 'text/html' } });
    await expectProblem(res, 406, 'NotAcceptable');
  });
  it('accepts */* and q-values', async () => {
    expect((await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { headers: { Accept: '*/*' } })).status).toBe(200);
    const res = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { headers: { Accept: 'application/json;q=0.5, application/ld+json' } });
    expect(res.headers.get('content-type')).toContain('application/ld+json');
  });
  it('accepts application/merge-patch+json on PATCH only', async () => {
    const ok = await b.request('PATCH', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { raw: JSON.stringify({ temperature: { type: 'Property', value: 21 } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(ok.status).toBe(204);
    const bad = await b.request('POST', '/ngsi-ld/v1/entities', { raw: JSON.stringify(entity('urn:ngsi-ld:Room:mp')), headers: { 'Content-Type': 'application/merge-patch+json' } });
    await expectProblem(bad, 415, 'UnsupportedMediaType');
  });
});

describe('invalid requests and content', () => {
  it('400 InvalidRequest for malformed JSON', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { raw: '{"id": ', headers: { 'Content-Type': 'application/json' } });
    await expectProblem(res, 400, 'InvalidRequest');
  });
  it('400 InvalidRequest for an unknown query parameter, on every entity endpoint', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?foo=bar'],
      ['GET', '/ngsi-ld/v1/entities?type=Room&foo=bar'],
      ['DELETE', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?foo=1'],
      ['DELETE', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1/attrs/temperature?foo=1'],
    ];
    for (const [method, path] of cases) await expectProblem(await b.request(method, path), 400, 'InvalidRequest');
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities?foo=1', { body: entity('urn:ngsi-ld:Room:q') }), 400, 'InvalidRequest');
  });
  it('501 NotImplemented for a known but unimplemented parameter', async () => {
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?containedBy=x'), 501, 'NotImplemented');
  });
  it('400 for a bad parameter value', async () => {
    // NGSI-LD §6.3.7: an unknown representation is a bad parameter value, InvalidRequest.
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?options=bogus'), 400, 'InvalidRequest');
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?options=keyValues,bogus'), 400, 'InvalidRequest');
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?format=bogus'), 400, 'InvalidRequest');
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?format=keyValues&options=bogus'), 400, 'InvalidRequest');
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&limit=abc'), 400, 'InvalidRequest');
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?attrs=a&pick=b'), 400, 'BadRequestData');
  });
  it('400 BadRequestData for an invalid entity id (body and path)', async () => {
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('not a uri') }), 400, 'BadRequestData');
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: { type: 'Room' } }), 400, 'BadRequestData');
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/room1'), 400, 'BadRequestData');
  });
  it('400 BadRequestData for forbidden characters in names', async () => {
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:f1', { 'temp<1>': { type: 'Property', value: 1 } }) }), 400, 'BadRequestData');
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:ngsi-ld:Room:f2', type: 'Ro(om)' } }), 400, 'BadRequestData');
  });
  it('400 BadRequestData for an observedAt whose instant falls outside the years 0000-9999, not a 500', async () => {
    for (const observedAt of ['9999-12-31T23:00:00-12:00', '0000-01-01T00:00:00+01:00']) {
      const temperature = { type: 'Property', value: 1, observedAt };
      await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:y1', { temperature }) }), 400, 'BadRequestData');
      await expectProblem(await b.request('POST', '/ngsi-ld/v1/temporal/entities/urn:ngsi-ld:Room:r1/attrs', { body: { temperature: [temperature] } }), 400, 'BadRequestData');
    }
    const inRange = { type: 'Property', value: 1, observedAt: '9999-12-31T11:00:00-12:00' };
    expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:y2', { temperature: inRange }) })).status).toBe(201);
  });
  it('400 BadRequestData for JSON null and for NGSI-LD Null on create', async () => {
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:n1', { humidity: null }) }), 400, 'BadRequestData');
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:n2', { humidity: { type: 'Property', value: null } }) }), 400, 'BadRequestData');
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:n3', { humidity: { type: 'Property', value: 'urn:ngsi-ld:null' } }) }), 400, 'BadRequestData');
  });
  it('400 BadRequestData for a wrong id in PUT', async () => {
    const res = await b.request('PUT', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { body: entity('urn:ngsi-ld:Room:other') });
    await expectProblem(res, 400, 'BadRequestData');
  });
  it('400 for an invalid tenant header', async () => {
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1', { headers: { 'NGSILD-Tenant': 'bad tenant!' } }), 400, 'BadRequestData');
  });
  it('400 when a listing has no type, attrs, q, geo or local', async () => {
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities'), 400, 'BadRequestData');
  });
  it('403 TooManyResults above the maximum limit', async () => {
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities?type=Room&limit=1001'), 403, 'TooManyResults');
  });
  it('413 for a body over the limit', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:big', { blob: { type: 'Property', value: 'x'.repeat(5000) } }) });
    await expectProblem(res, 413, 'PayloadTooLarge');
  });
});

describe('existence', () => {
  it('409 AlreadyExists when the id exists', async () => {
    await expectProblem(await b.request('POST', '/ngsi-ld/v1/entities', { body: entity('urn:ngsi-ld:Room:r1') }), 409, 'AlreadyExists');
  });
  it('404 ResourceNotFound for a missing entity on every entity endpoint', async () => {
    const id = 'urn:ngsi-ld:Room:missing';
    await expectProblem(await b.request('GET', `/ngsi-ld/v1/entities/${id}`), 404, 'ResourceNotFound');
    await expectProblem(await b.request('DELETE', `/ngsi-ld/v1/entities/${id}`), 404, 'ResourceNotFound');
    await expectProblem(await b.request('PUT', `/ngsi-ld/v1/entities/${id}`, { body: entity(id) }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('PATCH', `/ngsi-ld/v1/entities/${id}`, { body: { temperature: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('POST', `/ngsi-ld/v1/entities/${id}/attrs`, { body: { temperature: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, { body: { temperature: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs/temperature`, { body: { value: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('PUT', `/ngsi-ld/v1/entities/${id}/attrs/temperature`, { body: { type: 'Property', value: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('DELETE', `/ngsi-ld/v1/entities/${id}/attrs/temperature`), 404, 'ResourceNotFound');
  });
  it('404 ResourceNotFound for a missing attribute', async () => {
    const base = '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1/attrs/nothere';
    await expectProblem(await b.request('PATCH', base, { body: { value: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('PUT', base, { body: { type: 'Property', value: 1 } }), 404, 'ResourceNotFound');
    await expectProblem(await b.request('DELETE', base), 404, 'ResourceNotFound');
    await expectProblem(await b.request('DELETE', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1/attrs/temperature?datasetId=urn:ngsi-ld:Dataset:none'), 404, 'ResourceNotFound');
  });
  it('404 when none of the requested attributes exists', async () => {
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:r1?attrs=nothere'), 404, 'ResourceNotFound');
  });
  it('404 ProblemDetails for an unknown path, 405 with Allow for a wrong method', async () => {
    await expectProblem(await b.request('GET', '/ngsi-ld/v1/nothing'), 404, 'ResourceNotFound');
    const res = await b.request('PUT', '/ngsi-ld/v1/entities');
    await expectProblem(res, 405, 'MethodNotAllowed');
    expect(res.headers.get('allow')).toBe('DELETE, GET, POST');
  });
});

describe('request edges', () => {
  it('413 for a streamed body over the limit that declares no length', async () => {
    const chunk = new TextEncoder().encode(`{"id":"urn:ngsi-ld:Room:s","type":"Room","x":"${'y'.repeat(3000)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 3) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await b.broker.app.request('http://127.0.0.1/ngsi-ld/v1/entities', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body, duplex: 'half',
    } as RequestInit); // NOTE: `duplex` (needed for a stream body) is missing from the RequestInit type
    expect(res.status).toBe(413);
    expect(((await res.json()) as { type: string }).type).toBe(`${ERR}PayloadTooLarge`);
  });
  it('echoes a plain request id on errors and replaces one that is not', async () => {
    const ok = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:none', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(ok.headers.get('x-request-id')).toBe('abc-123');
    const odd = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:none', { headers: { 'X-Request-Id': 'a b{c}' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
