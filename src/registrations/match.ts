// Pure matching of registrations: a query of registrations (NGSI-LD §5.10.2 Query Context Source
// Registrations), and the overlaps of exclusive and redirect registrations (§4.3.6.3).

import {
  LOCATION, NGSI_LD, OBSERVATION_SPACE, OPERATION_SPACE, compileIdPattern, evaluateQ, evaluateScopeQ, isPlainObject, matchesGeo, parseDateTime,
  type Attribute, type Entity, type Iri, type Json,
} from '../ngsi/index.js';
import type { EntityInfo, Registration, RegistrationInfo, RegistrationQuery } from './model.js';

const testPattern = (pattern: string, id: string): boolean => compileIdPattern(pattern).test(id);

function entityInfoMatches(e: EntityInfo, q: RegistrationQuery): boolean {
  if (q.types !== undefined && !q.types.includes(e.type)) return false;
  if (q.ids !== undefined) {
    if (e.id !== undefined && !q.ids.includes(e.id)) return false;
    if (e.idPattern !== undefined && !q.ids.some((id) => testPattern(e.idPattern ?? '', id))) return false;
  }
  if (q.idPattern !== undefined) {
    if (e.id !== undefined && !testPattern(q.idPattern, e.id)) return false;
    if (e.idPattern !== undefined && e.idPattern !== q.idPattern) return false;
  }
  return true;
}

const namesOf = (info: RegistrationInfo): Iri[] => [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];

function infoMatches(info: RegistrationInfo, q: RegistrationQuery): boolean {
  if (info.entities !== undefined && !info.entities.some((e) => entityInfoMatches(e, q))) return false;
  if (q.attrs === undefined) return true;
  const names = namesOf(info);
  return names.length === 0 || names.some((n) => q.attrs?.includes(n));
}

function property(value: Json): Attribute {
  // An additional property may be written as an NGSI-LD Property; q compares its value then.
  const inner = isPlainObject(value) && value['type'] === 'Property' && 'value' in value ? (value['value'] ?? null) : value;
  return { kind: 'Property', value: inner, createdAt: 0, modifiedAt: 0, sub: {} };
}

function geoProperty(value: Json): Attribute {
  // NOTE: a stored geometry was checked by checkGeometry when the registration was written.
  return { kind: 'GeoProperty', value: value as { type: string }, createdAt: 0, modifiedAt: 0, sub: {} };
}

/** The registration as an entity of its properties, for q, csf and geo-queries (§5.10.2: "registration properties"). */
function asEntity(reg: Registration): Entity {
  const attrs: Entity['attrs'] = {};
  for (const [iri, value] of Object.entries(reg.properties)) attrs[iri] = [property(value)];
  const members: Array<[string, Json | undefined]> = [
    ['endpoint', reg.endpoint], ['mode', reg.mode], ['registrationName', reg.registrationName], ['description', reg.description],
    ['tenant', reg.tenant], ['operations', reg.operations],
  ];
  for (const [name, value] of members) if (value !== undefined) attrs[NGSI_LD + name] = [property(value)];
  const geo: Array<[Iri, Json | undefined]> = [[LOCATION, reg.location], [OBSERVATION_SPACE, reg.observationSpace], [OPERATION_SPACE, reg.operationSpace]];
  for (const [iri, value] of geo) if (value !== undefined) attrs[iri] = [geoProperty(value)];
  const out: Entity = { id: reg.id, types: [], attrs, createdAt: reg.createdAt, modifiedAt: reg.modifiedAt };
  if (reg.scope !== undefined) out.scope = reg.scope;
  return out;
}

/** NGSI-LD §5.10.2: the interval a temporal query names overlaps the query's time span; a registration without it does not match. */
function matchesTime(reg: Registration, t: NonNullable<RegistrationQuery['timeQ']>): boolean {
  const interval = reg[t.interval];
  if (interval === undefined) return false;
  const start = parseDateTime(interval.startAt) ?? Number.NEGATIVE_INFINITY;
  const end = interval.endAt === undefined ? Number.POSITIVE_INFINITY : (parseDateTime(interval.endAt) ?? Number.POSITIVE_INFINITY);
  if (t.timerel === 'before') return start < t.timeAt;
  if (t.timerel === 'after') return end > t.timeAt;
  return start < (t.endTimeAt ?? Number.POSITIVE_INFINITY) && end > t.timeAt;
}

/** Whether a registration answers a query: one RegistrationInfo matches entities and attributes, and every filter holds. */
export function matchesQuery(reg: Registration, q: RegistrationQuery): boolean {
  if (!reg.information.some((info) => infoMatches(info, q))) return false;
  if (q.scopeQ !== undefined && !evaluateScopeQ(q.scopeQ, reg.scope)) return false;
  if (q.timeQ !== undefined && !matchesTime(reg, q.timeQ)) return false;
  if (q.q === undefined && q.csf === undefined && q.geoQ === undefined) return true;
  const entity = asEntity(reg);
  if (q.q !== undefined && !evaluateQ(q.q, entity)) return false;
  if (q.csf !== undefined && !evaluateQ(q.csf, entity)) return false;
  return q.geoQ === undefined || matchesGeo(q.geoQ, entity);
}

/**
 * NGSI-LD §5.11.7: the registration restricted to its RegistrationInfo elements that match one of
 * the queries matching it whole; undefined when no query matches it.
 */
export function matchingPart(reg: Registration, queries: readonly RegistrationQuery[]): Registration | undefined {
  const hits = queries.filter((q) => matchesQuery(reg, q));
  if (hits.length === 0) return undefined;
  return { ...reg, information: reg.information.filter((info) => hits.some((q) => infoMatches(info, q))) };
}

function entitiesOverlap(a: EntityInfo, b: EntityInfo): boolean {
  if (a.type !== b.type) return false;
  if (a.id !== undefined && b.id !== undefined) return a.id === b.id;
  if (a.id !== undefined && b.idPattern !== undefined) return testPattern(b.idPattern, a.id);
  if (b.id !== undefined && a.idPattern !== undefined) return testPattern(a.idPattern, b.id);
  if (a.idPattern !== undefined && b.idPattern !== undefined) return a.idPattern === b.idPattern;
  return true;
}

function infosOverlap(a: RegistrationInfo, b: RegistrationInfo): boolean {
  if (a.entities !== undefined && b.entities !== undefined && !a.entities.some((x) => b.entities?.some((y) => entitiesOverlap(x, y)))) return false;
  const an = namesOf(a);
  const bn = namesOf(b);
  return an.length === 0 || bn.length === 0 || an.some((n) => bn.includes(n));
}

/** Whether two registrations cover a same entity and attribute (NGSI-LD §4.3.6.3). */
export function registrationsOverlap(a: Registration, b: Registration): boolean {
  return a.information.some((x) => b.information.some((y) => infosOverlap(x, y)));
}

/**
 * NGSI-LD §4.3.6.3: an exclusive registration excludes any further exclusive or redirect one for
 * the same entity id and attribute, and a redirect one may not overlap an exclusive one; inclusive
 * and auxiliary ones, and redirect ones among themselves, may overlap. The modes a new
 * registration of this mode clashes with.
 */
export function clashingModes(mode: Registration['mode']): Array<Registration['mode']> {
  if (mode === 'exclusive') return ['exclusive', 'redirect'];
  if (mode === 'redirect') return ['exclusive'];
  return [];
}
