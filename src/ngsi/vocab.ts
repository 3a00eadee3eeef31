// NGSI-LD vocabulary: every IRI literal the broker needs lives here (and in contexts/).

export const NGSI_LD = 'https://uri.etsi.org/ngsi-ld/';
export const DEFAULT_CONTEXT_VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';

/** The bundled core context, and the pattern every core context URL matches. */
export const CORE_CONTEXT_URL = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
export const CORE_CONTEXT_URL_PATTERN = /^https?:\/\/uri\.etsi\.org\/ngsi-ld\/v1\/ngsi-ld-core-context(-v\d+(\.\d+)*)?\.jsonld$/;

export const AUTHORIZATION_CONTEXT_URL =
  'https://easy-global-market.github.io/ngsild-api-data-models/authorization/jsonld-contexts/authorization.jsonld';
export const AUTHORIZATION_COMPOUND_CONTEXT_URL =
  'https://easy-global-market.github.io/ngsild-api-data-models/authorization/jsonld-contexts/authorization-compound.jsonld';
export const AUTHORIZATION_ONTOLOGY = 'https://ontology.eglobalmark.com/authorization#';

export const JSONLD_CONTEXT_REL = 'http://www.w3.org/ns/json-ld#context';

/** The value of a `Link` header naming a JSON-LD context (NGSI-LD §6.3.5). */
export const contextLinkValue = (url: string): string => `<${url}>; rel="${JSONLD_CONTEXT_REL}"; type="application/ld+json"`;

/** Attribute kinds (the `type` member of an attribute), by compact name. */
export const ATTRIBUTE_KINDS = [
  'Property', 'Relationship', 'GeoProperty', 'LanguageProperty', 'VocabProperty',
  'JsonProperty', 'ListProperty', 'ListRelationship',
] as const;
export type AttributeKind = (typeof ATTRIBUTE_KINDS)[number];
export const attributeKindIri = (kind: AttributeKind): string => NGSI_LD + kind;

/** Core attribute names with fixed IRIs (they are attributes, not core members). */
export const LOCATION = NGSI_LD + 'location';
export const OBSERVATION_SPACE = NGSI_LD + 'observationSpace';
export const OPERATION_SPACE = NGSI_LD + 'operationSpace';
export const SCOPE = NGSI_LD + 'scope';
export const SPECIFIC_ACCESS_POLICY = AUTHORIZATION_ONTOLOGY + 'specificAccessPolicy';
export const SUB = AUTHORIZATION_ONTOLOGY + 'sub';

/** The NGSI-LD Null value: in an update or merge it deletes what it stands for. */
export const NGSI_LD_NULL = 'urn:ngsi-ld:null';

/**
 * Members of entities that the core context defines and the broker handles structurally (never
 * expanded through the user's context).
 */
export const ENTITY_CORE_MEMBERS = new Set([
  'id', 'type', 'scope', '@context', 'createdAt', 'modifiedAt', 'deletedAt', 'expiresAt',
]);
