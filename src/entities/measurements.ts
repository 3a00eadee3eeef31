// Measurements (MQTT ingestion, edge.md §2): observed attribute instances for one entity, on the one
// write path. Each instance becomes history; the current state takes the newest per attribute (a
// back-fill of older instances leaves it); the entity is created on first use when allowed.

import {
  ResourceNotFoundError, observedHistory, withNewest, type Entity, type EntityId, type Iri, type ObservedInstance, type Principal,
} from '../ngsi/index.js';
import type { WriteCore } from '../events.js';
import type { IdGenerator } from '../lib/index.js';

export interface Measurement {
  entityId: EntityId;
  /** Types of the entity when the measurement creates it (expanded IRIs). */
  types: Iri[];
  /**
   * Instances observed at a time the device gave: one already stored for the same attribute and
   * observedAt is replaced (a QoS 1 message delivered twice is stored once).
   */
  instances: ObservedInstance[];
  /** Instances stamped with the receive time: always added (two in the same millisecond are two). */
  received?: ObservedInstance[];
  /** Attributes a created entity starts with (a device's static attributes), as instances observed now. */
  initial?: ObservedInstance[];
}

export interface MeasurementService {
  /**
   * Records the instances; creates the entity when it does not exist and `create` is set, else
   * ResourceNotFound. Resolves after commit with whether the entity was created.
   */
  record(actor: Principal, m: Measurement, opts: { create: boolean }): Promise<{ created: boolean }>;
}

export function createMeasurementService(deps: { core: WriteCore; newId: IdGenerator }): MeasurementService {
  const { core, newId } = deps;
  return {
    record: (actor, m, opts) => core.write(actor, (tx) => {
      const history = (list: readonly ObservedInstance[]) => observedHistory(m.entityId, list, tx.now, newId, actor.subject);
      const received = m.received ?? [];
      const current = tx.live(m.entityId);
      let created = false;
      let next: Entity;
      if (current) {
        next = withNewest(current, [...m.instances, ...received], tx.now);
        tx.addObserved(current, next, history(m.instances));
      } else {
        if (!opts.create) throw new ResourceNotFoundError('Entity not found', m.entityId);
        const given = [...(m.initial ?? []), ...m.instances];
        const shell: Entity = { id: m.entityId, types: m.types, attrs: {}, createdAt: tx.now, modifiedAt: tx.now };
        next = { ...withNewest(shell, [...given, ...received], tx.now), createdAt: tx.now, modifiedAt: tx.now };
        tx.addObserved(undefined, next, history(given));
        created = true;
      }
      // The current state already moved: these only add their history.
      if (received.length > 0) tx.update(next, next, history(received));
      return { created };
    }),
  };
}
