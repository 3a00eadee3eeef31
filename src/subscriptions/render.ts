// A subscription back to compact JSON for the API (NGSI-LD §5.2.12): names compacted with the
// request's context, status computed, read-only delivery members inside `notification`.

import { formatDateTime, type GeoQuery, type Json, type JsonObject, type TermMapper, type TypeExpr } from '../ngsi/index.js';
import type { EntitySelector, NotificationParams, Subscription } from './model.js';
import { statusOf, triggersOf } from './model.js';

/** A type selection as text (NGSI-LD §4.17): `;` AND, `,` OR, parentheses where a junction nests. */
export function typeSelectionText(expr: TypeExpr | '*', mapper: TermMapper, nested = false): string {
  if (expr === '*') return '*';
  if (expr.kind === 'type') return mapper.compactIri(expr.iri);
  const text = expr.terms.map((t) => typeSelectionText(t, mapper, true)).join(expr.kind === 'and' ? ';' : ',');
  return nested ? `(${text})` : text;
}

function renderSelector(sel: EntitySelector, mapper: TermMapper): JsonObject {
  const out: JsonObject = { type: typeSelectionText(sel.type, mapper) };
  if (sel.id !== undefined) out.id = sel.id;
  if (sel.idPattern !== undefined) out.idPattern = sel.idPattern;
  return out;
}

function renderGeoQ(geoQ: GeoQuery, mapper: TermMapper): JsonObject {
  const georel = geoQ.georel === 'near' ? `near;${geoQ.distance.bound}==${geoQ.distance.metres}` : geoQ.georel;
  // NOTE: a query geometry is one of the GeoJSON types; its coordinates are plain JSON arrays.
  return { georel, geometry: geoQ.geometry.type, coordinates: geoQ.geometry.coordinates as Json, geoproperty: mapper.compactIri(geoQ.geoproperty) };
}

function renderNotification(sub: Subscription, n: NotificationParams, mapper: TermMapper): JsonObject {
  const compact = (names: readonly string[]): Json => names.map((a) => (a === 'id' || a === 'type' ? a : mapper.compactIri(a)));
  const out: JsonObject = {};
  if (n.attributes !== undefined) out.attributes = compact(n.attributes);
  if (n.pick !== undefined) out.pick = compact(n.pick);
  if (n.omit !== undefined) out.omit = compact(n.omit);
  out.format = n.format;
  // Members at their default are left out, as Stellio shows them (and the ETSI suite expects).
  if (n.sysAttrs) out.sysAttrs = true;
  if (n.showChanges) out.showChanges = true;
  if (n.join !== undefined) out.join = n.join;
  if (n.joinLevel !== undefined) out.joinLevel = n.joinLevel;
  const e = n.endpoint;
  const endpoint: JsonObject = { uri: e.uri, accept: e.accept };
  if (e.timeout !== undefined) endpoint.timeout = e.timeout;
  if (e.receiverInfo !== undefined) endpoint.receiverInfo = e.receiverInfo.map((p) => ({ key: p.key, value: p.value }));
  if (e.notifierInfo !== undefined) endpoint.notifierInfo = e.notifierInfo.map((p) => ({ key: p.key, value: p.value }));
  out.endpoint = endpoint;
  const d = sub.delivery;
  if (d.status !== undefined) out.status = d.status;
  if (d.timesSent > 0) out.timesSent = d.timesSent;
  if (d.lastNotification !== undefined) out.lastNotification = formatDateTime(d.lastNotification);
  if (d.lastSuccess !== undefined) out.lastSuccess = formatDateTime(d.lastSuccess);
  if (d.lastFailure !== undefined) out.lastFailure = formatDateTime(d.lastFailure);
  // Kept with lastFailure after a later success (NGSI-LD §5.2.14 keeps lastFailure): why that failure failed.
  if (d.lastFailure !== undefined && d.lastError !== undefined) out.lastFailureReason = d.lastError;
  return out;
}

/**
 * The subscription as the API shows it; `@context` is the edge's business. `suspended`: why it is not
 * notified (owners.ts): shown as status `paused` with that reason in `statusReason`.
 */
export function renderSubscription(
  sub: Subscription, mapper: TermMapper, now: number, opts: { sysAttrs?: boolean; suspended?: string | undefined } = {},
): JsonObject {
  const out: JsonObject = { id: sub.id, type: 'Subscription' };
  if (sub.subscriptionName !== undefined) out.subscriptionName = sub.subscriptionName;
  if (sub.description !== undefined) out.description = sub.description;
  if (sub.entities !== undefined) out.entities = sub.entities.map((s) => renderSelector(s, mapper));
  if (sub.watchedAttributes !== undefined) out.watchedAttributes = sub.watchedAttributes.map((a) => mapper.compactIri(a));
  // A registration subscription has no notificationTrigger (NGSI-LD §5.11: its triggers are the registrations' changes).
  if (sub.csource !== true) out.notificationTrigger = [...triggersOf(sub)];
  if (sub.timeInterval !== undefined) out.timeInterval = sub.timeInterval;
  if (sub.q !== undefined) out.q = sub.q.text;
  if (sub.geoQ !== undefined) out.geoQ = renderGeoQ(sub.geoQ, mapper);
  if (sub.scopeQ !== undefined) out.scopeQ = sub.scopeQ.text;
  if (sub.csf !== undefined) out.csf = sub.csf.text;
  if (sub.temporalQ !== undefined) out.temporalQ = { ...sub.temporalQ };
  if (!sub.isActive) out.isActive = false;
  if (sub.expiresAt !== undefined) out.expiresAt = sub.csource === true && sub.expiresAtText !== undefined ? sub.expiresAtText : formatDateTime(sub.expiresAt);
  if (sub.throttling !== undefined) out.throttling = sub.throttling;
  if (sub.lang !== undefined) out.lang = sub.lang;
  if (sub.datasetId !== undefined) out.datasetId = [...sub.datasetId];
  if (sub.jsonldContext !== undefined) out.jsonldContext = sub.jsonldContext;
  out.notification = renderNotification(sub, sub.notification, mapper);
  out.status = opts.suspended === undefined ? statusOf(sub, now) : 'paused';
  if (opts.suspended !== undefined) out.statusReason = opts.suspended;
  if (opts.sysAttrs === true) {
    out.createdAt = formatDateTime(sub.createdAt);
    out.modifiedAt = formatDateTime(sub.modifiedAt);
  }
  return out;
}
