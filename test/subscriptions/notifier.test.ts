// The notifier over a real store and write core, with the outside world (the receiver and the
// loading of a subscription's context) replaced: a subscription whose notifications cannot be built
// is a recorded failure that holds no other subscription, and the journal reader goes on.

import { afterEach, describe, expect, it } from 'vitest';
import { createChangeEmitter } from '../../src/events.js';
import { createEntityService, createWriteCore } from '../../src/entities/index.js';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import { anonymousIn, type Entity } from '../../src/ngsi/index.js';
import { createJournalFeed, openStore, type Store } from '../../src/store/index.js';
import {
  createNotifier, createSubscriptionRegistry, createSubscriptionService, type HttpDelivery, type Notifier, type NotificationContext, type NotifierDeps,
} from '../../src/subscriptions/index.js';
import { EX, mapper, T0 } from './support.js';

let store: Store;
let notifier: Notifier;

afterEach(async () => {
  await notifier.stop();
  store.close();
});

const context: NotificationContext = { ...mapper, bodyContext: 'https://example.org/ctx.jsonld', linkUrl: 'https://example.org/ctx.jsonld' };
const room = (n: number, value: number): Entity => ({
  id: `urn:ngsi-ld:Room:${n}`, types: [EX + 'Building'], createdAt: T0, modifiedAt: T0,
  attrs: { [EX + 'temperature']: [{ kind: 'Property', value, createdAt: T0, modifiedAt: T0, sub: {} }] },
});

function setUp(unloadable: string, send?: (d: HttpDelivery) => Promise<void>) {
  const clock = createFixedClock(T0);
  store = openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock });
  const events = createChangeEmitter(() => undefined);
  const feed = createJournalFeed({ journal: store.journal, log: silentLogger });
  events.on((c) => feed.announce(c));
  const core = createWriteCore({ store, events, clock });
  const entities = createEntityService({ store, core, clock, newId: () => crypto.randomUUID() });
  const registry = createSubscriptionRegistry([]);
  const subscriptions = createSubscriptionService({ store, registry, clock, newId: () => crypto.randomUUID() });
  const delivered: HttpDelivery[] = [];
  const deps: NotifierDeps = {
    store, feed, registry, clock, log: silentLogger, newId: () => crypto.randomUUID(),
    contextOf: async (sub) => {
      if (sub.id === unloadable) throw new Error('Unable to load the JSON-LD context');
      return context;
    },
    sendHttp: send ?? (async (d) => {
      delivered.push(d);
    }),
    sendMqtt: () => Promise.reject(new Error('no MQTT here')),
    options: { timeoutMs: 1_000, maxAttempts: 3, retryBaseMs: 1, retryMaxMs: 2, maxPending: 100, periodicMaxEntities: 10 },
  };
  notifier = createNotifier(deps);
  notifier.start();
  /** Stops the notifier, runs `meanwhile`, and starts a new one on the same store (a restart). */
  const restart = async (meanwhile: () => void): Promise<void> => {
    await notifier.stop();
    meanwhile();
    notifier = createNotifier(deps);
    notifier.start();
  };
  const subscribe = (id: string) => subscriptions.create(anonymousIn(''), {
    id, type: 'Subscription', entities: [{ type: 'Building' }], notification: { endpoint: { uri: `http://127.0.0.1:9/${id}` } },
  }, { mapper });
  return { entities, subscriptions, delivered, subscribe, restart };
}

describe('the notifier', () => {
  it('records a subscription whose notification cannot be built as failed, and goes on with the others', async () => {
    const { entities, subscriptions, delivered, subscribe } = setUp('urn:ngsi-ld:Subscription:bad');
    subscribe('urn:ngsi-ld:Subscription:bad');
    subscribe('urn:ngsi-ld:Subscription:good');
    await entities.create(anonymousIn(''), room(1, 20));
    await entities.create(anonymousIn(''), room(2, 21));
    await notifier.idle();
    expect(delivered.map((d) => [d.uri, (JSON.parse(d.body) as { data: unknown }).data])).toEqual([
      ['http://127.0.0.1:9/urn:ngsi-ld:Subscription:good', [expect.objectContaining({ id: 'urn:ngsi-ld:Room:1' })]],
      ['http://127.0.0.1:9/urn:ngsi-ld:Subscription:good', [expect.objectContaining({ id: 'urn:ngsi-ld:Room:2' })]],
    ]);
    const bad = subscriptions.get(anonymousIn(''), 'urn:ngsi-ld:Subscription:bad');
    expect(bad.delivery).toMatchObject({ status: 'failed', lastFailure: T0, timesSent: 2 });
    expect(bad.delivery.lastError).toContain('JSON-LD context');
    // The journal reader is not stuck: it is past both changes.
    expect(store.journal.cursor('notifier')).toBe(store.journal.lastSeq());
  });

  it('gives a notification up after max-attempts failures and delivers the next one', async () => {
    const delivered: number[] = [];
    // The receiver refuses every attempt of the first notification and takes the next one.
    const { entities, subscribe } = setUp('none', async (d) => {
      const value = (JSON.parse(d.body) as { data: Array<{ temperature: { value: number } }> }).data[0]!.temperature.value;
      if (value === 1) throw new Error('the endpoint answered 500');
      delivered.push(value);
    });
    subscribe('urn:ngsi-ld:Subscription:s');
    await entities.create(anonymousIn(''), room(1, 1));
    await entities.create(anonymousIn(''), room(2, 2));
    await notifier.idle();
    expect(delivered).toEqual([2]);
    expect(notifier.stats()).toMatchObject({ dropped: 1, sent: 1, failed: 3, pending: 0 });
  });
});

describe('the notifier\'s in-memory hand-over', () => {
  it('retries from the durable queue a handed-over notification whose delivery failed, in order', async () => {
    let calls = 0;
    const delivered: number[] = [];
    // Caught up after the first notification: the next ones are handed over in memory; the second
    // fails once and must come back from the queue with its attempt counted, before the third.
    const { entities, subscribe } = setUp('none', async (d) => {
      calls += 1;
      if (calls === 2) throw new Error('the endpoint answered 503');
      delivered.push((JSON.parse(d.body) as { data: Array<{ temperature: { value: number } }> }).data[0]!.temperature.value);
    });
    subscribe('urn:ngsi-ld:Subscription:s');
    await entities.create(anonymousIn(''), room(1, 1));
    await notifier.idle();
    await entities.create(anonymousIn(''), room(2, 2));
    await entities.create(anonymousIn(''), room(3, 3));
    await notifier.idle();
    expect(delivered).toEqual([1, 2, 3]);
    expect(notifier.stats()).toMatchObject({ sent: 3, failed: 1, dropped: 0, pending: 0 });
  });

  it('delivers what a previous run left in the queue, before what is queued after the start', async () => {
    const { entities, subscribe, delivered, restart } = setUp('none');
    subscribe('urn:ngsi-ld:Subscription:s');
    await entities.create(anonymousIn(''), room(1, 1));
    await notifier.idle();
    // A previous run's notifications: queued, never delivered (the process died).
    await restart(() => {
      const message = JSON.stringify({ uri: 'http://127.0.0.1:9/left', headers: { 'Content-Type': 'application/json' } });
      store.notifications.enqueue([1, 2].map((n) => ({
        tenant: '', subscriptionId: 'urn:ngsi-ld:Subscription:s', queuedAt: T0, message, body: JSON.stringify({ n }),
      })));
    });
    await entities.create(anonymousIn(''), room(2, 2));
    await notifier.idle();
    expect(delivered.map((d) => d.body.includes('Room:') ? d.body.match(/Room:(\d)/)![1] : d.body)).toEqual(['1', '{"n":1}', '{"n":2}', '2']);
    expect(store.notifications.size()).toBe(0);
  });
});
