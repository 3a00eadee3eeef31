// What the notifier knows of registrations (NGSI-LD §5.11.7): a registration subscription's
// members as queries of registrations (§5.10.2), and the registrations module's matching and
// rendering of a journaled registration state.

import { parseDateTime } from '../ngsi/index.js';
import { registrationStateOwner, showRegistrationState, type RegistrationQuery } from '../registrations/index.js';
import type { EntitySelector, RegistrationLens, Subscription } from '../subscriptions/index.js';

/** The entity types a selector names: one type, or a list of alternatives; undefined: any type. */
function typesOf(sel: EntitySelector): RegistrationQuery['types'] {
  const t = sel.type;
  if (t === '*') return undefined;
  if (t.kind === 'type') return [t.iri];
  if (t.kind === 'or' && t.terms.every((x) => x.kind === 'type')) return t.terms.flatMap((x) => (x.kind === 'type' ? [x.iri] : []));
  return undefined;
}

/** The filters every query of the subscription carries: watchedAttributes, q, csf, geoQ, scopeQ, temporalQ. */
function filtersOf(sub: Subscription): RegistrationQuery {
  const out: RegistrationQuery = {};
  if (sub.watchedAttributes !== undefined) out.attrs = sub.watchedAttributes;
  if (sub.q !== undefined) out.q = sub.q.expr;
  if (sub.csf !== undefined) out.csf = sub.csf.expr;
  if (sub.geoQ !== undefined) out.geoQ = sub.geoQ;
  if (sub.scopeQ !== undefined) out.scopeQ = sub.scopeQ.expr;
  const t = sub.temporalQ;
  if (t !== undefined) {
    // NGSI-LD §5.11.7: observedAt against observationInterval, createdAt and modifiedAt against managementInterval.
    out.timeQ = { timerel: t.timerel, timeAt: parseDateTime(t.timeAt) ?? 0, interval: t.timeproperty === 'observedAt' ? 'observationInterval' : 'managementInterval' };
    if (t.endTimeAt !== undefined) out.timeQ.endTimeAt = parseDateTime(t.endTimeAt) ?? 0;
  }
  return out;
}

/** A registration subscription as queries of registrations: one per entity selector (any of them matches). */
function queriesOf(sub: Subscription): RegistrationQuery[] {
  const base = filtersOf(sub);
  if (sub.entities === undefined) return [base];
  return sub.entities.map((sel) => {
    const q: RegistrationQuery = { ...base };
    const types = typesOf(sel);
    if (types !== undefined) q.types = types;
    if (sel.id !== undefined) q.ids = [sel.id];
    if (sel.idPattern !== undefined) q.idPattern = sel.idPattern;
    return q;
  });
}

export function createRegistrationLens(): RegistrationLens {
  // Queries per subscription object: a changed subscription is a new object.
  const cache = new WeakMap<Subscription, RegistrationQuery[]>();
  const queries = (sub: Subscription): RegistrationQuery[] => {
    let found = cache.get(sub);
    if (found === undefined) cache.set(sub, (found = queriesOf(sub)));
    return found;
  };
  return {
    show: (state, sub, mapper) => showRegistrationState(state, queries(sub), mapper),
    ownerOf: registrationStateOwner,
  };
}
