// One instance of an attribute's history (NGSI-LD §4.5.7): what a write leaves behind for temporal
// reads, change events and federation. Instants are UTC epoch milliseconds.

import type { Attribute, EntityId, Iri } from './model.js';

export interface HistoryInstance {
  entityId: EntityId;
  attr: Iri;
  datasetId?: string;
  /** 'urn:ngsi-ld:Instance:<uuid>' (any other string is kept verbatim). */
  instanceId: string;
  observedAt?: number;
  createdAt: number;
  modifiedAt: number;
  deletedAt?: number;
  /** The instance as written; absent for a deletion instance (value NGSI-LD Null). */
  attribute?: Attribute;
  /** The writer's subject (JWT sub), for audit. */
  subject?: string;
}
