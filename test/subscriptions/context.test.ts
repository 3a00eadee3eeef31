// The notification context of a subscription: jsonldContext first, else the creation context; a
// context that is not one URL is linked where the broker hosts it.

import { describe, expect, it } from 'vitest';
import type { ResolvedContext } from '../../src/jsonld/index.js';
import { notificationContextInput, toNotificationContext } from '../../src/subscriptions/index.js';
import { mapper, subscription } from './support.js';

const resolved = (linkUrl: string | undefined, hostedId: string | undefined): ResolvedContext =>
  ({ ...mapper, key: 'k', bodyContext: ['https://a/ctx'], processed: [], linkUrl, hostedId });

describe('notification context', () => {
  it('prefers jsonldContext over the creation context, and is undefined (core) without either', () => {
    expect(notificationContextInput({ ...subscription({ entities: [{ type: 'Building' }] }), context: ['https://a/c'] })).toEqual(['https://a/c']);
    expect(notificationContextInput(subscription({ entities: [{ type: 'Building' }], jsonldContext: 'https://a/j' }))).toBe('https://a/j');
    expect(notificationContextInput(subscription({ entities: [{ type: 'Building' }] }))).toBeUndefined();
  });

  it('links a single-URL context directly and a composite one at the broker', () => {
    expect(toNotificationContext(resolved('https://a/ctx', undefined), 'http://gw:1026').linkUrl).toBe('https://a/ctx');
    expect(toNotificationContext(resolved(undefined, 'abc'), 'http://gw:1026/').linkUrl).toBe('http://gw:1026/ngsi-ld/v1/jsonldContexts/abc');
    expect(toNotificationContext(resolved('https://a/ctx', undefined), 'http://gw').compactIri('https://example.org/ns#temperature')).toBe('temperature');
  });
});
