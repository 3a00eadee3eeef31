// Whether one change of one entity notifies one subscription (NGSI-LD §5.11): state, entity
// selectors, notificationTrigger with watchedAttributes, q, scopeQ and geoQ on the entity after the
// change (before it for a deletion), and throttling. Pure: the instant and the last notification come in.

import type { ChangeEvent } from '../events.js';
import { createLru } from '../lib/index.js';
import {
  compileGeoQuery, compileIdPattern, evaluateQ, evaluateScopeQ, evaluateTypeSelection, matchesGeo, type Entity, type GeoMatcher,
  type GeoQuery, type Iri, type Pattern,
} from '../ngsi/index.js';
import { statusOf, triggersOf, type EntitySelector, type NotificationTrigger, type Subscription } from './model.js';
import { changeTriggers, type AttributeEvent, type ChangeTriggers } from './triggers.js';

export interface MatchOptions {
  now: number;
  /**
   * When the subscription last notified (epoch ms), for throttling; default its recorded
   * lastNotification. A notifier that queues notifications passes the instant of the last one queued.
   */
  lastNotification?: number | undefined;
  /** changeTriggers(change), when the caller matches one change against many subscriptions. */
  fired?: ChangeTriggers | undefined;
  /** Compiled patterns and geo-queries, when the caller matches many changes. */
  cache?: MatchCache | undefined;
}

export interface SubscriptionMatch {
  /** The entity to notify: after the change, or as it was before a deletion. */
  entity: Entity;
  /** The triggers of the subscription that fired. */
  triggers: NotificationTrigger[];
  /** Attribute events that fired, for the watched attributes. */
  attributes: AttributeEvent[];
  deleted: boolean;
}

/**
 * Compiled idPatterns and geo-queries, kept by whoever matches many changes (the notifier): compiling
 * an RE2 pattern or a geometry costs far more than testing one entity against it.
 */
export interface MatchCache {
  pattern(source: string): Pattern;
  geo(query: GeoQuery): GeoMatcher;
}

export function createMatchCache(maxPatterns = 1_024): MatchCache {
  const patterns = createLru<string, Pattern>(maxPatterns);
  const geos = new WeakMap<GeoQuery, GeoMatcher>();
  return {
    pattern(source) {
      let p = patterns.get(source);
      if (p === undefined) {
        p = compileIdPattern(source);
        patterns.set(source, p);
      }
      return p;
    },
    geo(query) {
      let g = geos.get(query);
      if (g === undefined) {
        g = compileGeoQuery(query);
        geos.set(query, g);
      }
      return g;
    },
  };
}

/** NGSI-LD §5.2.33: type selection (or `*`), id, idPattern; all given must hold. */
export function selectsEntity(sel: EntitySelector, entity: Entity, cache?: MatchCache): boolean {
  if (sel.type !== '*' && !evaluateTypeSelection(sel.type, entity.types)) return false;
  if (sel.id !== undefined && sel.id !== entity.id) return false;
  if (sel.idPattern === undefined) return true;
  return (cache?.pattern(sel.idPattern) ?? compileIdPattern(sel.idPattern)).test(entity.id);
}

function isWatched(watched: readonly Iri[] | undefined, attrs: readonly Iri[]): boolean {
  return watched === undefined || attrs.some((a) => watched.includes(a));
}

/** The subscription's triggers this change fires, honouring watchedAttributes. */
function firedTriggers(sub: Subscription, fired: ChangeTriggers): { triggers: NotificationTrigger[]; attributes: AttributeEvent[] } {
  const wanted = triggersOf(sub);
  const watched = sub.watchedAttributes;
  const triggers: NotificationTrigger[] = [];
  if (fired.entity !== undefined && wanted.includes(fired.entity) && isWatched(watched, fired.touched)) triggers.push(fired.entity);
  const attributes = fired.attributes.filter((e) => wanted.includes(e.trigger) && (watched === undefined || watched.includes(e.attr)));
  for (const e of attributes) if (!triggers.includes(e.trigger)) triggers.push(e.trigger);
  return { triggers, attributes };
}

/** Whether the entity passes q, scopeQ and geoQ (NGSI-LD §4.9, §4.19, §4.10). */
function passesFilters(sub: Subscription, entity: Entity, cache?: MatchCache): boolean {
  if (sub.q !== undefined && !evaluateQ(sub.q.expr, entity)) return false;
  if (sub.scopeQ !== undefined && !evaluateScopeQ(sub.scopeQ.expr, entity.scope)) return false;
  if (sub.geoQ === undefined) return true;
  return cache === undefined ? matchesGeo(sub.geoQ, entity) : cache.geo(sub.geoQ).matchesEntity(entity);
}

/** Whether a live entity is one a subscription notifies about (its selectors, q, scopeQ, geoQ). */
export function matchesEntity(sub: Subscription, entity: Entity, cache?: MatchCache): boolean {
  if (sub.entities !== undefined && !sub.entities.some((sel) => selectsEntity(sel, entity, cache))) return false;
  return passesFilters(sub, entity, cache);
}

/**
 * The match of a change for a subscription, or undefined when it does not notify. History-only
 * changes and periodic (timeInterval) subscriptions never match; paused and expired ones neither.
 */
export function matchSubscription(sub: Subscription, change: ChangeEvent, opts: MatchOptions): SubscriptionMatch | undefined {
  if (change.kind === 'historyChanged' || sub.timeInterval !== undefined) return undefined;
  if (statusOf(sub, opts.now) !== 'active') return undefined;
  const deleted = change.kind === 'entityDeleted';
  const entity = deleted ? change.previous : change.entity;
  if (entity === undefined) return undefined;
  if (sub.entities !== undefined && !sub.entities.some((sel) => selectsEntity(sel, entity, opts.cache))) return undefined;
  const { triggers, attributes } = firedTriggers(sub, opts.fired ?? changeTriggers(change));
  if (triggers.length === 0) return undefined;
  if (!passesFilters(sub, entity, opts.cache)) return undefined;
  // NGSI-LD §5.2.12 throttling: at least that many seconds between two notifications.
  const last = opts.lastNotification ?? sub.delivery.lastNotification;
  if (sub.throttling !== undefined && last !== undefined && opts.now - last < sub.throttling * 1000) return undefined;
  return { entity, triggers, attributes, deleted };
}
