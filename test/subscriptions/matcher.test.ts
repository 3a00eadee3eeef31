// The matcher (NGSI-LD §5.11): each trigger, watchedAttributes, q / scopeQ / geoQ, isActive,
// expiresAt and throttling, each shown to fire and not to fire.

import { describe, expect, it } from 'vitest';
import { matchSubscription, type MatchOptions } from '../../src/subscriptions/index.js';
import { change, dc, entity, EX, subscription, T0 } from './support.js';

const TEMP = EX + 'temperature';
const HUM = dc('humidity');
const now: MatchOptions = { now: T0 };

const b1 = entity({ temperature: { type: 'Property', value: 20 } });
const b1Warm = entity({ temperature: { type: 'Property', value: 25 } }, T0 + 1);
const b1WithHumidity = entity({ temperature: { type: 'Property', value: 20 }, humidity: { type: 'Property', value: 40 } }, T0 + 1);

const created = change('entityCreated', { after: b1, written: [TEMP] });
const updated = change('entityUpdated', { before: b1, after: b1Warm, written: [TEMP] });
const attrAdded = change('entityUpdated', { before: b1, after: b1WithHumidity, written: [HUM] });
const attrDeleted = change('entityUpdated', { before: b1WithHumidity, after: b1, deleted: [HUM] });
const replaced = change('entityReplaced', { before: b1, after: b1Warm, written: [TEMP] });
const deleted = change('entityDeleted', { before: b1 });
const history = change('historyChanged', { before: b1, after: b1, written: [TEMP] });

const fires = (s: ReturnType<typeof subscription>, c: ReturnType<typeof change>, opts: MatchOptions = now): boolean => matchSubscription(s, c, opts) !== undefined;

describe('notificationTrigger [§5.2.12]', () => {
  const onlyTrigger = (t: string) => subscription({ entities: [{ type: 'Building' }], notificationTrigger: [t] });

  it('defaults to attributeCreated and attributeUpdated: creation and updates fire, deletion does not', () => {
    const s = subscription({ entities: [{ type: 'Building' }] });
    expect(fires(s, created)).toBe(true);
    expect(fires(s, updated)).toBe(true);
    expect(fires(s, attrAdded)).toBe(true);
    expect(fires(s, attrDeleted)).toBe(false);
    expect(fires(s, deleted)).toBe(false);
  });

  it('entityCreated fires on creation only', () => {
    const s = onlyTrigger('entityCreated');
    expect(fires(s, created)).toBe(true);
    expect([updated, replaced, deleted, attrDeleted].some((c) => fires(s, c))).toBe(false);
  });

  it('entityUpdated fires on updates and replacements only', () => {
    const s = onlyTrigger('entityUpdated');
    expect(fires(s, updated)).toBe(true);
    expect(fires(s, replaced)).toBe(true);
    expect(fires(s, attrDeleted)).toBe(true);
    expect(fires(s, created) || fires(s, deleted)).toBe(false);
  });

  it('entityDeleted fires on deletion only, with the entity as it was', () => {
    const s = onlyTrigger('entityDeleted');
    const m = matchSubscription(s, deleted, now);
    expect(m?.deleted).toBe(true);
    expect(m?.entity.id).toBe('urn:ngsi-ld:Building:b1');
    expect([created, updated, replaced].some((c) => fires(s, c))).toBe(false);
  });

  it('attributeCreated fires when an attribute appears, not when one changes', () => {
    const s = onlyTrigger('attributeCreated');
    expect(fires(s, attrAdded)).toBe(true);
    expect(fires(s, created)).toBe(true);
    expect(fires(s, updated)).toBe(false);
    expect(fires(s, attrDeleted)).toBe(false);
  });

  it('attributeUpdated fires when an existing attribute is written, not when one appears', () => {
    const s = onlyTrigger('attributeUpdated');
    expect(matchSubscription(s, updated, now)?.attributes).toEqual([{ attr: TEMP, trigger: 'attributeUpdated' }]);
    expect(fires(s, attrAdded)).toBe(false);
    expect(fires(s, created)).toBe(false);
  });

  it('attributeDeleted fires when an attribute goes, not otherwise', () => {
    const s = onlyTrigger('attributeDeleted');
    expect(matchSubscription(s, attrDeleted, now)?.triggers).toEqual(['attributeDeleted']);
    expect([created, updated, attrAdded].some((c) => fires(s, c))).toBe(false);
    // An entity deleted takes its attributes with it: each is deleted too.
    expect(matchSubscription(s, deleted, now)?.triggers).toEqual(['attributeDeleted']);
  });

  it('tells a new datasetId instance (created) from a changed one (updated)', () => {
    const multi = entity({ temperature: [{ type: 'Property', value: 20 }, { type: 'Property', value: 5, datasetId: 'urn:ds:out' }] });
    const c = change('entityUpdated', { before: b1, after: multi, written: [TEMP] });
    expect(matchSubscription(onlyTrigger('attributeCreated'), c, now)?.attributes).toEqual([{ attr: TEMP, trigger: 'attributeCreated' }]);
    expect(fires(onlyTrigger('attributeUpdated'), c)).toBe(false);
  });

  it('never fires on history-only changes', () => {
    const s = subscription({ entities: [{ type: 'Building' }], notificationTrigger: ['entityUpdated', 'attributeUpdated'] });
    expect(fires(s, history)).toBe(false);
  });
});

describe('entity selectors [§5.2.33]', () => {
  it('fires for a selected type, id or idPattern, and not for others', () => {
    expect(fires(subscription({ entities: [{ type: 'Building' }] }), updated)).toBe(true);
    expect(fires(subscription({ entities: [{ type: 'Sensor' }] }), updated)).toBe(false);
    expect(fires(subscription({ entities: [{ type: 'Building', id: 'urn:ngsi-ld:Building:b1' }] }), updated)).toBe(true);
    expect(fires(subscription({ entities: [{ type: 'Building', id: 'urn:ngsi-ld:Building:b2' }] }), updated)).toBe(false);
    expect(fires(subscription({ entities: [{ type: 'Building', idPattern: 'b[0-9]$' }] }), updated)).toBe(true);
    expect(fires(subscription({ entities: [{ type: 'Building', idPattern: '^urn:x' }] }), updated)).toBe(false);
    expect(fires(subscription({ entities: [{ type: 'Sensor' }, { type: '*' }] }), updated)).toBe(true);
  });
});

describe('watchedAttributes [§5.2.12]', () => {
  it('fires when a watched attribute is touched, not when only others are', () => {
    const s = subscription({ entities: [{ type: 'Building' }], watchedAttributes: ['humidity'] });
    expect(fires(s, attrAdded)).toBe(true);
    expect(fires(s, updated)).toBe(false);
  });

  it('with watchedAttributes alone (no entities), matches any type touching them', () => {
    const s = subscription({ watchedAttributes: ['temperature'] });
    expect(fires(s, updated)).toBe(true);
    expect(fires(s, attrAdded)).toBe(false);
  });

  it('applies to entity-level triggers too: creation fires only when the entity has a watched attribute', () => {
    const s = subscription({ watchedAttributes: ['humidity'], notificationTrigger: ['entityCreated'] });
    expect(fires(s, created)).toBe(false);
    expect(fires(s, change('entityCreated', { after: b1WithHumidity, written: [TEMP, HUM] }))).toBe(true);
  });
});

describe('q, scopeQ and geoQ on the entity after the change', () => {
  it('q: fires once the update makes it true, not before', () => {
    const s = subscription({ entities: [{ type: 'Building' }], q: 'temperature>22' });
    expect(fires(s, updated)).toBe(true);
    expect(fires(s, created)).toBe(false);
  });

  it('q on a deletion is evaluated on the entity before it', () => {
    const s = subscription({ entities: [{ type: 'Building' }], q: 'temperature==20', notificationTrigger: ['entityDeleted'] });
    expect(fires(s, deleted)).toBe(true);
    const other = subscription({ entities: [{ type: 'Building' }], q: 'temperature==21', notificationTrigger: ['entityDeleted'] });
    expect(fires(other, deleted)).toBe(false);
  });

  it('scopeQ: fires for an entity in the scope, not outside it', () => {
    const scoped = entity({ scope: '/Berlin/Mitte', temperature: { type: 'Property', value: 20 } });
    const c = change('entityCreated', { after: scoped, written: [TEMP] });
    expect(fires(subscription({ entities: [{ type: 'Building' }], scopeQ: '/Berlin/#' }), c)).toBe(true);
    expect(fires(subscription({ entities: [{ type: 'Building' }], scopeQ: '/Paris/#' }), c)).toBe(false);
  });

  it('geoQ: fires for an entity near the point, not for one far away', () => {
    const at = (lon: number) => change('entityCreated', {
      after: entity({ location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [lon, 52.55] } } }), written: [],
    });
    const s = subscription({ entities: [{ type: 'Building' }], geoQ: { georel: 'near;maxDistance==1000', geometry: 'Point', coordinates: [13.39, 52.55] } });
    expect(fires(s, at(13.391))).toBe(true);
    expect(fires(s, at(14.5))).toBe(false);
  });
});

describe('state and timing', () => {
  it('isActive=false never fires; active does', () => {
    expect(fires(subscription({ entities: [{ type: 'Building' }], isActive: false }), updated)).toBe(false);
    expect(fires(subscription({ entities: [{ type: 'Building' }], isActive: true }), updated)).toBe(true);
  });

  it('expiresAt: fires before it, not from it on', () => {
    const s = subscription({ entities: [{ type: 'Building' }], expiresAt: '2024-01-01T00:01:00Z' });
    expect(fires(s, updated, { now: T0 + 59_999 })).toBe(true);
    expect(fires(s, updated, { now: T0 + 60_000 })).toBe(false);
  });

  it('throttling: does not fire within the period after the last notification, fires after it', () => {
    const s = subscription({ entities: [{ type: 'Building' }], throttling: 10 });
    expect(fires(s, updated, { now: T0 })).toBe(true);
    expect(fires(s, updated, { now: T0 + 9_999, lastNotification: T0 })).toBe(false);
    expect(fires(s, updated, { now: T0 + 10_000, lastNotification: T0 })).toBe(true);
    // Without a given instant, the recorded lastNotification counts.
    const recorded = { ...s, delivery: { timesSent: 1, lastNotification: T0 } };
    expect(fires(recorded, updated, { now: T0 + 5_000 })).toBe(false);
  });

  it('periodic (timeInterval) subscriptions never fire on changes', () => {
    expect(fires(subscription({ entities: [{ type: 'Building' }], timeInterval: 60 }), updated)).toBe(false);
  });
});

describe('match cache', () => {
  it('compiles an idPattern once and gives the same answers as compiling it every time', async () => {
    const { createMatchCache, selectsEntity: selects } = await import('../../src/subscriptions/index.js');
    const cache = createMatchCache();
    const sel = { type: '*' as const, idPattern: '^urn:ngsi-ld:Building:b[0-9]$' };
    expect(cache.pattern(sel.idPattern)).toBe(cache.pattern(sel.idPattern));
    for (const id of ['urn:ngsi-ld:Building:b1', 'urn:ngsi-ld:Building:bx']) {
      const e = entity({ id });
      expect(selects(sel, e, cache)).toBe(selects(sel, e));
    }
  });
});
