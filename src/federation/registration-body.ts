// What the gateway registers upstream about itself: the entity types of its live entities and their
// attribute names (from the store's discovery indexes, narrowed by federation.register.types/attrs),
// and the context source registration body built from them (NGSI-LD §5.2.9, §5.2.10).

import type { Iri, JsonObject, TermMapper } from '../ngsi/index.js';
import type { Store } from '../store/index.js';

/** Per registered type, its attribute names, each marked true when it is a relationship. */
export type HeldTypes = Map<Iri, Map<Iri, boolean>>;

/** The registration's mode and the operations it names (NGSI-LD §4.20 Table 4.20-2). */
export type RegisterMode = 'auxiliary' | 'inclusive';

/** NGSI-LD §5.9.2.4: an auxiliary registration names read operations only. */
const OPERATIONS_OF: Readonly<Record<RegisterMode, readonly string[]>> = {
  auxiliary: ['retrieveOps'],
  // Every write the gateway accepts: an inclusive source receives the upstream's writes too.
  inclusive: ['retrieveOps', 'updateOps', 'createEntity', 'mergeEntity', 'appendAttrs', 'deleteAttrs', 'deleteEntity'],
};

export interface HeldFilter {
  /** Expanded type IRIs registered; undefined: every type held. */
  types: ReadonlySet<Iri> | undefined;
  /** Expanded attribute IRIs registered; undefined: every attribute of the registered types. */
  attrs: ReadonlySet<Iri> | undefined;
}

const RELATIONSHIP_KINDS = new Set(['Relationship', 'ListRelationship']);

/** The types and attributes of the tenant's live entities, as the filter narrows them (grouped queries over the discovery indexes). */
export function readHeldTypes(store: Pick<Store, 'discovery'>, tenant: string, filter: HeldFilter): HeldTypes {
  const scope = { tenant };
  const relationships = new Set<Iri>();
  for (const info of store.discovery.attributeInfos(scope)) {
    if (info.kinds.some((k) => RELATIONSHIP_KINDS.has(k))) relationships.add(info.attr);
  }
  const held: HeldTypes = new Map();
  for (const { type, attrs } of store.discovery.typesWithAttributes(scope)) {
    if (filter.types !== undefined && !filter.types.has(type)) continue;
    const kept = attrs.filter((a) => filter.attrs === undefined || filter.attrs.has(a));
    // Narrowed to attributes this type has none of: the type is not registered.
    if (filter.attrs !== undefined && kept.length === 0) continue;
    held.set(type, new Map(kept.map((a) => [a, relationships.has(a)])));
  }
  return held;
}

/** Whether `held` is what was registered (same types, same attributes). */
export function isSameHeld(a: HeldTypes, b: HeldTypes): boolean {
  if (a.size !== b.size) return false;
  for (const [type, attrs] of a) {
    const other = b.get(type);
    if (other === undefined || other.size !== attrs.size) return false;
    for (const [attr, isRel] of attrs) if (other.get(attr) !== isRel) return false;
  }
  return true;
}

/** NGSI-LD §5.2.10 RegistrationInfo, one per type, names compacted with the upstream context. */
export function informationOf(held: HeldTypes, mapper: TermMapper): JsonObject[] {
  return [...held].map(([type, attrs]) => {
    const propertyNames: string[] = [];
    const relationshipNames: string[] = [];
    for (const [attr, isRel] of attrs) (isRel ? relationshipNames : propertyNames).push(mapper.compactIri(attr));
    return {
      entities: [{ type: mapper.compactIri(type) }],
      ...(propertyNames.length > 0 ? { propertyNames } : {}),
      ...(relationshipNames.length > 0 ? { relationshipNames } : {}),
    };
  });
}

export interface RegistrationFacts {
  id: string;
  name: string;
  mode: RegisterMode;
  endpoint: string;
  /** The local tenant the upstream names in the requests it forwards ('' : the default tenant). */
  tenant: string;
  /** The upstream context's URL when one is configured: the upstream sends it as Link when it forwards. */
  jsonldContext: string | undefined;
}

/** NGSI-LD §5.2.9 ContextSourceRegistration: the whole body (POST), or the members a full update sets (PATCH). */
export function registrationBody(facts: RegistrationFacts, information: JsonObject[], expiresAt: string, whole: boolean): JsonObject {
  return {
    ...(whole ? { id: facts.id, type: 'ContextSourceRegistration' } : {}),
    registrationName: facts.name,
    information,
    mode: facts.mode,
    operations: [...OPERATIONS_OF[facts.mode]],
    endpoint: facts.endpoint,
    expiresAt,
    ...(facts.tenant !== '' ? { tenant: facts.tenant } : {}),
    ...(facts.jsonldContext !== undefined ? { contextSourceInfo: [{ key: 'jsonldContext', value: facts.jsonldContext }] } : {}),
  };
}
