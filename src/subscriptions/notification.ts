// The Notification a subscription sends (NGSI-LD §5.2.19, §5.11): its body, with the matching
// entities in the requested representation, compacted with the subscription's context, and the
// headers to deliver it with. Pure: the instant, the id source and the term maps come in.

import {
  contextLinkValue, LOCATION, NGSI_LD_NULL, followLinks, formatDateTime, isProjected, nullPayloadOf, renderEntity, renderFeatureCollection,
  isPlainObject, type Attribute, type Entity, type Iri, type Json, type JsonObject, type LinkedLoader, type Member, type ProjectionTree, type Reached,
  type RenderOptions, type TermMapper,
} from '../ngsi/index.js';
import type { NotificationAccept, Subscription } from './model.js';
import { addPreviousValues, previousMembersOf } from './show-changes.js';

/** The subscription's context made ready: term maps, the body @context, and a URL for a Link header. */
export interface NotificationContext extends TermMapper {
  readonly bodyContext: Json;
  /** An absolute URL of the context (for application/json notifications). */
  readonly linkUrl: string;
}

/** One entity to notify about. */
export interface NotifiedEntity {
  /** The entity after the change (before it, for a deletion). */
  entity: Entity;
  /** The touched attributes before the change (ChangeEvent.previous), for showChanges. */
  previous?: Entity | undefined;
  /** When the entity was deleted: it is shown as id, type and deletedAt. */
  deletedAt?: number | undefined;
  /** Attributes the change deleted: shown as NGSI-LD Null in their kind's payload member. */
  deletedAttributes?: { attrs: Iri[]; at: number } | undefined;
}

export interface BuildNotificationInput {
  subscription: Subscription;
  entities: readonly NotifiedEntity[];
  context: NotificationContext;
  now: number;
  newId: () => string;
  /** Loads the entities relationships point to (join); without it, nothing is joined. */
  load?: LinkedLoader | undefined;
  /** The tenant, echoed as NGSILD-Tenant when not the default one. */
  tenant?: string | undefined;
}

export interface BuiltNotification {
  body: JsonObject;
  /** Content-Type, Link (application/json), NGSILD-Tenant, and the receiverInfo pairs. */
  headers: Record<string, string>;
}

const treeOf = (members: readonly Member[] | undefined): ProjectionTree | undefined =>
  members === undefined ? undefined : new Map(members.map((m) => [m, undefined]));

/** NGSI-LD §5.2.12 datasetId: only instances with these datasetIds (`@none`: the default instance). */
function keepDatasets(entity: Entity, datasetIds: readonly string[] | undefined): Entity {
  if (datasetIds === undefined) return entity;
  const attrs: Entity['attrs'] = {};
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    const kept = instances.filter((a) => datasetIds.includes(a.datasetId ?? '@none'));
    if (kept.length > 0) attrs[attr] = kept;
  }
  return { ...entity, attrs };
}

export function renderOptionsOf(sub: Subscription): RenderOptions {
  const n = sub.notification;
  const format = n.format === 'simplified' ? 'keyValues' : n.format;
  const opts: RenderOptions = { format, sysAttrs: n.sysAttrs };
  // Interface 2.4: attributes and sub-attributes of notified entities carry createdAt.
  if (format === 'normalized') opts.attributeCreatedAt = true;
  if (n.attributes !== undefined) opts.attrs = new Set(n.attributes);
  const pick = treeOf(n.pick);
  const omit = treeOf(n.omit);
  if (pick) opts.pick = pick;
  if (omit) opts.omit = omit;
  if (sub.lang !== undefined) opts.lang = sub.lang;
  return opts;
}

function isShown(attr: Iri, opts: RenderOptions): boolean {
  return isProjected(attr, opts.pick, opts.omit) && (opts.attrs === undefined || opts.attrs.has(attr));
}

/**
 * A deleted attribute (NGSI-LD §5.11 attributeDeleted): its kind with NGSI-LD Null in its payload
 * member; with showChanges, what it held before; with sysAttrs, its timestamps and when it went.
 */
function deletedAttribute(entity: Entity, attr: Iri, before: Entity['attrs'][string] | undefined, at: number, sub: Subscription,
  mapper: TermMapper, opts: RenderOptions): Json {
  if (opts.format === 'keyValues') return NGSI_LD_NULL;
  const first = before?.[0];
  const kind = first?.kind ?? 'Property';
  const out: JsonObject = { type: kind, ...nullPayloadOf(kind) };
  if (sub.notification.showChanges && before !== undefined) Object.assign(out, previousMembersOf(entity, attr, before, mapper));
  if (sub.notification.sysAttrs) {
    if (first !== undefined) {
      out.createdAt = formatDateTime(first.createdAt);
      out.modifiedAt = formatDateTime(first.modifiedAt);
    }
    out.deletedAt = formatDateTime(at);
  }
  return out;
}

/** Adds the attributes `attrs` as deleted to the rendered entity `out`, those the projection shows. */
function addDeleted(out: JsonObject, entity: Entity, attrs: readonly Iri[], before: Entity | undefined, at: number,
  sub: Subscription, mapper: TermMapper, opts: RenderOptions): void {
  for (const attr of attrs) {
    if (!isShown(attr, opts)) continue;
    const current = entity.attrs[attr];
    if (current === undefined) {
      out[mapper.compactIri(attr)] = deletedAttribute(entity, attr, before?.attrs[attr], at, sub, mapper, opts);
      continue;
    }
    // Some datasetId instances went, others stay (ETSI 046_22_06/07): the gone ones beside them.
    const kept = new Set(current.map((a) => a.datasetId));
    const gone = (before?.attrs[attr] ?? []).filter((a) => !kept.has(a.datasetId));
    if (gone.length > 0) addDeletedInstances(out, mapper.compactIri(attr), current, gone, entity, attr, at, sub, mapper, opts);
  }
}

/** Deleted datasetId instances of an attribute that keeps others, added to its rendered form. */
function addDeletedInstances(out: JsonObject, name: string, current: readonly Attribute[], gone: readonly Attribute[], entity: Entity,
  attr: Iri, at: number, sub: Subscription, mapper: TermMapper, opts: RenderOptions): void {
  const shown = out[name];
  if (shown === undefined) return;
  if (opts.format === 'keyValues') {
    // NGSI-LD §4.5.4: several instances in keyValues are {"dataset": {<datasetId or @none>: value}}.
    const dataset: JsonObject = isPlainObject(shown) && isPlainObject(shown['dataset']) ? { ...shown['dataset'] }
      : { [current[0]?.datasetId ?? '@none']: shown };
    for (const a of gone) dataset[a.datasetId ?? '@none'] = NGSI_LD_NULL;
    out[name] = { dataset };
    return;
  }
  const deleted = gone.map((a) => {
    const item = deletedAttribute(entity, attr, [a], at, sub, mapper, opts);
    return isPlainObject(item) && a.datasetId !== undefined ? { ...item, datasetId: a.datasetId } : item;
  });
  out[name] = [...(Array.isArray(shown) ? shown : [shown]), ...deleted];
}

function renderItem(item: NotifiedEntity, sub: Subscription, mapper: TermMapper, opts: RenderOptions): JsonObject {
  if (item.deletedAt !== undefined) {
    // NGSI-LD §5.11 entityDeleted: the entity is gone: id, type and when it went; its attributes as
    // deleted ones when they matter (showChanges: all, with what they held; else those that fired).
    const shell = renderEntity({ ...item.entity, attrs: {} }, mapper, { format: 'normalized', sysAttrs: false });
    const out: JsonObject = { id: shell.id ?? item.entity.id, type: shell.type ?? null };
    // sysAttrs: the entity's own timestamps as well (NGSI-LD §4.8).
    if (sub.notification.sysAttrs) {
      out.createdAt = formatDateTime(item.entity.createdAt);
      out.modifiedAt = formatDateTime(item.entity.modifiedAt);
    }
    out.deletedAt = formatDateTime(item.deletedAt);
    const attrs = sub.notification.showChanges ? Object.keys(item.entity.attrs) : item.deletedAttributes?.attrs ?? [];
    addDeleted(out, { ...item.entity, attrs: {} }, attrs, item.entity, item.deletedAt, sub, mapper, opts);
    return out;
  }
  const entity = keepDatasets(item.entity, sub.datasetId);
  const out = renderEntity(entity, mapper, opts);
  if (sub.notification.showChanges && item.previous !== undefined) addPreviousValues(out, entity, item.previous, mapper, opts.format);
  const gone = item.deletedAttributes;
  if (gone !== undefined) addDeleted(out, item.entity, gone.attrs, item.previous, gone.at, sub, mapper, opts);
  return out;
}

export function headersOf(sub: Subscription, context: NotificationContext, tenant: string | undefined): Record<string, string> {
  const accept: NotificationAccept = sub.notification.endpoint.accept;
  const headers: Record<string, string> = { 'Content-Type': accept };
  // NGSI-LD §6.3.5: a JSON notification names its context in a Link header.
  if (accept === 'application/json') {
    headers['Link'] = contextLinkValue(context.linkUrl);
  }
  if (tenant !== undefined && tenant !== '') headers['NGSILD-Tenant'] = tenant;
  for (const { key, value } of sub.notification.endpoint.receiverInfo ?? []) headers[key] = value;
  return headers;
}

/**
 * NGSI-LD §4.5.23 join: the linked entities of the notified ones, up to joinLevel; inline puts them
 * in their relationships, flat lists them after the notified entities (pushed into `flat`).
 */
function withJoin(input: BuildNotificationInput, opts: RenderOptions, flat: Reached[]): RenderOptions {
  const { join, joinLevel = 1 } = input.subscription.notification;
  if (join === undefined || input.load === undefined) return opts;
  const roots = input.entities.filter((i) => i.deletedAt === undefined).map((i) => i.entity);
  const { known, reached } = followLinks(roots, opts, joinLevel, input.load);
  if (join === 'inline') return { ...opts, linked: (id) => known.get(id), joinLevel };
  flat.push(...reached);
  return opts;
}

/**
 * The Notification for one subscription and the entities it notifies about (NGSI-LD §5.2.19):
 * `{id, type, subscriptionId, notifiedAt, data, @context}`; with application/geo+json, `data` is a
 * FeatureCollection of the entities (geometry from `location`).
 */
export function buildNotification(input: BuildNotificationInput): BuiltNotification {
  const { subscription: sub, context } = input;
  const opts = renderOptionsOf(sub);
  const flat: Reached[] = [];
  let data: Json;
  if (sub.notification.endpoint.accept === 'application/geo+json') {
    const live = input.entities.map((i) => (i.deletedAt === undefined ? keepDatasets(i.entity, sub.datasetId) : { ...i.entity, attrs: {} }));
    data = renderFeatureCollection(live, context, { ...opts, geometryProperty: LOCATION });
  } else {
    const joined = withJoin(input, opts, flat);
    const items = [
      ...input.entities.map((item) => renderItem(item, sub, context, joined)),
      ...flat.map((f) => renderEntity(f.entity, context, f.opts)),
    ];
    // A JSON-LD notification: each entity is a JSON-LD document of its own (Stellio, ETSI 046_14).
    data = sub.notification.endpoint.accept === 'application/ld+json' ? items.map((e) => ({ ...e, '@context': context.bodyContext })) : items;
  }
  const body: JsonObject = {
    id: `urn:ngsi-ld:Notification:${input.newId()}`,
    type: 'Notification',
    subscriptionId: sub.id,
    notifiedAt: formatDateTime(input.now),
    data,
    '@context': context.bodyContext,
  };
  return { body, headers: headersOf(sub, context, input.tenant) };
}
