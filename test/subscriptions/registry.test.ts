// The in-memory registry: candidates of a change by tenant and entity type, or by watched attribute
// for subscriptions without entities; periodic subscriptions apart; kept in step on put and remove.

import { describe, expect, it } from 'vitest';
import { createSubscriptionRegistry, typesSelectedBy, type Subscription } from '../../src/subscriptions/index.js';
import { change, dc, entity, EX, subscription } from './support.js';

const withId = (sub: Subscription, id: string): Subscription => ({ ...sub, id });
const ids = (subs: readonly Subscription[]): string[] => subs.map((s) => s.id).sort();

const building = entity({ temperature: { type: 'Property', value: 20 } });
const sensor = entity({ id: 'urn:ngsi-ld:Sensor:s1', type: 'Sensor', humidity: { type: 'Property', value: 40 } });
const updateBuilding = change('entityUpdated', { before: building, after: building, written: [EX + 'temperature'] });
const createSensor = change('entityCreated', { after: sensor, written: [dc('humidity')] });

describe('subscription registry', () => {
  const registry = createSubscriptionRegistry([
    { tenant: '', sub: withId(subscription({ entities: [{ type: 'Building' }] }), 'byType') },
    { tenant: '', sub: withId(subscription({ entities: [{ type: 'Sensor,Building' }] }), 'byEither') },
    { tenant: '', sub: withId(subscription({ entities: [{ type: '*' }] }), 'anyType') },
    { tenant: '', sub: withId(subscription({ watchedAttributes: ['humidity'] }), 'watchOnly') },
    { tenant: '', sub: withId(subscription({ entities: [{ type: 'Building' }], timeInterval: 60 }), 'periodic') },
    { tenant: 'other', sub: withId(subscription({ entities: [{ type: 'Building' }] }), 'otherTenant') },
  ]);

  it('finds the subscriptions selecting one of the entity types, or every type, in the change tenant only', () => {
    expect(ids(registry.candidates(updateBuilding))).toEqual(['anyType', 'byEither', 'byType']);
  });

  it('finds subscriptions without entities by the attributes the change touches', () => {
    expect(ids(registry.candidates(createSensor))).toEqual(['anyType', 'byEither', 'watchOnly']);
  });

  it('keeps periodic subscriptions out of the candidates and lists them apart', () => {
    expect(registry.periodic().map((p) => p.sub.id)).toEqual(['periodic']);
  });

  it('re-indexes on put and forgets on remove', () => {
    const r = createSubscriptionRegistry();
    r.put('', withId(subscription({ entities: [{ type: 'Building' }] }), 's'));
    expect(ids(r.candidates(updateBuilding))).toEqual(['s']);
    r.put('', withId(subscription({ entities: [{ type: 'Sensor' }] }), 's'));
    expect(r.candidates(updateBuilding)).toEqual([]);
    expect(ids(r.candidates(createSensor))).toEqual(['s']);
    expect(r.all().map(({ tenant, sub }) => [tenant, sub.id])).toEqual([['', 's']]);
    const before = r.revision();
    r.remove('', 's');
    expect(r.revision()).toBeGreaterThan(before);
    expect(r.candidates(createSensor)).toEqual([]);
    expect(r.size()).toBe(0);
    expect(r.all()).toEqual([]);
  });

  it('keeps the delivery state given to it', () => {
    const r = createSubscriptionRegistry([{ tenant: '', sub: withId(subscription({ entities: [{ type: 'Building' }] }), 's') }]);
    r.setDelivery('', 's', { timesSent: 2, lastNotification: 5, status: 'ok' });
    expect(r.get('', 's')?.delivery).toEqual({ timesSent: 2, lastNotification: 5, status: 'ok' });
  });
});

describe('types a subscription selects', () => {
  it('gives the union of its selectors\' types, the first conjunct of an AND, or * when any entity may match', () => {
    const union = typesSelectedBy(subscription({ entities: [{ type: 'Building' }, { type: 'Sensor|Building' }] }));
    expect(union === '*' ? union : [...union].sort()).toEqual([EX + 'Building', dc('Sensor')]);
    expect(typesSelectedBy(subscription({ entities: [{ type: 'Building;Sensor' }] }))).toEqual([EX + 'Building']);
    expect(typesSelectedBy(subscription({ entities: [{ type: 'Building' }, { type: '*' }] }))).toBe('*');
    expect(typesSelectedBy(subscription({ watchedAttributes: ['humidity'] }))).toBe('*');
  });
});
