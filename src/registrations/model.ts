// The context source registration model (NGSI-LD §5.2.9 CSourceRegistration, §5.2.10
// RegistrationInfo, §5.2.8 EntityInfo, §5.2.34 RegistrationManagementInfo) in expanded form: entity
// types and attribute names are IRIs; additional registration properties keyed by IRI.

import type { GeoQuery, Iri, Json, QExpr, ScopeExpr } from '../ngsi/index.js';

/** NGSI-LD §4.3.6 registration modes; inclusive when absent. */
export const REGISTRATION_MODES = ['inclusive', 'exclusive', 'redirect', 'auxiliary'] as const;
export type RegistrationMode = (typeof REGISTRATION_MODES)[number];

/** NGSI-LD §4.20 Table 4.20-1: the operations a registration may name. */
export const OPERATIONS = [
  'createEntity', 'updateEntity', 'appendAttrs', 'updateAttrs', 'deleteAttrs', 'deleteEntity', 'createBatch', 'upsertBatch',
  'updateBatch', 'deleteBatch', 'upsertTemporal', 'appendAttrsTemporal', 'deleteAttrsTemporal', 'updateAttrsTemporal',
  'deleteAttrInstanceTemporal', 'deleteTemporal', 'mergeEntity', 'replaceEntity', 'replaceAttrs', 'mergeBatch', 'purgeEntity',
  'retrieveEntity', 'queryEntity', 'queryBatch', 'retrieveTemporal', 'queryTemporal', 'retrieveEntityTypes',
  'retrieveEntityTypeDetails', 'retrieveEntityTypeInfo', 'retrieveAttrTypes', 'retrieveAttrTypeDetails', 'retrieveAttrTypeInfo',
  'createSubscription', 'updateSubscription', 'retrieveSubscription', 'querySubscription', 'deleteSubscription',
] as const;
export type Operation = (typeof OPERATIONS)[number];

const RETRIEVE_TYPES: readonly Operation[] = [
  'retrieveEntityTypes', 'retrieveEntityTypeDetails', 'retrieveEntityTypeInfo', 'retrieveAttrTypes', 'retrieveAttrTypeDetails', 'retrieveAttrTypeInfo',
];

/** NGSI-LD §4.20 Table 4.20-2: the named groups of operations. */
export const OPERATION_GROUPS: Readonly<Record<string, readonly Operation[]>> = {
  federationOps: [
    'retrieveEntity', 'queryEntity', 'queryBatch', ...RETRIEVE_TYPES,
    'createSubscription', 'updateSubscription', 'retrieveSubscription', 'querySubscription', 'deleteSubscription',
  ],
  updateOps: ['updateEntity', 'updateAttrs', 'replaceEntity', 'replaceAttrs'],
  retrieveOps: ['retrieveEntity', 'queryEntity'],
  redirectionOps: [
    'createEntity', 'updateEntity', 'appendAttrs', 'updateAttrs', 'deleteAttrs', 'deleteEntity', 'mergeEntity', 'replaceEntity',
    'replaceAttrs', 'retrieveEntity', 'queryEntity', ...RETRIEVE_TYPES,
  ],
};

/** NGSI-LD §5.2.9: the operations when `operations` is absent. */
export const DEFAULT_OPERATIONS: readonly string[] = ['federationOps'];

/** Operations that only read (an auxiliary registration may name no other, §5.9.2.4). */
export const READ_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>([
  'retrieveEntity', 'queryEntity', 'queryBatch', 'retrieveTemporal', 'queryTemporal', ...RETRIEVE_TYPES,
  'retrieveSubscription', 'querySubscription',
]);

/** NGSI-LD §5.2.8 EntityInfo: a type, and at most one of an id or an idPattern. */
export interface EntityInfo {
  type: Iri;
  id?: string;
  idPattern?: string;
}

/** NGSI-LD §5.2.10 RegistrationInfo; absent lists cover every entity / every attribute. */
export interface RegistrationInfo {
  entities?: EntityInfo[];
  propertyNames?: Iri[];
  relationshipNames?: Iri[];
}

/** NGSI-LD §5.2.11 TimeInterval, as written (ISO 8601), with its instants. */
export interface TimeInterval {
  startAt: string;
  endAt?: string;
}

/** NGSI-LD §5.2.34 RegistrationManagementInfo. */
export interface RegistrationManagement {
  localOnly?: boolean;
  /** ISO 8601 duration, as written. */
  cacheDuration?: string;
  /** Milliseconds. */
  timeout?: number;
  /** Milliseconds. */
  cooldown?: number;
}

/** The creator of a registration with authentication on: only it (or an administrator) manages it. */
export interface RegistrationOwner {
  subject: string;
}

export interface Registration {
  id: string;
  registrationName?: string;
  description?: string;
  information: RegistrationInfo[];
  /** The tenant at the context source (§5.2.9 tenant), not the tenant the registration lives in. */
  tenant?: string;
  observationInterval?: TimeInterval;
  managementInterval?: TimeInterval;
  /** GeoJSON geometries, verbatim. */
  location?: Json;
  observationSpace?: Json;
  operationSpace?: Json;
  expiresAt?: number;
  /** expiresAt as written, when that differs from formatDateTime's form: shown back verbatim. */
  expiresAtText?: string;
  endpoint: string;
  contextSourceInfo?: Array<{ key: string; value: string }>;
  scope?: string[];
  mode: RegistrationMode;
  /** Operation names and groups as written (`federationOps` when absent). */
  operations: string[];
  management?: RegistrationManagement;
  /** Additional registration properties (any other member), keyed by expanded IRI, values as written. */
  properties: Record<Iri, Json>;
  /** The @context of the request that created it (Link header or body); absent: core only. */
  context?: Json;
  owner?: RegistrationOwner;
  createdAt: number;
  modifiedAt: number;
}

/** A query of registrations (NGSI-LD §5.10.2): each member given must hold. */
export interface RegistrationQuery {
  types?: Iri[];
  ids?: string[];
  idPattern?: string;
  attrs?: Iri[];
  q?: QExpr;
  csf?: QExpr;
  geoQ?: GeoQuery;
  scopeQ?: ScopeExpr;
  /** A temporal query on observationInterval (timeproperty observedAt) or managementInterval (createdAt, modifiedAt). */
  timeQ?: { timerel: 'before' | 'after' | 'between'; timeAt: number; endTimeAt?: number; interval: 'observationInterval' | 'managementInterval' };
}
