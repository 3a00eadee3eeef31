// Subscription bodies shared by the subscription API tests.

import { USER_CONTEXT } from '../../helpers/broker.js';

export const LD = { 'Content-Type': 'application/ld+json' };

/** Every writable member of a subscription (NGSI-LD §5.2.12), with the test user context. */
/** `jsonldContext`: a context URL the broker can load (the test context server's). */
export function fullSubscription(jsonldContext = 'https://example.org/context.jsonld'): Record<string, unknown> {
  return {
    id: 'urn:ngsi-ld:Subscription:full',
    type: 'Subscription',
    subscriptionName: 'Hot rooms',
    description: 'Tells when a building gets warm',
    entities: [{ type: 'Building', idPattern: '^urn:ngsi-ld:Building:' }, { type: 'Sensor', id: 'urn:ngsi-ld:Sensor:s1' }],
    watchedAttributes: ['temperature', 'humidity'],
    notificationTrigger: ['attributeCreated', 'attributeUpdated', 'entityDeleted'],
    q: 'temperature>20;name=="Main hall"',
    geoQ: { georel: 'near;maxDistance==2000', geometry: 'Point', coordinates: [13.39, 52.55], geoproperty: 'location' },
    scopeQ: '/Berlin/#',
    isActive: false,
    expiresAt: '2030-01-01T00:00:00.000Z',
    throttling: 5,
    lang: 'en',
    datasetId: ['urn:ngsi-ld:Dataset:outside', '@none'],
    jsonldContext,
    notification: {
      attributes: ['temperature', 'name'],
      format: 'concise',
      sysAttrs: true,
      showChanges: true,
      endpoint: {
        uri: 'http://127.0.0.1:9999/notify',
        accept: 'application/ld+json',
        timeout: 3000,
        receiverInfo: [{ key: 'X-Auth', value: 'secret' }],
        notifierInfo: [{ key: 'MQTT-QoS', value: '1' }],
      },
    },
    '@context': USER_CONTEXT['@context'],
  };
}

/** The smallest valid subscription. */
export function minimalSubscription(id = 'urn:ngsi-ld:Subscription:min'): Record<string, unknown> {
  return {
    id, type: 'Subscription', entities: [{ type: 'Building' }],
    notification: { endpoint: { uri: 'http://127.0.0.1:9999/notify' } },
    '@context': USER_CONTEXT['@context'],
  };
}
