// NGSI-LD Null in the payload member of each attribute kind: how a deleted attribute (a deletion
// instance of history, an attribute deleted in a notification) shows what it holds.

import type { JsonObject } from './json.js';
import { NGSI_LD_NULL, type AttributeKind } from './vocab.js';

const NULL_PAYLOAD: Record<AttributeKind, JsonObject> = {
  Property: { value: NGSI_LD_NULL },
  GeoProperty: { value: NGSI_LD_NULL },
  Relationship: { object: NGSI_LD_NULL },
  LanguageProperty: { languageMap: { '@none': NGSI_LD_NULL } },
  VocabProperty: { vocab: NGSI_LD_NULL },
  JsonProperty: { json: NGSI_LD_NULL },
  ListProperty: { valueList: [NGSI_LD_NULL] },
  ListRelationship: { objectList: [{ object: NGSI_LD_NULL }] },
};

/** The payload members of a deleted attribute of `kind` (a fresh object). */
export function nullPayloadOf(kind: AttributeKind): JsonObject {
  return structuredClone(NULL_PAYLOAD[kind]);
}
