// A command's life on its entity (edge.md §6): `<name>_status` (PENDING, DELIVERED, OK, ERROR,
// EXPIRED) and `<name>_info` (the device's answer), written as attributes of the device's entity in
// a write of the write core, so that history, subscriptions and federation see each state. Also the
// value a command attribute sends to the device, in the device's own terms.

import type { WriteTx } from '../events.js';
import {
  assertNever, compactValueKeys, observedHistory, type Attribute, type EntityId, type Iri, type Json, type TermMapper,
} from '../ngsi/index.js';
import type { CommandState } from '../store/index.js';

/** One attribute to set: a state, or an answer's info. */
export interface StateWrite {
  entityId: EntityId;
  attr: Iri;
  value: Json;
}

/** The attribute a value is written as: a Property, or a JsonProperty for an object or array (kept verbatim). */
function attributeOf(value: Json, now: number): Attribute {
  if (typeof value === 'object' && value !== null) return { kind: 'JsonProperty', json: value, observedAt: now, createdAt: now, modifiedAt: now, sub: {} };
  return { kind: 'Property', value, observedAt: now, createdAt: now, modifiedAt: now, sub: {} };
}

/**
 * Sets each attribute on its entity in this write, one history instance each, in order (a later one
 * of the same attribute is the current one). Entities no longer live are passed over.
 */
export function writeStates(tx: WriteTx, writes: readonly StateWrite[], newId: () => string, subject: string | undefined): void {
  const byEntity = new Map<EntityId, StateWrite[]>();
  for (const w of writes) {
    const list = byEntity.get(w.entityId);
    if (list === undefined) byEntity.set(w.entityId, [w]);
    else list.push(w);
  }
  for (const [entityId, list] of byEntity) {
    const live = tx.live(entityId);
    if (live === undefined) continue;
    const attrs = { ...live.attrs };
    const instances = list.map((w) => {
      const attribute = attributeOf(w.value, tx.now);
      attrs[w.attr] = [attribute];
      return { attr: w.attr, attribute: attribute as Attribute & { observedAt: number } }; // NOTE: attributeOf sets observedAt
    });
    tx.update(live, { ...live, attrs, modifiedAt: tx.now }, observedHistory(entityId, instances, tx.now, newId, subject));
  }
}

/** The state write of a command. */
export const stateOf = (entityId: EntityId, statusAttr: Iri, state: CommandState): StateWrite => ({ entityId, attr: statusAttr, value: state });

/** The value a written command attribute sends to the device, in the terms of the device's context. */
export function commandValue(a: Attribute, mapper: TermMapper): Json {
  switch (a.kind) {
    case 'Property': return typeof a.value === 'object' && a.value !== null ? compactValueKeys(a.value, mapper) : a.value;
    case 'JsonProperty': return a.json;
    case 'GeoProperty': return a.value;
    case 'Relationship': return a.object;
    case 'LanguageProperty': return a.languageMap;
    case 'VocabProperty': return Array.isArray(a.vocab) ? a.vocab.map((v) => mapper.compactIri(v)) : mapper.compactIri(a.vocab);
    case 'ListProperty': return a.valueList.map((v) => compactValueKeys(v, mapper));
    case 'ListRelationship': return a.objectList;
    default: return assertNever(a, 'attribute');
  }
}
