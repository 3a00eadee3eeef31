// Measurements (MQTT ingestion, edge.md §2): observed attribute instances for one entity, on the one
// write path. Each instance becomes history; the current state takes the newest per attribute (a
// back-fill of older instances leaves it); the entity is created on first use when allowed.

import {
  ResourceNotFoundError, observedHistory, withNewest, type Entity, type EntityId, type Iri, type ObservedInstance, type Principal,
} from '../ngsi/index.js';
import type { WriteCore, WriteTx } from '../events.js';
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

/** Measurements of one entity by one actor, waiting for their write to run. */
interface Group {
  readonly members: Array<{ m: Measurement; settle: (outcome: Promise<{ created: boolean }>) => void }>;
}

/**
 * NOTE: measurements of one entity by one actor that arrive before their write runs (a device
 * publishing faster than a commit, the usual case under load) join that write: the entity is read,
 * merged and written once, and the journal holds one change with every instance, instead of one
 * write per message. Each instance still becomes its own history row, the newest still wins, and
 * each message is still answered only after the commit. Should a joint write fail, each message is
 * written alone, so one bad message never takes the others with it.
 */
export function createMeasurementService(deps: { core: WriteCore; newId: IdGenerator }): MeasurementService {
  const { core, newId } = deps;

  /** Applies the measurements in arrival order; `created` tells whether the first created the entity. */
  const apply = (tx: WriteTx, actor: Principal, list: readonly Measurement[], create: boolean): { created: boolean } => {
    const first = list[0] as Measurement;
    const history = (instances: readonly ObservedInstance[]) => observedHistory(first.entityId, instances, tx.now, newId, actor.subject);
    const instances = list.length === 1 ? first.instances : list.flatMap((m) => m.instances);
    const received = list.length === 1 ? first.received ?? [] : list.flatMap((m) => m.received ?? []);
    const current = tx.live(first.entityId);
    let created = false;
    let next: Entity;
    if (current) {
      next = withNewest(current, [...instances, ...received], tx.now);
      tx.addObserved(current, next, history(instances));
    } else {
      if (!create) throw new ResourceNotFoundError('Entity not found', first.entityId);
      const given = [...(first.initial ?? []), ...instances];
      const shell: Entity = { id: first.entityId, types: first.types, attrs: {}, createdAt: tx.now, modifiedAt: tx.now };
      next = { ...withNewest(shell, [...given, ...received], tx.now), createdAt: tx.now, modifiedAt: tx.now };
      tx.addObserved(undefined, next, history(given));
      created = true;
    }
    // The current state already moved: these only add their history.
    if (received.length > 0) tx.update(next, next, history(received));
    return { created };
  };

  const alone = (actor: Principal, m: Measurement, create: boolean): Promise<{ created: boolean }> =>
    core.write(actor, (tx) => apply(tx, actor, [m], create));

  /**
   * Groups not yet run, by actor (its rights, not the object: each message may bring its own), by
   * `create`, then by entity. NOTE: nested maps keyed by strings made once (an actor's rights are
   * read-only, its key is cached per object) rather than one key joined per message.
   */
  const open = new Map<string, Map<EntityId, Group>>();
  const rightsKeys = new WeakMap<Principal, readonly [string, string]>();
  const rightsOf = (actor: Principal, create: boolean): string => {
    let keys = rightsKeys.get(actor);
    if (keys === undefined) {
      const key = `${actor.tenant}\u0000${actor.subject ?? ''}\u0000${actor.admin ? 1 : 0}\u0000${actor.assignees.join('\u0001')}\u0000${actor.groups.join('\u0001')}\u0000`;
      keys = [key, `${key}1`];
      rightsKeys.set(actor, keys);
    }
    return keys[create ? 1 : 0];
  };

  return {
    record(actor, m, opts) {
      const rights = rightsOf(actor, opts.create);
      let groups = open.get(rights);
      if (groups === undefined) {
        groups = new Map();
        open.set(rights, groups);
      }
      const joined = groups.get(m.entityId);
      if (joined !== undefined) {
        return new Promise((resolve, reject) => {
          joined.members.push({ m, settle: (outcome) => outcome.then(resolve, reject) });
        });
      }
      const group: Group = { members: [] };
      const entities = groups;
      entities.set(m.entityId, group);
      const close = (): void => {
        if (entities.get(m.entityId) !== group) return;
        entities.delete(m.entityId);
        if (entities.size === 0 && open.get(rights) === entities) open.delete(rights);
      };
      const joint = core.write(actor, (tx) => {
        // The group closes when its write first runs (a store may run a write again: same members).
        close();
        return apply(tx, actor, [m, ...group.members.map((x) => x.m)], opts.create);
      });
      return new Promise((resolve, reject) => {
        joint.then(
          (result) => {
            resolve(result);
            for (const x of group.members) x.settle(Promise.resolve({ created: false }));
          },
          (err: unknown) => {
            // A write refused before it ran (a full disk) never closed its group.
            close();
            if (group.members.length === 0) {
              reject(err);
              return;
            }
            alone(actor, m, opts.create).then(resolve, reject);
            for (const x of group.members) x.settle(alone(actor, x.m, opts.create));
          },
        );
      });
    },
  };
}
