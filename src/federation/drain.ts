// The federation drain: follows the change journal with its own persisted cursor (reader
// `federation`), plans a batch of the selected changes, sends it upstream and moves the cursor only
// once the upstream acknowledged it (or refused an entity, which is parked): a crash or a broken
// link repeats a batch and never skips one. Failures back off exponentially, with jitter.

import type { ChangeEvent } from '../events.js';
import type { Clock, Logger } from '../lib/index.js';
import { JSONLD_CONTEXT_REL, type Iri, type TermMapper } from '../ngsi/index.js';
import type { ParkedChanges, Store } from '../store/index.js';
import { backoffDelay } from './backoff.js';
import { createUpstreamClient, type UpstreamClient } from './client.js';
import { createHttpTransport, type Transport } from './http-transport.js';
import { planBatch, type BatchPlan } from './plan.js';
import { reconcile, sendPlans, type SendOutcome } from './send.js';
import { createTokenSource } from './token.js';

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
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxRows: number;
  token?: { url: string; clientId: string; clientSecret: string };
}

export interface FederationDeps {
  store: Pick<Store, 'journal' | 'federation' | 'write' | 'archive' | 'isOpen'>;
  /** The upstream context: its term mapper and the URL its Link names. */
  context(): Promise<{ mapper: TermMapper; linkUrl: string }>;
  /** The instant before which a pending change is skipped (now minus federation.outbox.max-age). */
  horizon(now: number): number;
  options: FederationOptions;
  clock: Clock;
  log: Logger;
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
}

export interface Federation {
  /** Starts draining (from the persisted cursor; a new reader starts at the journal's end). */
  start(): void;
  /** A change was committed. */
  wake(): void;
  status(): FederationStatus;
  /** Stops taking batches; an in-flight one may finish within `timeoutMs`, then it is aborted. */
  stop(timeoutMs: number): Promise<void>;
}

type StepResult = 'idle' | 'progress';

export function createFederation(deps: FederationDeps): Federation {
  const { store, options, clock, log } = deps;
  const { journal } = store;
  const random = deps.random ?? Math.random;
  const client: UpstreamClient = createUpstreamClient({
    url: options.url.replace(/\/+$/, ''), tenant: options.upstreamTenant, timeoutMs: options.timeoutMs, transport: deps.transport ?? createHttpTransport(),
    ...(options.token ? {
      token: createTokenSource({
        tokenUrl: options.token.url, clientId: options.token.clientId, clientSecret: options.token.clientSecret, timeoutMs: options.timeoutMs,
        clock, fetch: deps.fetch ?? fetch,
      }),
    } : {}),
  });
  let running: Promise<void> | undefined;
  let again = false;
  let started = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  /** Whether the upstream may hold part of the next batch already (after a restart or a failure). */
  let uncertain = true;
  const abort = new AbortController();
  // Registered when built: every change committed from now on is forwarded, even before start().
  if (journal.cursor(FEDERATION_READER) === undefined) journal.setCursor(FEDERATION_READER, journal.lastSeq());

  const cursor = (): number => journal.cursor(FEDERATION_READER) ?? 0;

  /** Moves the cursor past changes the bounds no longer allow; counted, logged. */
  const applyBounds = async (): Promise<void> => {
    const from = cursor();
    let to = from;
    const backlog = journal.backlog(FEDERATION_READER);
    if (backlog > options.maxRows) to = journal.seqAt(from, backlog - options.maxRows - 1) ?? from;
    const horizon = deps.horizon(clock.now());
    const oldest = journal.readAfter(to, 1, { entities: false })[0];
    if (oldest !== undefined && oldest.at < horizon) to = (journal.firstSince(to, horizon) ?? journal.lastSeq() + 1) - 1;
    if (to === from) return;
    const skipped = journal.countBetween(from, to);
    await store.write(() => {
      store.federation.record({ dropped: skipped });
      journal.setCursor(FEDERATION_READER, to);
    });
    log.warn('federation outbox over its bounds: oldest changes skipped', { count: skipped, backlog, maxRows: options.maxRows, after: from, upTo: to });
  };

  const typeSet = async (mapper: TermMapper): Promise<Set<Iri>> => new Set(options.types.map((t) => mapper.expandTerm(t)));

  /** Moves the cursor past a handled batch, with its parked entities and counters, in one write. */
  const acknowledge = async (plan: BatchPlan, outcome: SendOutcome): Promise<void> => {
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
      journal.setCursor(FEDERATION_READER, plan.lastSeq);
    });
    if (plan.gaps > 0) log.warn('changes pruned from the journal before federation read them', { count: plan.gaps });
    for (const p of parked) log.warn('upstream refused an entity: its changes are parked', { entityId: p.entityId, changes: p.changes, error: p.error });
  };

  /**
   * The changes after `first`, read as the plan takes them: a chunk of batch-size + 1 rows, then
   * chunks twice as large, up to READ_ROWS in all.
   * NOTE: reading a change looks its entity and instances up (tens of µs each); when many entities
   * change in turn, a batch-size plan stops after batch-size + 1 changes, and reading READ_ROWS at
   * once had spent most of the drain's time on changes the next batches read again.
   */
  function* changesAfter(first: readonly ChangeEvent[], asked: number): Generator<ChangeEvent> {
    let chunk = first;
    let read = first.length;
    let size = asked;
    for (;;) {
      yield* chunk;
      const last = chunk[chunk.length - 1];
      if (last === undefined || chunk.length < size || read >= READ_ROWS) return;
      size = Math.min(size * 2, READ_ROWS - read);
      chunk = journal.readAfter(last.seq, size, { instances: true });
      read += chunk.length;
    }
  }

  const step = async (): Promise<StepResult> => {
    await applyBounds();
    const after = cursor();
    const asked = Math.min(options.batchSize + 1, READ_ROWS);
    const first = journal.readAfter(after, asked, { instances: true });
    if (first.length === 0) return 'idle';
    const { mapper, linkUrl } = await deps.context();
    const plan = planBatch(changesAfter(first, asked), after, {
      tenant: options.tenant, types: await typeSet(mapper), maxEntities: options.batchSize,
      latest: (tenant, id) => store.archive.latest({ tenant }, id),
    });
    const ctx = { client, mapper, link: `<${linkUrl}>; rel="${JSONLD_CONTEXT_REL}"; type="application/ld+json"`, signal: abort.signal };
    if (uncertain) await reconcile(plan.entities, ctx);
    const outcome = plan.entities.length === 0 ? { parked: [], sentEntities: 0, sentInstances: 0 } : await sendPlans(plan.entities, ctx);
    if (!store.isOpen()) return 'idle';
    await acknowledge(plan, outcome);
    uncertain = false;
    return 'progress';
  };

  const failed = (err: unknown): void => {
    failures += 1;
    uncertain = true;
    const message = err instanceof Error ? err.message : String(err);
    const at = clock.now();
    const delay = backoffDelay(failures, options.retryBaseMs, options.retryMaxMs, random);
    if (stopped) return;
    log.warn('federation batch failed; retrying', { error: message, failures, retryInMs: delay });
    if (store.isOpen()) store.write(() => store.federation.record({ error: { at, message: message.slice(0, 1_000) } })).catch(() => undefined);
    retry = setTimeout(() => {
      retry = undefined;
      run();
    }, delay);
    retry.unref();
  };

  const drain = async (): Promise<void> => {
    for (;;) {
      if (stopped) return;
      again = false;
      if ((await step()) === 'idle' && !again) return;
      failures = 0;
    }
  };

  const run = (): void => {
    if (!started || stopped || retry !== undefined) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().then(
      () => {
        running = undefined;
        if (again) run();
      },
      (err: unknown) => {
        running = undefined;
        failed(err);
      },
    );
  };

  return {
    start() {
      started = true;
      log.info('federation started', { url: options.url, tenant: options.tenant, after: cursor() });
      run();
    },
    wake: () => run(),
    status() {
      const counters = store.federation.counters();
      const oldest = journal.readAfter(cursor(), 1, { entities: false })[0];
      return {
        enabled: true, url: options.url, outboxDepth: journal.backlog(FEDERATION_READER), oldestPending: oldest?.at,
        lastSuccess: counters.lastSuccess, lastError: counters.lastError, parked: store.federation.parkedCount(), dropped: counters.dropped,
        sent: { entities: counters.sentEntities, instances: counters.sentInstances },
      };
    },
    async stop(timeoutMs) {
      stopped = true;
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
      const inFlight = running;
      if (inFlight === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([inFlight.catch(() => undefined), late]);
      clearTimeout(timer);
      // The batch in flight is sent again after the next start: the cursor moved only for what was acknowledged.
      abort.abort();
      await inFlight.catch(() => undefined);
    },
  };
}
