// Applies one downlink notification (edge spec §7): an untrusted NGSI-LD notification from the cloud
// broker, zod-checked, limited to the entity types and attributes of federation.downlink and to the
// entities the gateway holds, each attribute written through the write core as the downlink subject
// only when it is newer than the local state.

import { z } from 'zod';
import type { WriteCore, WriteTx } from '../events.js';
import type { Logger } from '../lib/index.js';
import {
  appendAttributes, historyOfChanges, isDeletion, isPlainObject, parseAttributes, parseDateTime, type Attribute, type AttributeInputs, type Entity, type EntityId, type Iri,
  type Principal, type TermMapper,
} from '../ngsi/index.js';

/**
 * The subject of every write that came down from the cloud: the drain forwards none of them (the
 * loop guard), while what they cause later under another subject (a command's `_status`) goes up.
 */
export const DOWNLINK_SUBJECT = 'urn:edgeld:federation:downlink';

/** Why a part of a notification was not applied. */
export type RefusalReason = 'invalid' | 'too-large' | 'type' | 'attribute' | 'entity' | 'stale' | 'untimed';

export const REFUSAL_REASONS: readonly RefusalReason[] = ['invalid', 'too-large', 'type', 'attribute', 'entity', 'stale', 'untimed'];

/** What one notification did: attributes applied, and entities or attributes refused by reason. */
export interface ApplyOutcome {
  applied: number;
  refused: Map<RefusalReason, number>;
}

/** Most entities one notification may carry. */
const MAX_ENTITIES = 1_000;

/** NGSI-LD §5.3.1 Notification, loosely: what the downlink reads of it. */
const NOTIFICATION = z.looseObject({
  type: z.literal('Notification').optional(),
  subscriptionId: z.string().max(2_048).optional(),
  data: z.array(z.looseObject({ id: z.string().min(1).max(2_048), type: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(100)]) })).max(MAX_ENTITIES),
});

/** The MQTT binding's envelope `{"metadata": {...}, "body": <Notification>}`, or a bare notification (HTTP). */
const ENVELOPE = z.looseObject({ metadata: z.record(z.string(), z.unknown()).optional(), body: NOTIFICATION });

export type DownlinkEntity = z.infer<typeof NOTIFICATION>['data'][number];

/** The entities of a notification, or undefined when it is not one. */
export function entitiesOf(message: unknown): DownlinkEntity[] | undefined {
  const enveloped = ENVELOPE.safeParse(message);
  if (enveloped.success) return enveloped.data.body.data;
  const bare = NOTIFICATION.safeParse(message);
  return bare.success ? bare.data.data : undefined;
}

export interface DownlinkSelection {
  /** The local tenant written. */
  tenant: string;
  types: ReadonlySet<Iri>;
  attrs: ReadonlySet<Iri>;
  /** The upstream context's terms: the notification is compacted with it. */
  mapper: TermMapper;
}

export interface ApplyDeps {
  core: WriteCore;
  newId: () => string;
  log: Logger;
}

/** Members of a notified entity that are not attributes. */
const ENTITY_MEMBERS = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'deletedAt']);
/** System members of an attribute instance: read for the time, never written. */
const SYSTEM_MEMBERS = new Set(['createdAt', 'modifiedAt', 'deletedAt']);

/** One attribute instance that came down, parsed, with the cloud's time of it. */
interface Candidate {
  attr: Iri;
  attribute: Attribute;
  /** The cloud's observedAt, else its modifiedAt; undefined: neither was given. */
  remoteAt: number | undefined;
}

const count = (out: ApplyOutcome, reason: RefusalReason, n = 1): void => {
  out.refused.set(reason, (out.refused.get(reason) ?? 0) + n);
};

/** The cloud's time of a raw instance: observedAt, else modifiedAt (notification.sysAttrs). */
function remoteTimeOf(raw: Record<string, unknown>): number | undefined {
  const text = typeof raw['observedAt'] === 'string' ? raw['observedAt'] : typeof raw['modifiedAt'] === 'string' ? raw['modifiedAt'] : undefined;
  return text === undefined ? undefined : parseDateTime(text);
}

/** The parsed instances of one notified attribute; undefined when it is not a valid attribute. */
function parseCandidates(attr: Iri, name: string, raw: unknown, mapper: TermMapper, now: number): Candidate[] | undefined {
  const items = Array.isArray(raw) ? raw : [raw];
  if (items.length === 0 || items.length > 100 || !items.every(isPlainObject)) return undefined;
  const stripped = items.map((i) => Object.fromEntries(Object.entries(i).filter(([k]) => !SYSTEM_MEMBERS.has(k))));
  let inputs: AttributeInputs;
  try {
    inputs = parseAttributes({ [name]: stripped }, mapper, { now, allowNull: false });
  } catch {
    return undefined;
  }
  const parsed = inputs[attr] ?? [];
  const out: Candidate[] = [];
  for (const input of parsed) {
    if (isDeletion(input)) return undefined;
    const rawItem = items.find((i) => (i['datasetId'] ?? undefined) === input.datasetId) ?? items[0]!;
    out.push({ attr, attribute: input, remoteAt: remoteTimeOf(rawItem) });
  }
  return out.length === parsed.length && out.length > 0 ? out : undefined;
}

/** The attributes of a notified entity inside the selection, parsed; what is outside or invalid is counted. */
function candidatesOf(e: DownlinkEntity, sel: DownlinkSelection, now: number, out: ApplyOutcome): Candidate[] {
  const found: Candidate[] = [];
  for (const [name, raw] of Object.entries(e)) {
    if (ENTITY_MEMBERS.has(name)) continue;
    const attr = sel.mapper.expandTerm(name);
    if (!sel.attrs.has(attr)) {
      count(out, 'attribute');
      continue;
    }
    const parsed = parseCandidates(attr, name, raw, sel.mapper, now);
    if (parsed === undefined) count(out, 'invalid');
    else found.push(...parsed);
  }
  return found;
}

const isSelectedType = (types: readonly Iri[], sel: DownlinkSelection): boolean => types.some((t) => sel.types.has(t));

/** The candidates newer than the local state, each stamped with the cloud's time as its observedAt. */
function newerOf(live: Entity, candidates: readonly Candidate[], out: ApplyOutcome): AttributeInputs {
  const accepted: AttributeInputs = {};
  for (const c of candidates) {
    if (c.remoteAt === undefined) {
      count(out, 'untimed');
      continue;
    }
    const local = live.attrs[c.attr]?.find((a) => a.datasetId === c.attribute.datasetId);
    const localAt = local === undefined ? undefined : local.observedAt ?? local.modifiedAt;
    if (localAt !== undefined && c.remoteAt <= localAt) {
      count(out, 'stale');
      continue;
    }
    // NOTE: the cloud's time becomes the observedAt: the next notification is compared on the cloud's clock, not across two clocks.
    const attribute: Attribute = c.attribute.observedAt === undefined ? { ...c.attribute, observedAt: c.remoteAt } : c.attribute;
    (accepted[c.attr] ??= []).push(attribute);
  }
  return accepted;
}

/** Writes the newer candidates of one local entity. NOTE: a fresh outcome per run: the store may run a write twice. */
function writeNewer(tx: WriteTx, id: EntityId, candidates: readonly Candidate[], sel: DownlinkSelection, deps: ApplyDeps): ApplyOutcome {
  const out: ApplyOutcome = { applied: 0, refused: new Map() };
  const live = tx.live(id);
  if (live === undefined) {
    count(out, 'entity');
    return out;
  }
  if (!isSelectedType(live.types, sel)) {
    count(out, 'type');
    return out;
  }
  const accepted = newerOf(live, candidates, out);
  out.applied = Object.values(accepted).reduce((sum, list) => sum + list.length, 0);
  if (out.applied === 0) return out;
  const outcome = appendAttributes(live, accepted, { noOverwrite: false, now: tx.now });
  tx.update(live, outcome.entity, historyOfChanges(id, outcome.changes, tx.now, deps.newId, DOWNLINK_SUBJECT));
  return out;
}

/** The principal of downlink writes: the broker's own work in the tenant, under the downlink subject. */
function downlinkPrincipal(tenant: string): Principal {
  return { tenant, subject: DOWNLINK_SUBJECT, admin: true, assignees: [], groups: [] };
}

/** Applies the entities of one notification, one write per entity; never throws for bad input. */
export async function applyEntities(entities: readonly DownlinkEntity[], sel: DownlinkSelection, deps: ApplyDeps, now: number): Promise<ApplyOutcome> {
  const out: ApplyOutcome = { applied: 0, refused: new Map() };
  const actor = downlinkPrincipal(sel.tenant);
  for (const e of entities) {
    const types = (Array.isArray(e.type) ? e.type : [e.type]).map((t) => sel.mapper.expandTerm(t));
    if (!isSelectedType(types, sel)) {
      count(out, 'type');
      deps.log.warn('downlink notification for an entity type outside federation.downlink refused', { entityId: e.id, type: e.type });
      continue;
    }
    const candidates = candidatesOf(e, sel, now, out);
    if (candidates.length === 0) continue;
    try {
      const one = await deps.core.write(actor, (tx) => writeNewer(tx, e.id, candidates, sel, deps));
      out.applied += one.applied;
      for (const [reason, n] of one.refused) count(out, reason, n);
      if (one.refused.size > 0) deps.log.warn('downlink notification partly refused', { entityId: e.id, refused: Object.fromEntries(one.refused) });
    } catch (err) {
      count(out, 'invalid');
      deps.log.warn('downlink notification not applied', { entityId: e.id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}
