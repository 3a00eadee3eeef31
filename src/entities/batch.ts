// Batch entity operations (NGSI-LD §5.6.7-5.6.10, §5.6.20) and Delete Entities by selection (§5.6.21)
// over the single write path: each entity is its own write, all issued in one turn so group commit packs them.

import {
  appendAttributes, dropAttributes, mergeEntity, ResourceNotFoundError,
  type Action, type AttributeInputs, type Iri, type NotUpdated, type Principal, type Entity, type EntityFragment, type EntityId, type EntityMembers,
} from '../ngsi/index.js';
import type { EntityListQuery } from '../store/index.js';
import type { EntityService, UpdateResult, UpsertMode } from './service.js';

/** How one entity of a batch fared, in the order of the input. */
export type BatchOutcome =
  | { status: 'succeeded'; created: boolean }
  /** The write happened, but some attributes were left alone (noOverwrite, merge of a missing instance). */
  | { status: 'partial'; notUpdated: NotUpdated[] }
  | { status: 'failed'; error: unknown };

export interface AttributesOf {
  id: EntityId;
  attrs: AttributeInputs;
  /** Types to add and scope, given beside the attributes. */
  members?: EntityMembers;
}

export interface FragmentOf {
  id: EntityId;
  fragment: EntityFragment;
}

/** The selection of Delete Entities: any-of types, any-of ids, and every filter. */
export type PurgeSelection = Pick<EntityListQuery, 'types' | 'ids' | 'attrs' | 'filters'>;

/** What a purge removes from each selected entity instead of the whole entity (v1.9 §5.6.21). */
export type PurgeProjection = { keep: Iri[] } | { drop: Iri[] };

export interface BatchService {
  /** §5.6.7: an id that exists, or repeats an earlier one of the batch, fails with AlreadyExists. */
  create(actor: Principal, entities: Entity[]): Promise<BatchOutcome[]>;
  /** §5.6.8: created, or replaced / appended to (`mode`); `created` tells which. */
  upsert(actor: Principal, entities: Entity[], mode: UpsertMode): Promise<BatchOutcome[]>;
  /** §5.6.9: attributes appended to live entities (§5.6.3), existing ones kept with noOverwrite. */
  update(actor: Principal, items: AttributesOf[], opts: { noOverwrite: boolean }): Promise<BatchOutcome[]>;
  /** §5.6.20: each fragment merged into its live entity (§5.6.17). */
  merge(actor: Principal, items: FragmentOf[]): Promise<BatchOutcome[]>;
  /** §5.6.10: each live entity marked deleted; a missing one fails with ResourceNotFound. */
  delete(actor: Principal, ids: EntityId[]): Promise<BatchOutcome[]>;
  /** §5.6.21: deletes every live entity of the selection, a page at a time; returns how many. */
  /**
   * Deletes every live entity of the selection, or with a projection only the attributes it names
   * (`drop`) or all but those (`keep`). Resolves with the number of entities purged.
   */
  purge(actor: Principal, selection: PurgeSelection, projection?: PurgeProjection): Promise<number>;
}

export interface BatchServiceDeps {
  entities: EntityService;
  /** Entities deleted per round of a purge (one group commit each). */
  purgePageSize: number;
}

/**
 * Starts every write before awaiting any: the writes queue in the same event-loop turn, so the
 * store commits them together in one transaction; a failure undoes only its own write.
 */
async function settle<T>(items: readonly T[], write: (item: T) => Promise<BatchOutcome>): Promise<BatchOutcome[]> {
  const pending = items.map((item) => write(item));
  const settled = await Promise.allSettled(pending);
  return settled.map((s): BatchOutcome => (s.status === 'fulfilled' ? s.value : { status: 'failed', error: s.reason }));
}

function outcomeOf(result: UpdateResult): BatchOutcome {
  return result.notUpdated.length === 0 ? { status: 'succeeded', created: false } : { status: 'partial', notUpdated: result.notUpdated };
}

export function createBatchService(deps: BatchServiceDeps): BatchService {
  const { entities, purgePageSize } = deps;
  const succeeded = (created: boolean): BatchOutcome => ({ status: 'succeeded', created });

  const deleteAll = (actor: Principal, ids: EntityId[]): Promise<BatchOutcome[]> =>
    settle(ids, (id) => entities.delete(actor, id).then(() => succeeded(false)));

  /**
   * The ids of the selection (what the actor may read), each checked for `action` before anything
   * is written: one refused entity refuses the whole purge (403), nothing deleted.
   */
  const selectedFor = (actor: Principal, selection: PurgeSelection, action: Action): EntityId[] => {
    const ids: EntityId[] = [];
    for (let offset = 0; ; offset += purgePageSize) {
      const page = entities.list(actor, { ...selection, limit: purgePageSize, offset, count: false }).entities;
      for (const e of page) {
        entities.requireRight(actor, e, action);
        ids.push(e.id);
      }
      if (page.length < purgePageSize) break;
    }
    return ids;
  };

  /** Writes `ids` a page at a time (one group commit each); an entity gone meanwhile is no failure. */
  const inPages = async (ids: EntityId[], write: (id: EntityId) => Promise<BatchOutcome>): Promise<number> => {
    let done = 0;
    let failure: unknown;
    for (let at = 0; at < ids.length; at += purgePageSize) {
      const outcomes = await settle(ids.slice(at, at + purgePageSize), write);
      done += outcomes.filter((o) => o.status !== 'failed').length;
      for (const o of outcomes) if (o.status === 'failed' && !(o.error instanceof ResourceNotFoundError)) failure ??= o.error;
    }
    if (failure !== undefined) throw failure;
    return done;
  };

  const purgeAttributes = async (actor: Principal, selection: PurgeSelection, projection: PurgeProjection): Promise<number> => {
    const dropped = (e: Entity): Iri[] => ('drop' in projection
      ? projection.drop : Object.keys(e.attrs).filter((a) => !projection.keep.includes(a)));
    return inPages(selectedFor(actor, selection, 'write'), (id) => entities.update(actor, id,
      (current, now) => dropAttributes(current, dropped(current), now)).then(outcomeOf));
  };

  return {
    create: (actor, list) => settle(list, (e) => entities.create(actor, e).then(() => succeeded(true))),

    upsert: (actor, list, mode) => settle(list, (e) => entities.upsert(actor, e, mode).then((r) => succeeded(r.created))),

    update: (actor, items, opts) => settle(items, (item) => entities.update(actor, item.id,
      (current, now) => appendAttributes(current, item.attrs, {
        noOverwrite: opts.noOverwrite, now, ...(item.members ? { members: item.members } : {}),
      })).then(outcomeOf)),

    merge: (actor, items) => settle(items, (item) => entities.update(actor, item.id,
      (current, now) => mergeEntity(current, item.fragment, now)).then(outcomeOf)),

    delete: deleteAll,

    async purge(actor, selection, projection) {
      if (projection !== undefined) return purgeAttributes(actor, selection, projection);
      return inPages(selectedFor(actor, selection, 'admin'), (id) => entities.delete(actor, id).then(() => succeeded(false)));
    },
  };
}
