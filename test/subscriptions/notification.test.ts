// The notification builder (NGSI-LD §5.2.19, §5.11): body members, each format, attributes / pick /
// omit, sysAttrs, showChanges, createdAt on attributes, datasetId, deletions, compaction, headers.

import { describe, expect, it } from 'vitest';
import { buildNotification, type NotificationContext, type NotifiedEntity } from '../../src/subscriptions/index.js';
import { dc, entity, EX, mapper, subscription, T0 } from './support.js';

const CTX_URL = 'https://example.org/ctx.jsonld';
const context: NotificationContext = { ...mapper, bodyContext: [CTX_URL], linkUrl: CTX_URL };
const T1 = T0 + 60_000;

const before = entity({
  temperature: { type: 'Property', value: 20, accuracy: { type: 'Property', value: 0.5 } },
  owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:p1' },
  name: { type: 'Property', value: 'Hall' },
  location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.39, 52.55] } },
});
const after = {
  ...before,
  modifiedAt: T1,
  attrs: { ...before.attrs, ...entity({ temperature: { type: 'Property', value: 25, accuracy: { type: 'Property', value: 0.5 } } }, T1).attrs },
};
const previous = { ...before, attrs: { [EX + 'temperature']: before.attrs[EX + 'temperature']! } };

function build(members: Parameters<typeof subscription>[0], items: NotifiedEntity[] = [{ entity: after, previous }], tenant?: string) {
  return buildNotification({
    subscription: subscription({ entities: [{ type: 'Building' }], ...members }), entities: items, context, now: T1, newId: () => 'n1', tenant,
  });
}
const data = (n: ReturnType<typeof build>): any => (n.body.data as any[])[0]; // eslint-disable-line -- test reads JSON

describe('notification body [§5.2.19]', () => {
  it('has id, type, subscriptionId, notifiedAt, data and the subscription context', () => {
    const n = build({});
    expect(n.body).toMatchObject({
      id: 'urn:ngsi-ld:Notification:n1', type: 'Notification', subscriptionId: 'urn:ngsi-ld:Subscription:t',
      notifiedAt: new Date(T1).toISOString(), '@context': [CTX_URL],
    });
    expect(n.body.data).toHaveLength(1);
  });

  it('compacts names with the subscription context (term maps), normalized by default, with createdAt on attributes and sub-attributes', () => {
    const e = data(build({}));
    expect(e.id).toBe('urn:ngsi-ld:Building:b1');
    expect(e.type).toBe('Building');
    expect(e.temperature).toEqual({
      type: 'Property', value: 25, createdAt: new Date(T1).toISOString(),
      accuracy: { type: 'Property', value: 0.5, createdAt: new Date(T1).toISOString() },
    });
    expect(e.owner).toMatchObject({ type: 'Relationship', object: 'urn:ngsi-ld:Person:p1' });
    expect(e.modifiedAt).toBeUndefined();
    expect(e[dc('name')]).toBeUndefined();
  });
});

describe('formats', () => {
  it('keyValues and simplified: attribute values only', () => {
    for (const format of ['keyValues', 'simplified']) {
      const e = data(build({ notification: { format, endpoint: { uri: 'http://a/x' } } }));
      expect(e.temperature).toBe(25);
      expect(e.owner).toBe('urn:ngsi-ld:Person:p1');
    }
  });

  it('concise: bare values where they are enough, without createdAt', () => {
    const e = data(build({ notification: { format: 'concise', endpoint: { uri: 'http://a/x' } } }));
    expect(e.name).toBe('Hall');
    expect(e.temperature).toEqual({ value: 25, accuracy: 0.5 });
  });

  it('application/geo+json: data is a FeatureCollection with the location as geometry', () => {
    const n = build({ notification: { endpoint: { uri: 'http://a/x', accept: 'application/geo+json' } } });
    expect(n.body.data).toMatchObject({
      type: 'FeatureCollection',
      features: [{ id: 'urn:ngsi-ld:Building:b1', type: 'Feature', geometry: { type: 'Point', coordinates: [13.39, 52.55] } }],
    });
    expect(n.headers['Content-Type']).toBe('application/geo+json');
    expect(n.headers['Link']).toBeUndefined();
  });
});

describe('projection and system attributes', () => {
  it('notification.attributes keeps only those attributes', () => {
    const e = data(build({ notification: { attributes: ['temperature'], endpoint: { uri: 'http://a/x' } } }));
    expect(Object.keys(e).sort()).toEqual(['id', 'temperature', 'type']);
  });

  it('pick and omit project members', () => {
    expect(Object.keys(data(build({ notification: { pick: ['id', 'name'], endpoint: { uri: 'http://a/x' } } }))).sort()).toEqual(['id', 'name']);
    const omitted = data(build({ notification: { omit: ['location', 'owner'], endpoint: { uri: 'http://a/x' } } }));
    expect(Object.keys(omitted).sort()).toEqual(['id', 'name', 'temperature', 'type']);
  });

  it('sysAttrs adds createdAt and modifiedAt to the entity and attributes', () => {
    const e = data(build({ notification: { sysAttrs: true, endpoint: { uri: 'http://a/x' } } }));
    expect(e.createdAt).toBe(new Date(T0).toISOString());
    expect(e.modifiedAt).toBe(new Date(T1).toISOString());
    expect(e.temperature.modifiedAt).toBe(new Date(T1).toISOString());
  });

  it('datasetId keeps only the instances of those datasets', () => {
    const multi = entity({ temperature: [{ type: 'Property', value: 20 }, { type: 'Property', value: 5, datasetId: 'urn:ds:out' }] });
    const e = data(build({ datasetId: ['urn:ds:out'] }, [{ entity: multi }]));
    expect(e.temperature).toMatchObject({ value: 5, datasetId: 'urn:ds:out' });
  });
});

describe('showChanges [§5.2.14]', () => {
  it('adds previousValue to attributes that existed before, and nothing to the others', () => {
    const e = data(build({ notification: { showChanges: true, endpoint: { uri: 'http://a/x' } } }));
    expect(e.temperature).toMatchObject({ value: 25, previousValue: 20 });
    expect(e.name.previousValue).toBeUndefined();
  });

  it('adds previousObject to relationships, and works in concise form', () => {
    const moved = { ...after, attrs: { ...after.attrs, ...entity({ owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:p2' } }, T1).attrs } };
    const prior = { ...before, attrs: { [EX + 'owner']: before.attrs[EX + 'owner']! } };
    const e = data(build({ notification: { format: 'concise', showChanges: true, endpoint: { uri: 'http://a/x' } } }, [{ entity: moved, previous: prior }]));
    expect(e.owner).toEqual({ object: 'urn:ngsi-ld:Person:p2', previousObject: 'urn:ngsi-ld:Person:p1' });
  });

  it('is off by default', () => {
    expect(data(build({})).temperature.previousValue).toBeUndefined();
  });
});

describe('deletions', () => {
  it('shows a deleted entity as id, type and deletedAt', () => {
    const e = data(build({ notificationTrigger: ['entityDeleted'] }, [{ entity: before, deletedAt: T1 }]));
    expect(e).toEqual({ id: 'urn:ngsi-ld:Building:b1', type: 'Building', deletedAt: new Date(T1).toISOString() });
  });

  it('shows a deleted attribute as NGSI-LD Null in its kind\'s payload member', () => {
    const { [EX + 'owner']: _owner, ...kept } = before.attrs;
    const without = { ...before, attrs: kept };
    const e = data(build({}, [{ entity: without, previous: before, deletedAttributes: { attrs: [EX + 'owner'], at: T1 } }]));
    expect(e.owner).toEqual({ type: 'Relationship', object: 'urn:ngsi-ld:null' });
  });
});

describe('headers', () => {
  it('application/json: Content-Type, a Link to the context, receiverInfo pairs and the tenant', () => {
    const n = build({ notification: { endpoint: { uri: 'http://a/x', receiverInfo: [{ key: 'X-Auth', value: 's3cret' }] } } }, undefined, 'plant2');
    expect(n.headers).toEqual({
      'Content-Type': 'application/json',
      Link: `<${CTX_URL}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
      'NGSILD-Tenant': 'plant2',
      'X-Auth': 's3cret',
    });
  });

  it('application/ld+json: no Link header; the context is in the body', () => {
    const n = build({ notification: { endpoint: { uri: 'http://a/x', accept: 'application/ld+json' } } });
    expect(n.headers).toEqual({ 'Content-Type': 'application/ld+json' });
    expect(n.body['@context']).toEqual([CTX_URL]);
  });
});
