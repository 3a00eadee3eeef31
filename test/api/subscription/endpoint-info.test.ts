// receiverInfo and notifierInfo of a subscription's endpoint (NGSI-LD §5.2.15): each pair becomes an
// HTTP header or a sender setting of every notification, so a pair that no request can carry is
// refused at creation and at PATCH (400 BadRequestData), instead of failing every delivery later.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { LD, minimalSubscription } from './fixture.js';

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
});
afterAll(() => b.close());

const BAD_DATA = 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData';
const SUBSCRIPTIONS = '/ngsi-ld/v1/subscriptions';

type Pair = { key: string; value: string };
let n = 0;
function subscription(endpoint: { receiverInfo?: Pair[]; notifierInfo?: Pair[] }): Record<string, unknown> {
  const body = minimalSubscription(`urn:ngsi-ld:Subscription:info${n++}`);
  return { ...body, notification: { endpoint: { uri: 'http://127.0.0.1:9999/notify', ...endpoint } } };
}

/** [case, endpoint members, member the detail must name]. */
const REFUSED: Array<[string, { receiverInfo?: Pair[]; notifierInfo?: Pair[] }, string]> = [
  ['a NUL in a receiverInfo value', { receiverInfo: [{ key: 'X-Auth', value: 'a\u0000b' }] }, 'notification.endpoint.receiverInfo[0].value'],
  ['a line break in a receiverInfo value', { receiverInfo: [{ key: 'X-Auth', value: 'a\r\nX-Evil: 1' }] }, 'notification.endpoint.receiverInfo[0].value'],
  ['another control character in a receiverInfo value', { receiverInfo: [{ key: 'X-Auth', value: 'a\u0007' }] }, 'notification.endpoint.receiverInfo[0].value'],
  ['a character beyond Latin-1 in a receiverInfo value', { receiverInfo: [{ key: 'X-Auth', value: '€' }] }, 'notification.endpoint.receiverInfo[0].value'],
  ['a space in a receiverInfo key', { receiverInfo: [{ key: 'X Auth', value: 'v' }] }, 'notification.endpoint.receiverInfo[0].key'],
  ['a colon in a receiverInfo key', { receiverInfo: [{ key: 'X-Auth:', value: 'v' }] }, 'notification.endpoint.receiverInfo[0].key'],
  ['a NUL in a receiverInfo key', { receiverInfo: [{ key: 'ok', value: 'v' }, { key: 'X\u0000', value: 'v' }] }, 'notification.endpoint.receiverInfo[1].key'],
  ['a NUL in a notifierInfo value', { notifierInfo: [{ key: 'X-Note', value: '\u0000' }] }, 'notification.endpoint.notifierInfo[0].value'],
  ['a line break in a notifierInfo key', { notifierInfo: [{ key: 'X\nY', value: 'v' }] }, 'notification.endpoint.notifierInfo[0].key'],
];

describe('receiverInfo and notifierInfo [§5.2.15]', () => {
  it.each(REFUSED)('refuses %s at creation with 400 BadRequestData naming the pair', async (_name, endpoint, member) => {
    const body = subscription(endpoint);
    const res = await b.request('POST', SUBSCRIPTIONS, { body, headers: LD });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(BAD_DATA);
    expect(res.json.detail).toContain(member);
    expect((await b.request('GET', `${SUBSCRIPTIONS}/${encodeURIComponent(String(body['id']))}`)).status).toBe(404);
  });

  it('refuses a NUL in a receiverInfo value at PATCH, and keeps the endpoint as it was', async () => {
    const body = subscription({ receiverInfo: [{ key: 'X-Plant', value: 'north' }] });
    expect((await b.request('POST', SUBSCRIPTIONS, { body, headers: LD })).status).toBe(201);
    const path = `${SUBSCRIPTIONS}/${encodeURIComponent(String(body['id']))}`;
    const patch = { notification: { endpoint: { uri: 'http://127.0.0.1:9999/notify', receiverInfo: [{ key: 'X-Plant', value: 'no\u0000rth' }] } } };
    const res = await b.request('PATCH', path, { body: patch, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe(BAD_DATA);
    expect(res.json.detail).toContain('notification.endpoint.receiverInfo[0].value');
    const stored = await b.request('GET', path);
    expect(stored.json.notification.endpoint.receiverInfo).toEqual([{ key: 'X-Plant', value: 'north' }]);
  });

  it('accepts header names that are RFC 9110 tokens and values with spaces, tabs and Latin-1 letters', async () => {
    const receiverInfo = [{ key: "X-A!#$%&'*+.^_`|~9", value: 'Bearer a b\tc' }, { key: 'X-Site', value: 'Müller' }];
    const body = subscription({ receiverInfo, notifierInfo: [{ key: 'MQTT-QoS', value: '1' }] });
    const res = await b.request('POST', SUBSCRIPTIONS, { body, headers: LD });
    expect(res.status, res.text).toBe(201);
    const stored = await b.request('GET', `${SUBSCRIPTIONS}/${encodeURIComponent(String(body['id']))}`);
    expect(stored.json.notification.endpoint.receiverInfo).toEqual(receiverInfo);
  });
});
