// Validation of subscriptions (NGSI-LD §5.2.12, §5.8.1): each bad member is a 400 whose detail
// names the member; unknown and read-only members are refused; known unimplemented ones are 501.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { LD, minimalSubscription } from './fixture.js';

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b.close());

type Body = Record<string, unknown>;
const base = (): Body => minimalSubscription();
const withNotification = (patch: Body): Body => ({ ...base(), notification: { endpoint: { uri: 'http://127.0.0.1:9999/n' }, ...patch } });
const withEndpoint = (patch: Body): Body => withNotification({ endpoint: { uri: 'http://127.0.0.1:9999/n', ...patch } });
const without = (body: Body, ...members: string[]): Body => Object.fromEntries(Object.entries(body).filter(([k]) => !members.includes(k)));

/** [case, body, member the detail must name]. */
const CASES: Array<[string, Body, string]> = [
  ['type missing', without(base(), 'type'), 'type'],
  ['type not Subscription', { ...base(), type: 'Entity' }, 'type'],
  ['id not a URI', { ...base(), id: 'not a uri' }, 'id'],
  ['neither entities nor watchedAttributes', without(base(), 'entities'), 'entities'],
  ['entities empty', { ...base(), entities: [] }, 'entities'],
  ['entity selector without type', { ...base(), entities: [{ id: 'urn:a:b' }] }, 'entities[0].type'],
  ['entity selector with a bad type selection', { ...base(), entities: [{ type: 'A;;B' }] }, 'entities[0].type'],
  ['entity id not a URI', { ...base(), entities: [{ type: 'Building', id: 'nope' }] }, 'entities[0].id'],
  ['idPattern invalid', { ...base(), entities: [{ type: 'Building', idPattern: '(unclosed' }] }, 'entities[0].idPattern'],
  ['watchedAttributes empty', { ...base(), watchedAttributes: [] }, 'watchedAttributes'],
  ['watchedAttributes with a forbidden name', { ...base(), watchedAttributes: ['a<b'] }, 'watchedAttributes[0]'],
  ['notificationTrigger unknown', { ...base(), notificationTrigger: ['entityChanged'] }, 'notificationTrigger[0]'],
  ['timeInterval with watchedAttributes', { ...base(), timeInterval: 10, watchedAttributes: ['temperature'] }, 'timeInterval'],
  ['timeInterval with throttling', { ...base(), timeInterval: 10, throttling: 5 }, 'timeInterval'],
  ['timeInterval not positive', { ...base(), timeInterval: 0 }, 'timeInterval'],
  ['throttling negative', { ...base(), throttling: -2 }, 'throttling'],
  ['expiresAt in the past', { ...base(), expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
  ['expiresAt not a date-time', { ...base(), expiresAt: 'tomorrow' }, 'expiresAt'],
  ['q invalid', { ...base(), q: 'temperature>>' }, 'q'],
  ['scopeQ invalid', { ...base(), scopeQ: 'Berlin' }, 'scopeQ'],
  ['geoQ incomplete', { ...base(), geoQ: { georel: 'within', geometry: 'Polygon' } }, 'geoQ'],
  ['geoQ georel unknown', { ...base(), geoQ: { georel: 'beside', geometry: 'Point', coordinates: [1, 2] } }, 'geoQ'],
  ['lang invalid', { ...base(), lang: 'en;;' }, 'lang'],
  ['datasetId not a URI', { ...base(), datasetId: ['x'] }, 'datasetId[0]'],
  ['jsonldContext not a URI', { ...base(), jsonldContext: 'ctx' }, 'jsonldContext'],
  ['notification missing', without(base(), 'notification'), 'notification'],
  ['endpoint missing', { ...base(), notification: {} }, 'notification.endpoint'],
  ['endpoint uri missing', withEndpoint({ uri: undefined }), 'notification.endpoint.uri'],
  ['endpoint scheme not allowed', withEndpoint({ uri: 'ftp://host/x' }), 'notification.endpoint.uri'],
  ['endpoint uri not a URI', withEndpoint({ uri: 'nowhere' }), 'notification.endpoint.uri'],
  ['accept not allowed', withEndpoint({ accept: 'text/plain' }), 'notification.endpoint.accept'],
  ['timeout not positive', withEndpoint({ timeout: 0 }), 'notification.endpoint.timeout'],
  ['MQTT-QoS out of range', withEndpoint({ notifierInfo: [{ key: 'MQTT-QoS', value: '3' }] }), 'notification.endpoint.notifierInfo[0].value'],
  ['MQTT-Version unknown', withEndpoint({ notifierInfo: [{ key: 'MQTT-Version', value: 'mqtt4' }] }), 'notification.endpoint.notifierInfo[0].value'],
  ['format unknown', withNotification({ format: 'compact' }), 'notification.format'],
  ['attributes empty', withNotification({ attributes: [] }), 'notification.attributes'],
  ['attributes with pick', withNotification({ attributes: ['temperature'], pick: ['id'] }), 'notification.attributes'],
  ['a member both picked and omitted', withNotification({ pick: ['temperature'], omit: ['temperature'] }), 'notification.pick'],
  ['showChanges with keyValues', withNotification({ format: 'keyValues', showChanges: true }), 'notification.showChanges'],
  ['unknown member', { ...base(), colour: 'red' }, 'colour'],
  ['unknown notification member', withNotification({ colour: 'red' }), 'notification'],
  ['wrong JSON type', { ...base(), q: 5 }, 'q'],
  ['JSON null', { ...base(), description: null }, 'description'],
  ['read-only status', { ...base(), status: 'active' }, 'status'],
  ['read-only timesSent', withNotification({ timesSent: 3 }), 'notification.timesSent'],
];

describe('subscription validation [§5.2.12]', () => {
  it.each(CASES)('%s: 400 BadRequestData naming the member', async (_name, body, member) => {
    const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', { body, headers: LD });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    expect(res.json.detail).toContain(member);
  });

  it('answers 501 NotImplemented for csf', async () => {
    const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', { body: { ...base(), csf: 'x' }, headers: LD });
    expect(res.status).toBe(501);
  });

  it('accepts a periodic subscription without entities and a watchedAttributes-only one', async () => {
    const periodic = { ...without(base(), 'entities'), id: 'urn:ngsi-ld:Subscription:periodic', timeInterval: 60 };
    expect((await b.request('POST', '/ngsi-ld/v1/subscriptions', { body: periodic, headers: LD })).status).toBe(201);
    const watched = { ...without(base(), 'entities'), id: 'urn:ngsi-ld:Subscription:watched', watchedAttributes: ['temperature'] };
    expect((await b.request('POST', '/ngsi-ld/v1/subscriptions', { body: watched, headers: LD })).status).toBe(201);
  });

  it('accepts every allowed scheme, accept and format', async () => {
    const uris = ['http://a/x', 'https://a/x', 'mqtt://user:pw@a:1883/topic', 'mqtts://a/topic'];
    const accepts = ['application/json', 'application/ld+json', 'application/geo+json'];
    const formats = ['normalized', 'keyValues', 'simplified', 'concise'];
    let n = 0;
    for (const uri of uris) {
      for (const accept of accepts) {
        for (const format of formats) {
          const body = { ...base(), id: `urn:ngsi-ld:Subscription:ok${n++}`, notification: { format, endpoint: { uri, accept } } };
          const res = await b.request('POST', '/ngsi-ld/v1/subscriptions', { body, headers: LD });
          expect(res.status, `${uri} ${accept} ${format}: ${res.text}`).toBe(201);
        }
      }
    }
  });
});
