// Batch entity operations through the HTTP API (NGSI-LD §5.6.7-5.6.10, §5.6.20; behaviour §4):
// status codes, BatchOperationResult, per-entity failures, options, history and change events.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import type { ChangeEvent } from '../../../src/events.js';
import { DEFAULT_CONTEXT_VOCAB as DEFAULT_VOCAB } from '../../../src/ngsi/index.js';

const OPS = '/ngsi-ld/v1/entityOperations';
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const DEFAULT = 'https://uri.etsi.org/ngsi-ld/default-context/';
const id = (n: number | string): string => `urn:ngsi-ld:Room:${n}`;
const room = (n: number | string, attrs: Record<string, unknown> = { temperature: { type: 'Property', value: 20 } }) =>
  ({ id: id(n), type: 'Room', ...attrs });

let b: TestBroker;
let events: ChangeEvent[];

const post = (op: string, body: unknown, query = '') => b.request('POST', `${OPS}/${op}${query}`, { body });
const get = async (n: number | string): Promise<any> => {
  const res = await b.request('GET', `/ngsi-ld/v1/entities/${id(n)}`);
  return res.status === 200 ? res.json : undefined;
};

beforeEach(async () => {
  b = await startTestBroker();
  events = [];
  b.broker.events.on((e) => events.push(e));
});
afterEach(() => b.close());

describe('POST /entityOperations/create [§5.6.7]', () => {
  it('201 with the array of created ids when all succeed; each entity leaves history and an event', async () => {
    const res = await post('create', [room(1), room(2)]);
    expect(res.status).toBe(201);
    expect(res.json).toEqual([id(1), id(2)]);
    expect((await get(1)).temperature.value).toBe(20);
    expect(b.broker.store.history.listForEntity({ tenant: '' }, id(2))).toHaveLength(1);
    expect(events.map((e) => e.kind)).toEqual(['entityCreated', 'entityCreated']);
  });

  it('207 naming exactly the invalid entities; the valid ones are stored', async () => {
    const res = await post('create', [
      room(1),
      { id: 'not a uri', type: 'Room' },
      room(2),
      { type: 'Room' },
      null,
      room(3, { temperature: { type: 'Property', value: null } }),
      room(4),
    ]);
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(1), id(2), id(4)]);
    expect(res.json.errors.map((e: any) => e.entityId)).toEqual(['not a uri', { type: 'Room' }, null, id(3)]);
    for (const e of res.json.errors) {
      expect(e.error).toMatchObject({ type: ERR + 'BadRequestData', status: 400, title: expect.any(String) });
    }
    expect(await get(1)).toBeDefined();
    expect(await get(4)).toBeDefined();
    expect(await get(3)).toBeUndefined();
  });

  it('AlreadyExists for an id in the store and for an id repeated in the batch', async () => {
    await post('create', [room(1)]);
    const res = await post('create', [room(1), room(2), room(2, { humidity: { type: 'Property', value: 1 } })]);
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(2)]);
    expect(res.json.errors).toEqual([
      { entityId: id(1), error: expect.objectContaining({ type: ERR + 'AlreadyExists', status: 409 }) },
      { entityId: id(2), error: expect.objectContaining({ type: ERR + 'AlreadyExists', status: 409 }) },
    ]);
    expect((await get(2)).humidity).toBeUndefined();
  });
});

describe('POST /entityOperations/upsert [§5.6.8]', () => {
  beforeEach(async () => {
    await post('create', [room(1, { temperature: { type: 'Property', value: 20 }, humidity: { type: 'Property', value: 40 } })]);
    events = [];
  });

  it('201 with only the newly created ids; existing entities are replaced by default', async () => {
    const res = await post('upsert', [room(1, { pressure: { type: 'Property', value: 1013 } }), room(2)]);
    expect(res.status).toBe(201);
    expect(res.json).toEqual([id(2)]);
    const e1 = await get(1);
    expect(e1.pressure.value).toBe(1013);
    expect(e1.temperature).toBeUndefined();
    expect(e1.humidity).toBeUndefined();
    expect(events.map((e) => e.kind)).toEqual(['entityReplaced', 'entityCreated']);
    const h = b.broker.store.history.listForEntity({ tenant: '' }, id(1), DEFAULT + 'temperature');
    expect(h.at(-1)?.deletedAt).toBeDefined();
  });

  it('with options=update, appends and overwrites attributes and keeps the others', async () => {
    const res = await post('upsert', [room(1, { temperature: { type: 'Property', value: 25 }, light: { type: 'Property', value: 300 } })], '?options=update');
    expect(res.status).toBe(204);
    const e1 = await get(1);
    expect(e1.temperature.value).toBe(25);
    expect(e1.light.value).toBe(300);
    expect(e1.humidity.value).toBe(40);
    expect(events.map((e) => e.kind)).toEqual(['entityUpdated']);
    expect(b.broker.store.history.listForEntity({ tenant: '' }, id(1), DEFAULT + 'temperature')).toHaveLength(2);
  });

  it('with options=update, adds new types to the entity', async () => {
    expect((await post('upsert', [{ id: id(1), type: 'Place' }], '?options=update')).status).toBe(204);
    expect((await get(1)).type).toEqual(['Room', 'Place']);
  });

  it('204 when every entity already existed', async () => {
    const res = await post('upsert', [room(1)], '?options=replace');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('207 on any invalid entity, with the created and updated ids in success', async () => {
    const res = await post('upsert', [room(1), { id: id(9) }, room(2)]);
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(1), id(2)]);
    expect(res.json.errors).toEqual([{ entityId: id(9), error: expect.objectContaining({ type: ERR + 'BadRequestData' }) }]);
  });

  it('an id repeated in the batch is created, then replaced', async () => {
    const res = await post('upsert', [room(5), room(5, { light: { type: 'Property', value: 1 } })]);
    expect(res.status).toBe(201);
    expect(res.json).toEqual([id(5)]);
    const e5 = await get(5);
    expect(e5.light.value).toBe(1);
    expect(e5.temperature).toBeUndefined();
  });

  it('400 for an unknown option, and for replace with update', async () => {
    expect((await post('upsert', [room(1)], '?options=merge')).status).toBe(400);
    expect((await post('upsert', [room(1)], '?options=replace,update')).status).toBe(400);
  });
});

describe('POST /entityOperations/update [§5.6.9]', () => {
  beforeEach(async () => {
    await post('create', [room(1), room(2)]);
  });

  it('204 and appends or overwrites attributes of existing entities', async () => {
    const res = await post('update', [
      { id: id(1), temperature: { type: 'Property', value: 30 }, light: { type: 'Property', value: 5 } },
      { id: id(2), type: 'Room', humidity: { type: 'Property', value: 50 } },
    ]);
    expect(res.status).toBe(204);
    expect((await get(1)).temperature.value).toBe(30);
    expect((await get(1)).light.value).toBe(5);
    expect((await get(2)).humidity.value).toBe(50);
    expect((await get(2)).temperature.value).toBe(20);
  });

  it('ResourceNotFound for a missing entity; the others are updated', async () => {
    const res = await post('update', [
      { id: id(1), light: { type: 'Property', value: 5 } },
      { id: id(7), light: { type: 'Property', value: 5 } },
      { light: { type: 'Property', value: 5 } },
    ]);
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(1)]);
    expect(res.json.errors).toEqual([
      { entityId: id(7), error: expect.objectContaining({ type: ERR + 'ResourceNotFound', status: 404 }) },
      { entityId: { light: { type: 'Property', value: 5 } }, error: expect.objectContaining({ type: ERR + 'BadRequestData' }) },
    ]);
  });

  it('options=noOverwrite keeps existing attributes and reports them, appending the new ones', async () => {
    const res = await post('update', [
      { id: id(1), temperature: { type: 'Property', value: 99 }, light: { type: 'Property', value: 5 } },
      { id: id(2), light: { type: 'Property', value: 6 } },
    ], '?options=noOverwrite');
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(2)]);
    expect(res.json.errors).toHaveLength(1);
    expect(res.json.errors[0].entityId).toBe(id(1));
    expect(res.json.errors[0].error.detail).toContain('temperature');
    const e1 = await get(1);
    expect(e1.temperature.value).toBe(20);
    expect(e1.light.value).toBe(5);
  });

  it('NGSI-LD Null deletes an attribute and leaves a deletion instance', async () => {
    const res = await post('update', [{ id: id(1), temperature: { type: 'Property', value: 'urn:ngsi-ld:null' } }]);
    expect(res.status).toBe(204);
    expect((await get(1)).temperature).toBeUndefined();
    expect(b.broker.store.history.listForEntity({ tenant: '' }, id(1)).at(-1)?.deletedAt).toBeDefined();
  });
});

describe('POST /entityOperations/merge [§5.6.20]', () => {
  it('merges each fragment into its entity; a missing entity is ResourceNotFound', async () => {
    await post('create', [room(1, { temperature: { type: 'Property', value: 20, unitCode: 'CEL' }, humidity: { type: 'Property', value: 40 } })]);
    events = [];
    const res = await post('merge', [
      { id: id(1), temperature: { value: 21 }, humidity: 'urn:ngsi-ld:null', light: { type: 'Property', value: 300 } },
      { id: id(8), light: { type: 'Property', value: 1 } },
    ]);
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(1)]);
    expect(res.json.errors).toEqual([{ entityId: id(8), error: expect.objectContaining({ type: ERR + 'ResourceNotFound' }) }]);
    const e1 = await get(1);
    expect(e1.temperature).toEqual({ type: 'Property', value: 21, unitCode: 'CEL' });
    expect(e1.humidity).toBeUndefined();
    expect(e1.light.value).toBe(300);
    // One change for the entity, with what it wrote and what it deleted.
    expect(events.map((e) => e.kind)).toEqual(['entityUpdated']);
    expect(events[0]).toMatchObject({ written: [DEFAULT_VOCAB + 'temperature', DEFAULT_VOCAB + 'light'], deleted: [DEFAULT_VOCAB + 'humidity'] });
  });

  it('204 when every merge succeeds', async () => {
    await post('create', [room(1), room(2)]);
    expect((await post('merge', [{ id: id(1), type: 'Place' }, { id: id(2), light: { type: 'Property', value: 1 } }])).status).toBe(204);
    expect((await get(1)).type).toEqual(['Room', 'Place']);
  });
});

describe('POST /entityOperations/delete [§5.6.10]', () => {
  beforeEach(async () => {
    await post('create', [room(1), room(2)]);
    events = [];
  });

  it('204 when every id was deleted; the history keeps a deletion instance', async () => {
    const res = await post('delete', [id(1), id(2)]);
    expect(res.status).toBe(204);
    expect(await get(1)).toBeUndefined();
    expect(await get(2)).toBeUndefined();
    expect(b.broker.store.history.listForEntity({ tenant: '' }, id(1)).at(-1)?.deletedAt).toBeDefined();
    expect(events.map((e) => e.kind)).toEqual(['entityDeleted', 'entityDeleted']);
  });

  it('207 with 404 for a missing id and 400 for a value that is no entity id', async () => {
    const res = await post('delete', [id(1), id(3), 42, 'no uri']);
    expect(res.status).toBe(207);
    expect(res.json.success).toEqual([id(1)]);
    expect(res.json.errors).toEqual([
      { entityId: id(3), error: expect.objectContaining({ type: ERR + 'ResourceNotFound', status: 404 }) },
      { entityId: 42, error: expect.objectContaining({ type: ERR + 'BadRequestData' }) },
      { entityId: 'no uri', error: expect.objectContaining({ type: ERR + 'BadRequestData' }) },
    ]);
    expect(await get(2)).toBeDefined();
  });

  it('accepts application/ld+json for a body of plain ids', async () => {
    const res = await b.request('POST', `${OPS}/delete`, { raw: JSON.stringify([id(1)]), headers: { 'Content-Type': 'application/ld+json' } });
    expect(res.status).toBe(204);
  });
});

describe('tenants', () => {
  it('writes each batch into the tenant of the request', async () => {
    const headers = { 'NGSILD-Tenant': 'site2' };
    const res = await b.request('POST', `${OPS}/create`, { body: [room(1)], headers });
    expect(res.status).toBe(201);
    expect(await get(1)).toBeUndefined();
    expect((await b.request('GET', `/ngsi-ld/v1/entities/${id(1)}`, { headers })).status).toBe(200);
  });
});
