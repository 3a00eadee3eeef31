// What one upstream batch does, planned from journal changes (pure): per entity, the latest state
// of each attribute instance (the upsert), the older instances (history pushed through the temporal
// API), attribute deletions and the entity's deletion, in the order the changes came.

import type { ChangeEvent } from '../events.js';
import type { Attribute, Entity, EntityId, HistoryInstance, Iri } from '../ngsi/index.js';

/** One attribute deletion to forward. */
export interface PlannedDeletion {
  attr: Iri;
  datasetId?: string;
}

/** Everything one batch forwards for one entity, executed as: upsert, history, deletions. */
export interface EntityPlan {
  id: EntityId;
  types: Iri[];
  scope?: string[];
  /** Whether the entity goes in the batch upsert (also with no attribute: it then exists upstream). */
  upsert: boolean;
  /** The latest written instance of each attribute instance (key: attr + datasetId), sent by the upsert. */
  latest: Map<string, HistoryInstance>;
  /** Older instances, sent through the temporal API, in journal order. */
  history: HistoryInstance[];
  deletions: PlannedDeletion[];
  /** The entity stopped being live: deleted upstream after the rest. */
  deleteEntity: boolean;
  firstSeq: number;
  lastSeq: number;
  /** Journal changes this plan stands for. */
  changes: number;
}

export interface BatchPlan {
  /** In order of each entity's first change. */
  entities: EntityPlan[];
  /** The last journal change the plan covers (the cursor once it is acknowledged). */
  lastSeq: number;
  /** Changes pruned from the journal before they were read (gaps in the sequence). */
  gaps: number;
  /** A limit stopped the plan before a change it was given: that change goes in the next batch. */
  more: boolean;
}

export interface PlanOptions {
  tenant: string;
  /** Expanded types forwarded; empty: all. */
  types: ReadonlySet<Iri>;
  /** Most entities in the plan. */
  maxEntities: number;
  /** The latest document of an entity (live or deleted), for a change that carries no state. */
  latest(tenant: string, id: EntityId): Entity | undefined;
  /** Changes written under this subject came from upstream: never forwarded again (the downlink's loop guard). */
  skipSubject?: string;
}

const seriesKey = (attr: Iri, datasetId: string | undefined): string => `${attr}\n${datasetId ?? ''}`;

/** The attribute an instance carries, with observedAt set (its createdAt when it had none). */
export function observedAttribute(i: HistoryInstance): Attribute | undefined {
  const a = i.attribute;
  if (a === undefined) return undefined;
  if (a.observedAt !== undefined) return a;
  return { ...a, observedAt: i.observedAt ?? i.createdAt };
}

function newPlan(change: ChangeEvent, state: Entity | undefined): EntityPlan {
  const plan: EntityPlan = {
    id: change.id, types: state?.types ?? [], upsert: false, latest: new Map(), history: [], deletions: [], deleteEntity: false,
    firstSeq: change.seq, lastSeq: change.seq, changes: 0,
  };
  if (state?.scope !== undefined) plan.scope = state.scope;
  return plan;
}

/** Whether `change` must wait for the next batch: it would reorder against a deletion planned before it. */
function mustWait(plan: EntityPlan, change: ChangeEvent): boolean {
  if (plan.deleteEntity) return true;
  if (plan.deletions.length === 0) return false;
  const deleted = new Set(plan.deletions.map((d) => d.attr));
  return change.kind === 'entityCreated' || change.instances.some((i) => deleted.has(i.attr));
}

/** Adds one change of the plan's entity. */
function addChange(plan: EntityPlan, change: ChangeEvent, state: Entity | undefined): void {
  plan.lastSeq = change.seq;
  plan.changes += 1;
  if (state !== undefined) {
    plan.types = state.types;
    // The latest scope, none when a write removed it.
    if (state.scope !== undefined) plan.scope = state.scope;
    else delete plan.scope;
  }
  const written = change.instances.filter((i) => i.attribute !== undefined);
  switch (change.kind) {
    case 'historyChanged':
      // A back-fill or an edited instance: history only, the current state is as it was.
      plan.history.push(...written);
      if (written.length > 0 && change.entity !== undefined) plan.upsert = true;
      return;
    case 'entityDeleted':
      plan.deleteEntity = true;
      return;
    case 'registrationChanged':
      return;
    case 'entityCreated':
    case 'entityUpdated':
    case 'entityReplaced': {
      plan.upsert = true;
      const writtenKeys = new Set(written.map((i) => seriesKey(i.attr, i.datasetId)));
      for (const i of change.instances) {
        // A replace deletes what it does not write again; what it writes again is no deletion.
        if (i.attribute !== undefined || writtenKeys.has(seriesKey(i.attr, i.datasetId))) continue;
        plan.deletions.push(i.datasetId === undefined ? { attr: i.attr } : { attr: i.attr, datasetId: i.datasetId });
      }
      for (const i of written) {
        const key = seriesKey(i.attr, i.datasetId);
        const before = plan.latest.get(key);
        if (before !== undefined) plan.history.push(before);
        plan.latest.set(key, i);
      }
      return;
    }
  }
}

/** A batch planned a change at a time, as the changes are read. */
export interface BatchPlanner {
  /** Takes the next change in journal order; false when the plan stops before it (it goes in the next batch). */
  add(change: ChangeEvent): boolean;
  plan(): BatchPlan;
}

/**
 * Plans a batch from changes read in journal order after `cursor`: changes of other tenants and of
 * types not forwarded are passed over. The plan stops before the change that would add one entity
 * too many, or reorder an entity's writes against a deletion planned before them.
 */
export function createBatchPlanner(cursor: number, opts: PlanOptions): BatchPlanner {
  const byId = new Map<EntityId, EntityPlan>();
  let lastSeq = cursor;
  let gaps = 0;
  let more = false;
  return {
    add(change) {
      if (more) return false;
      const state = change.entity ?? change.previous;
      // A registration change concerns no entity: nothing to forward.
      // Edge spec §7: a change that came down from the cloud is not sent back up as a new one.
      const selected = change.kind !== 'registrationChanged' && change.tenant === opts.tenant
        && (opts.skipSubject === undefined || change.subject !== opts.skipSubject)
        && isSelected(change, state, opts);
      let plan = byId.get(change.id);
      if (selected && ((plan === undefined && byId.size >= opts.maxEntities) || (plan !== undefined && mustWait(plan, change)))) {
        more = true;
        return false;
      }
      gaps += Math.max(0, change.seq - lastSeq - 1);
      lastSeq = change.seq;
      if (!selected) return true;
      if (plan === undefined) {
        plan = newPlan(change, state ?? opts.latest(change.tenant, change.id));
        byId.set(change.id, plan);
      }
      addChange(plan, change, state);
      return true;
    },
    plan: () => ({ entities: [...byId.values()], lastSeq, gaps, more }),
  };
}

/** The plan of the changes given (see createBatchPlanner). */
export function planBatch(changes: Iterable<ChangeEvent>, cursor: number, opts: PlanOptions): BatchPlan {
  const planner = createBatchPlanner(cursor, opts);
  for (const change of changes) if (!planner.add(change)) break;
  return planner.plan();
}

function isSelected(change: ChangeEvent, state: Entity | undefined, opts: PlanOptions): boolean {
  if (opts.types.size === 0) return true;
  const types = state?.types ?? opts.latest(change.tenant, change.id)?.types ?? [];
  return types.some((t) => opts.types.has(t));
}

/** How many history instances a plan sends (the upsert's latest ones and the older ones). */
export function instancesOf(plan: EntityPlan): number {
  return plan.latest.size + plan.history.length;
}
