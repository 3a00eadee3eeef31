// Bad device records: every member is checked, each failure is 400 BadRequestData (or the media
// type and query errors of every route) with a detail naming the member at fault, and nothing is written.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

const D = '/edgeld/v1/devices';
const BAD_REQUEST_DATA = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';

let b: TestBroker;
beforeEach(async () => {
  b = await startTestBroker();
});
afterEach(() => b.close());

/** [what, body, a fragment of the detail] */
const BAD_CREATES: Array<[string, Record<string, unknown>, string]> = [
  ['no device id', {}, 'deviceId: is required'],
  ['a device id that is not a string', { deviceId: 7 }, 'deviceId: expected a string'],
  ['an empty device id', { deviceId: '' }, "deviceId: '' is not 1 to 64"],
  ['a / in the device id (a topic level)', { deviceId: 'a/b' }, "deviceId: 'a/b'"],
  ['a + in the device id (a topic wildcard)', { deviceId: 'a+b' }, "deviceId: 'a+b'"],
  ['a # in the device id (a topic wildcard)', { deviceId: 'a#' }, "deviceId: 'a#'"],
  ['a space in the device id', { deviceId: 'a b' }, "deviceId: 'a b'"],
  ['a device id of 65 characters', { deviceId: 'x'.repeat(65) }, 'deviceId:'],
  ['a relative entity id', { deviceId: 'd', entityId: 'thing-1' }, "entityId: 'thing-1' is not an absolute URI"],
  ['an entity type with a forbidden character', { deviceId: 'd', entityType: 'Ther(mo)' }, 'entityType: name'],
  ['an entity type with whitespace', { deviceId: 'd', entityType: 'Big Meter' }, 'entityType: name'],
  ['a keyword as entity type', { deviceId: 'd', entityType: '@type' }, 'entityType:'],
  ['an entity type the context maps to a keyword', { deviceId: 'd', entityType: 'Dev', context: { Dev: '@id' } }, "entityType: 'Dev' does not expand to an IRI"],
  ['a rename to a forbidden name', { deviceId: 'd', renames: { t: 'temp=1' } }, 'renames.t: name'],
  ['a rename to an entity member', { deviceId: 'd', renames: { t: 'id' } }, "renames.t: 'id' is an entity member"],
  ['a rename of observedAt', { deviceId: 'd', renames: { observedAt: 'time' } }, 'renames.observedAt:'],
  ['two renames to one attribute', { deviceId: 'd', renames: { t: 'temperature', temp: 'temperature' } }, "renames: 't' and 'temp' both rename to 'temperature'"],
  ['a rename of an empty key', { deviceId: 'd', renames: { '': 'temperature' } }, 'renames: an empty measurement key'],
  ['a rename to a number', { deviceId: 'd', renames: { t: 5 } }, 'renames.t:'],
  ['a unit code that is no UN/CEFACT code', { deviceId: 'd', unitCodes: { temperature: 'celsius' } }, "unitCodes.temperature: 'celsius' is not a UN/CEFACT unit code"],
  ['a unit code of a forbidden name', { deviceId: 'd', unitCodes: { '<t>': 'CEL' } }, 'unitCodes: name'],
  ['a static attribute that is not an object', { deviceId: 'd', staticAttributes: { name: 'Hall' } }, 'staticAttributes.name: an attribute is a JSON object'],
  ['a static attribute named type', { deviceId: 'd', staticAttributes: { type: { type: 'Property', value: 1 } } }, "staticAttributes: 'type' is an entity member"],
  ['a static Relationship without object', { deviceId: 'd', staticAttributes: { owner: { type: 'Relationship' } } }, 'staticAttributes: '],
  ['a static attribute of an unknown kind', { deviceId: 'd', staticAttributes: { owner: { type: 'Gadget', value: 1 } } }, 'staticAttributes: '],
  ['a static attribute with JSON null', { deviceId: 'd', staticAttributes: { owner: { type: 'Property', value: null } } }, 'staticAttributes: '],
  ['static attributes that are a list', { deviceId: 'd', staticAttributes: [] }, 'staticAttributes:'],
  ['a context that is not a URL', { deviceId: 'd', context: 'my context' }, "context: 'my context' is not an absolute URL"],
  ['a context of numbers', { deviceId: 'd', context: 5 }, 'context: expected a URL, an object, or an array of them'],
  ['a context that is invalid JSON-LD', { deviceId: 'd', context: { x: 5 } }, 'context: Invalid JSON-LD context'],
  ['an unknown member', { deviceId: 'd', color: 'red' }, 'Unrecognized key: "color"'],
  ['a secret chosen by the client', { deviceId: 'd', secret: 'mine' }, 'Unrecognized key: "secret"'],
  ['an @context member', { deviceId: 'd', '@context': 'https://example.org/ctx.jsonld' }, '@context: the device'],
];

describe('device registration refuses bad input', () => {
  it.each(BAD_CREATES)('answers 400 BadRequestData for %s', async (_what, body, detail) => {
    const res = await b.request('POST', D, { body });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: BAD_REQUEST_DATA, detail: expect.stringContaining(detail) });
    expect((await b.request('GET', `${D}?limit=0&count=true`)).headers.get('ngsild-results-count')).toBe('0');
  });

  it('answers 400 for a body that is not JSON, or not an object', async () => {
    expect((await b.request('POST', D, { raw: '{"deviceId":', headers: { 'Content-Type': 'application/json' } })).status).toBe(400);
    expect((await b.request('POST', D, { body: ['d'] })).status).toBe(400);
  });

  it('answers 415 for application/ld+json and for a missing Content-Type', async () => {
    const ld = await b.request('POST', D, { body: { deviceId: 'd', '@context': {} }, headers: { 'Content-Type': 'application/ld+json' } });
    expect(ld.status).toBe(415);
    expect((await b.request('POST', D, { raw: '{"deviceId":"d"}' })).status).toBe(415);
  });

  it('refuses a JSON-LD Link header: the device context is its context member', async () => {
    const link = '<https://example.org/ctx.jsonld>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"';
    const res = await b.request('POST', D, { body: { deviceId: 'd' }, headers: { Link: link } });
    expect(res.status).toBe(400);
    expect(res.json.detail).toContain('context member');
  });

  it('answers 400 for query parameters a route does not take', async () => {
    expect((await b.request('POST', `${D}?force=true`, { body: { deviceId: 'd' } })).status).toBe(400);
    expect((await b.request('GET', `${D}?type=Device`)).status).toBe(400);
    expect((await b.request('GET', `${D}?limit=-1`)).status).toBe(400);
  });
});

describe('device update and lookup refuse bad input', () => {
  beforeEach(async () => {
    expect((await b.request('POST', D, { body: { deviceId: 'th-01', renames: { t: 'temperature' } } })).status).toBe(201);
  });

  const BAD_PATCHES: Array<[string, Record<string, unknown>, string]> = [
    ['nothing to change', {}, 'Nothing to change'],
    ['a new device id', { deviceId: 'th-02' }, 'Unrecognized key: "deviceId"'],
    ['a relative entity id', { entityId: 'hall' }, "entityId: 'hall' is not an absolute URI"],
    ['a bad unit code', { unitCodes: { temperature: 'degrees' } }, "unitCodes.temperature: 'degrees'"],
    ['a context under which the stored type names nothing', { context: { Device: '@id' } }, "entityType: 'Device' does not expand to an IRI"],
    ['a bad static attribute', { staticAttributes: { name: 3 } }, 'staticAttributes.name:'],
  ];

  it.each(BAD_PATCHES)('PATCH answers 400 BadRequestData for %s and changes nothing', async (_what, body, detail) => {
    const res = await b.request('PATCH', `${D}/th-01`, { body });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: BAD_REQUEST_DATA, detail: expect.stringContaining(detail) });
    const got = await b.request('GET', `${D}/th-01`);
    expect(got.json).toMatchObject({ entityId: 'urn:ngsi-ld:Device:th-01', entityType: 'Device', renames: { t: 'temperature' }, unitCodes: {} });
    expect(got.json).not.toHaveProperty('context');
  });

  it('answers 400 for an invalid device id in the path', async () => {
    for (const [method, body] of [['GET'], ['PATCH', { entityType: 'X' }], ['DELETE']] as const) {
      const res = await b.request(method, `${D}/a%2Bb`, body === undefined ? {} : { body });
      expect(res.status, method).toBe(400);
      expect(res.json.detail).toContain("deviceId: 'a+b'");
    }
    expect((await b.request('POST', `${D}/a%2Bb/secret`)).status).toBe(400);
  });

  it('answers 405 with Allow for a method a resource does not have', async () => {
    const res = await b.request('PUT', `${D}/th-01`, { body: { deviceId: 'th-01' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE, GET, PATCH');
  });
});
