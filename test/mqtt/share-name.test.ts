// Share names (MQTT 5 §4.8.2): `$share/<group>/<filter>` as Aedes is shown it (`$edgeld/share/…`), and
// the SUBSCRIBE and UNSUBSCRIBE packets renamed before Aedes handles them.

import { describe, expect, it } from 'vitest';
import { clientShareFilter, filterOf, parseShareName, renameSharedFilters } from '../../src/mqtt/share-name.js';

describe('share names', () => {
  it.each([
    ['$edgeld/share/g/t', { group: 'g', filter: 't' }],
    ['$edgeld/share/ulgroup//+/+/attrs', { group: 'ulgroup', filter: '/+/+/attrs' }],
    ['$edgeld/share/g/#', { group: 'g', filter: '#' }],
    ['$edgeld/share/a/b/c', { group: 'a', filter: 'b/c' }],
  ])('reads %s as a group and its filter', (stored, name) => {
    expect(parseShareName(stored)).toEqual(name);
    expect(filterOf(stored)).toBe(name.filter);
  });

  it.each([
    ['an empty group', '$edgeld/share//t'],
    ['a group that is a wildcard', '$edgeld/share/+/t'],
    ['a group holding a wildcard', '$edgeld/share/g#/t'],
    ['no filter', '$edgeld/share/g'],
    ['an empty filter', '$edgeld/share/g/'],
  ])('refuses %s [MQTT-4.8.2-1] [MQTT-4.8.2-2]', (_what, stored) => {
    expect(parseShareName(stored)).toBe('invalid');
  });

  it('leaves other filters alone', () => {
    expect(parseShareName('t/#')).toBeUndefined();
    expect(parseShareName('$share/g/t')).toBeUndefined();
    expect(filterOf('t/#')).toBe('t/#');
  });

  it('renames the shared filters of SUBSCRIBE (QoS 1 at most) and UNSUBSCRIBE, nothing else', () => {
    const subscribe = { cmd: 'subscribe', subscriptions: [{ topic: '$share/g/t', qos: 2 }, { topic: 't', qos: 2 }, { topic: '$share/h/#', qos: 0 }] };
    renameSharedFilters(subscribe);
    expect(subscribe.subscriptions).toEqual([{ topic: '$edgeld/share/g/t', qos: 1 }, { topic: 't', qos: 2 }, { topic: '$edgeld/share/h/#', qos: 0 }]);
    const unsubscribe = { cmd: 'unsubscribe', unsubscriptions: ['$share/g/t', 't'] };
    renameSharedFilters(unsubscribe);
    expect(unsubscribe.unsubscriptions).toEqual(['$edgeld/share/g/t', 't']);
    const publish = { cmd: 'publish', topic: '$share/g/t' };
    renameSharedFilters(publish);
    expect(publish.topic).toBe('$share/g/t');
    expect(clientShareFilter('$edgeld/share/g/t')).toBe('$share/g/t');
  });
});
