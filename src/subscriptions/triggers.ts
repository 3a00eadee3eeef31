// What a change did, in the vocabulary of notificationTrigger (NGSI-LD §5.2.12): the entity-level
// trigger of its kind, and per attribute whether an instance was created, updated or deleted, found
// by comparing the touched attributes before (change.previous) and after (change.entity).

import type { ChangeEvent } from '../events.js';
import { assertNever, type Attribute, type Entity, type Iri } from '../ngsi/index.js';
import type { NotificationTrigger } from './model.js';

export interface AttributeEvent {
  attr: Iri;
  trigger: 'attributeCreated' | 'attributeUpdated' | 'attributeDeleted';
}

export interface ChangeTriggers {
  /** entityCreated, entityUpdated (replacements included) or entityDeleted; none for history-only changes. */
  entity: Extract<NotificationTrigger, 'entityCreated' | 'entityUpdated' | 'entityDeleted'> | undefined;
  attributes: AttributeEvent[];
  /** The attributes the change concerns (written, deleted, or all of a created or deleted entity). */
  touched: Iri[];
}

/** Structural equality of JSON-like values (attribute instances hold only JSON and numbers). */
export function isSameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  // NOTE: both are non-null objects here; arrays index like records.
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra);
  if (ka.length !== Object.keys(rb).length) return false;
  return ka.every((k) => Object.hasOwn(rb, k) && isSameJson(ra[k], rb[k]));
}

const keyOf = (a: Attribute): string => a.datasetId ?? '';

/** Per instance (datasetId) of one written attribute: created, updated (changed) or deleted. */
function writtenEvents(attr: Iri, before: readonly Attribute[], after: readonly Attribute[]): AttributeEvent[] {
  const previous = new Map(before.map((a) => [keyOf(a), a]));
  const next = new Set(after.map(keyOf));
  const found = new Set<AttributeEvent['trigger']>();
  for (const a of after) {
    const old = previous.get(keyOf(a));
    if (old === undefined) found.add('attributeCreated');
    else if (!isSameJson(old, a)) found.add('attributeUpdated');
  }
  for (const key of previous.keys()) if (!next.has(key)) found.add('attributeDeleted');
  // A write that left the instance exactly as it was is still an update of it.
  if (found.size === 0) found.add(before.length === 0 ? 'attributeCreated' : 'attributeUpdated');
  return [...found].map((trigger) => ({ attr, trigger }));
}

/** The triggers a change fires, before any subscription's filters. */
export function changeTriggers(change: ChangeEvent): ChangeTriggers {
  const attrsOf = (e: Entity | undefined): Iri[] => (e === undefined ? [] : Object.keys(e.attrs));
  switch (change.kind) {
    case 'historyChanged':
    case 'registrationChanged':
      return { entity: undefined, attributes: [], touched: [] };
    case 'entityCreated': {
      const touched = attrsOf(change.entity);
      return { entity: 'entityCreated', attributes: touched.map((attr) => ({ attr, trigger: 'attributeCreated' })), touched };
    }
    case 'entityDeleted': {
      // Its attributes go with it: each is deleted too (ETSI 046_22_12 notifies attributeDeleted).
      const touched = attrsOf(change.previous);
      return { entity: 'entityDeleted', attributes: touched.map((attr) => ({ attr, trigger: 'attributeDeleted' })), touched };
    }
    case 'entityUpdated':
    case 'entityReplaced': {
      const attributes: AttributeEvent[] = [];
      for (const attr of change.written) {
        attributes.push(...writtenEvents(attr, change.previous?.attrs[attr] ?? [], change.entity?.attrs[attr] ?? []));
      }
      for (const attr of change.deleted) {
        if (!change.written.includes(attr)) attributes.push({ attr, trigger: 'attributeDeleted' });
      }
      return { entity: 'entityUpdated', attributes, touched: [...new Set([...change.written, ...change.deleted])] };
    }
    default:
      return assertNever(change.kind, 'change kind');
  }
}
