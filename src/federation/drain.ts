// The federation drain: a consumer of the journal feed with its own persisted cursor (reader
// `federation`): plans a batch of the selected changes, sends it upstream and moves the cursor only
// once the upstream acknowledged it (or refused an entity, which is parked): a crash or a broken
// link repeats a batch and never skips one. Failures back off exponentially, with jitter.

import type { ChangeEvent } from '../events.js';
import type { Clock, Logger } from '../lib/index.js';
import { contextLinkValue, type TermMapper } from '../ngsi/index.js';
import type { ConsumerBatch, ConsumerRetry, JournalFeed, ParkedChanges, Store } from '../store/index.js';
import { backoffDelay } from './backoff.js';
import { createFederationClient, type UpstreamClient } from './client.js';
import type { Transport } from '../lib/index.js';
import type { RegistrationStatus } from './registration-keeper.js';
import type { DownlinkStatus } from './downlink.js';
import { DOWNLINK_SUBJECT } from './downlink-apply.js';
import { createBatchPlanner, type BatchPlan } from './plan.js';
import { reconcile, sendPlans, type SendOutcome } from './send.js';

/** The journal reader name of the drain. */
export const FEDERATION_READER = 'federation';
/** Most journal changes read per batch (a batch holds at most batch-size entities of them). */
const READ_ROWS = 1_000;

export interface FederationOptions {
  /** Upstream base URL; '' is off. */
  url: string;
  upstreamTenant: string;
  /** The local tenant forwarded. */
  tenant: string;
  /** Type names forwarded (expanded with the upstream context); empty: all. */
  types: readonly string[];
  batchSize: number;
  /** Milliseconds after a batch that was not full before the next one is sent (0: at once). */
  lingerMs: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxRows: number;
  token?: { url: string; clientId: string; clientSecret: string };
}

export interface FederationDeps {
  store: Pick<Store, 'journal' | 'federation' | 'write' | 'archive' | 'isOpen'>;
  /** The journal's reader, on which the drain registers when built (reader `federation`). */
  feed: JournalFeed;
  /** The upstream context: its term mapper and the URL its Link names. */
  context(): Promise<{ mapper: TermMapper; linkUrl: string }>;
  /** The instant before which a pending change is skipped (now minus federation.outbox.max-age). */
  horizon(now: number): number;
  options: FederationOptions;
  clock: Clock;
  log: Logger;
  /** The upstream client, shared with the registration keeper (default: one of the drain's own). */
  client?: UpstreamClient;
  /** Requests to the upstream (default node:http(s)). */
  transport?: Transport;
  /** Requests to the token endpoint (default the global fetch). */
  fetch?: typeof fetch;
  random?: () => number;
}

/** What the status endpoint shows; instants are epoch ms. */
export interface FederationStatus {
  enabled: boolean;
  url: string;
  outboxDepth: number;
  oldestPending: number | undefined;
  lastSuccess: number | undefined;
  lastError: { at: number; message: string } | undefined;
  parked: number;
  dropped: number;
  sent: { entities: number; instances: number };
  /** The gateway's registration upstream (federation.register); undefined when off. */
  registration: RegistrationStatus | undefined;
  /** The downlink from the cloud (federation.downlink); undefined when off. */
  downlink: DownlinkStatus | undefined;
}

export interface Federation {
  /** Starts draining (from the persisted cursor; a new reader starts at the journal's end). */
  start(): void;
  status(): FederationStatus;
  /** Stops taking batches; an in-flight one may finish within `timeoutMs`, then it is aborted. */
  stop(timeoutMs: number): Promise<void>;
}


type DrainDeps = Pick<FederationDeps, 'store' | 'options' | 'clock' | 'log'>;

/** The cursor past the changes the bounds no longer allow, moved (counted, logged) when it changes. */
async function applyBounds(deps: DrainDeps & Pick<FederationDeps, 'horizon'>, from: number): Promise<number> {
  const { store, options, clock, log } = deps;
  const { journal } = store;
  let to = from;
  const backlog = journal.backlog(FEDERATION_READER);
  if (backlog > options.maxRows) to = journal.seqAt(from, backlog - options.maxRows - 1) ?? from;
  const horizon = deps.horizon(clock.now());
  const oldest = journal.readAfter(to, 1, { entities: false })[0];
  if (oldest !== undefined && oldest.at < horizon) to = (journal.firstSince(to, horizon) ?? journal.lastSeq() + 1) - 1;
  if (to === from) return from;
  const skipped = journal.countBetween(from, to);
  await store.write(() => {
    store.federation.record({ dropped: skipped });
    journal.setCursor(FEDERATION_READER, to);
  });
  log.warn('federation outbox over its bounds: oldest changes skipped', { count: skipped, backlog, maxRows: options.maxRows, after: from, upTo: to });
  return to;
}

/** Moves the cursor past a handled batch, with its parked entities and counters, in one write. */
async function acknowledge(deps: DrainDeps, plan: BatchPlan, outcome: SendOutcome): Promise<void> {
  const { store, options, clock, log } = deps;
  const now = clock.now();
  const parked: ParkedChanges[] = outcome.parked.map((p) => ({
    tenant: options.tenant, entityId: p.plan.id, firstSeq: p.plan.firstSeq, lastSeq: p.plan.lastSeq, changes: p.plan.changes,
    error: p.error, payload: p.payload, parkedAt: now,
  }));
  await store.write(() => {
    store.federation.park(parked);
    store.federation.record({
      dropped: plan.gaps, sentEntities: outcome.sentEntities, sentInstances: outcome.sentInstances,
      ...(plan.entities.length > 0 ? { success: now } : {}),
    });
    store.journal.setCursor(FEDERATION_READER, plan.lastSeq);
  });
  if (plan.gaps > 0) log.warn('changes pruned from the journal before federation read them', { count: plan.gaps });
  for (const p of parked) log.warn('upstream refused an entity: its changes are parked', { entityId: p.entityId, changes: p.changes, error: p.error });
}

/**
 * The changes of a batch, as the plan takes them: those handed (batch-size + 1), then chunks twice
 * as large, up to READ_ROWS in all.
 * NOTE: reading a change back looks its entity and instances up (tens of µs each); when many
 * entities change in turn, a batch-size plan stops after batch-size + 1 changes, and reading
 * READ_ROWS at once had spent most of the drain's time on changes the next batches read again.
 */
async function* changesOf(first: readonly ChangeEvent[], asked: number, batch: ConsumerBatch): AsyncGenerator<ChangeEvent> {
  let chunk = first;
  let read = first.length;
  let size = asked;
  for (;;) {
    yield* chunk;
    if (chunk.length === 0 || chunk.length < size || read >= READ_ROWS) return;
    size = Math.min(size * 2, READ_ROWS - read);
    chunk = await batch.more(size);
    read += chunk.length;
  }
}

/** The federation status from the store: the outbox is the journal after the drain's cursor. */
function statusOf(deps: DrainDeps): FederationStatus {
  const { store, options } = deps;
  const { journal } = store;
  const counters = store.federation.counters();
  const oldest = journal.readAfter(journal.cursor(FEDERATION_READER) ?? 0, 1, { entities: false })[0];
  return {
    enabled: true, url: options.url, outboxDepth: journal.backlog(FEDERATION_READER), oldestPending: oldest?.at,
    lastSuccess: counters.lastSuccess, lastError: counters.lastError, parked: store.federation.parkedCount(), dropped: counters.dropped,
    sent: { entities: counters.sentEntities, instances: counters.sentInstances }, registration: undefined, downlink: undefined,
  };
}

/** Waits for `done` at most `timeoutMs`. */
async function within(done: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([done, late]);
  clearTimeout(timer);
}

export function createFederation(deps: FederationDeps): Federation {
  const { store, options, clock, log } = deps;
  const random = deps.random ?? Math.random;
  const client = deps.client ?? createFederationClient(deps);
  /** Whether the upstream may hold part of the next batch already (after a restart or a failure). */
  let uncertain = true;
  const abort = new AbortController();
  const asked = Math.min(options.batchSize + 1, READ_ROWS);

  /** Plans, sends and acknowledges one batch; returns the sequence it covers. */
  const sendBatch = async (changes: ChangeEvent[], batch: ConsumerBatch): Promise<number> => {
    const { after } = batch;
    const { mapper, linkUrl } = await deps.context();
    const planner = createBatchPlanner(after, {
      tenant: options.tenant, types: new Set(options.types.map((t) => mapper.expandTerm(t))), maxEntities: options.batchSize,
      latest: (tenant, id) => store.archive.latest({ tenant }, id), skipSubject: DOWNLINK_SUBJECT,
    });
    for await (const change of changesOf(changes, asked, batch)) if (!planner.add(change)) break;
    const plan = planner.plan();
    if (plan.lastSeq === after) return after;
    const ctx = { client, mapper, link: contextLinkValue(linkUrl), signal: abort.signal };
    if (uncertain) await reconcile(plan.entities, ctx);
    const outcome = plan.entities.length === 0 ? { parked: [], sentEntities: 0, sentInstances: 0 } : await sendPlans(plan.entities, ctx);
    if (!store.isOpen()) return after;
    await acknowledge(deps, plan, outcome);
    uncertain = false;
    return plan.lastSeq;
  };

  const failed = (err: unknown, retry: ConsumerRetry): void => {
    uncertain = true;
    const message = err instanceof Error ? err.message : String(err);
    const at = clock.now();
    log.warn('federation batch failed; retrying', { error: message, failures: retry.failures, retryInMs: retry.delayMs });
    if (store.isOpen()) store.write(() => store.federation.record({ error: { at, message: message.slice(0, 1_000) } })).catch(() => undefined);
  };

  // Registered when built: every change committed from now on is forwarded, even before start().
  const follower = deps.feed.register({
    reader: FEDERATION_READER, batch: asked, read: { instances: true }, savesCursor: true, onlyJournaled: true, lingerMs: options.lingerMs,
    // Far behind (a slow or lost link), the drain reads the journal: the feed keeps no more for it.
    keepsBehind: READ_ROWS,
    retryDelay: (failures) => backoffDelay(failures, options.retryBaseMs, options.retryMaxMs, random),
    failed,
    bounds: (cursor) => applyBounds(deps, cursor),
    handle: sendBatch,
  });

  return {
    start() {
      log.info('federation started', { url: options.url, tenant: options.tenant, after: follower.position() });
      follower.start();
    },
    status: () => statusOf(deps),
    async stop(timeoutMs) {
      const done = follower.stop();
      await within(done, timeoutMs);
      // The batch in flight is sent again after the next start: the cursor moved only for what was acknowledged.
      abort.abort();
      await done;
    },
  };
}
