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
/** Most announced changes kept for the next batches (beyond, they are read back from the journal). */
const MAX_ANNOUNCED = READ_ROWS;

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
  /** A change was committed, as announced after its commit: sent without reading it back when it follows the cursor. */
  offer(change: ChangeEvent): void;
  status(): FederationStatus;
  /** Stops taking batches; an in-flight one may finish within `timeoutMs`, then it is aborted. */
  stop(timeoutMs: number): Promise<void>;
}

/** What a step did: nothing to send, a full batch (more may be pending), or the rest of what was pending. */
type StepResult = 'idle' | 'full' | 'partial';

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
  let linger: NodeJS.Timeout | undefined;
  /** When the last batch that was not full was sent (performance.now()). */
  let partialAt = Number.NEGATIVE_INFINITY;
  /**
   * Changes as announced after their commit, with no gap in sequence: a batch that starts right
   * after the first of them plans from them, without reading back the entity and instances each
   * journal row points to (most of the cost of forwarding a change). Emptied on a gap, when full
   * (the drain is far behind: it reads the journal) and while the upstream is failing.
   */
  let announced: ChangeEvent[] = [];
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

  /** The changes after `after` as announced, then what the journal holds after them; undefined when they do not follow `after`. */
  const announcedAfter = (after: number): Iterable<ChangeEvent> | undefined => {
    const from = announced.findIndex((c) => c.seq > after);
    if (from < 0 || announced[from]!.seq !== after + 1) {
      if (from < 0) announced = [];
      return undefined;
    }
    // What the journal no longer holds is not forwarded (it was pruned, and counted, as lost to this reader).
    if (journal.seqAt(after, 0) !== after + 1) {
      announced = [];
      return undefined;
    }
    if (from > 0) announced = announced.slice(from);
    const taken = announced;
    return (function* () {
      yield* taken;
      // Committed and not announced yet: none in practice (a change is announced in its commit's turn).
      const rest = READ_ROWS - taken.length;
      if (rest > 0) yield* changesAfter(journal.readAfter(taken[taken.length - 1]!.seq, rest, { instances: true }), rest);
    })();
  };

  const step = async (): Promise<StepResult> => {
    await applyBounds();
    const after = cursor();
    const asked = Math.min(options.batchSize + 1, READ_ROWS);
    let changes = announcedAfter(after);
    if (changes === undefined) {
      const first = journal.readAfter(after, asked, { instances: true });
      if (first.length === 0) return 'idle';
      changes = changesAfter(first, asked);
    }
    let read = 0;
    const counted = (function* (all: Iterable<ChangeEvent>) {
      for (const c of all) {
        read += 1;
        yield c;
      }
    })(changes);
    const { mapper, linkUrl } = await deps.context();
    const plan = planBatch(counted, after, {
      tenant: options.tenant, types: await typeSet(mapper), maxEntities: options.batchSize,
      latest: (tenant, id) => store.archive.latest({ tenant }, id),
    });
    if (plan.lastSeq === after) return 'idle';
    const ctx = { client, mapper, link: `<${linkUrl}>; rel="${JSONLD_CONTEXT_REL}"; type="application/ld+json"`, signal: abort.signal };
    if (uncertain) await reconcile(plan.entities, ctx);
    const outcome = plan.entities.length === 0 ? { parked: [], sentEntities: 0, sentInstances: 0 } : await sendPlans(plan.entities, ctx);
    if (!store.isOpen()) return 'idle';
    await acknowledge(plan, outcome);
    uncertain = false;
    return plan.more || read >= READ_ROWS ? 'full' : 'partial';
  };

  const failed = (err: unknown): void => {
    failures += 1;
    uncertain = true;
    announced = [];
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
      const result = await step();
      if (result !== 'idle') failures = 0;
      if (result === 'partial') {
        // What was pending is sent: the next batch waits a little for more (see run).
        partialAt = performance.now();
        return;
      }
      if (result === 'idle' && !again) return;
    }
  };

  const run = (): void => {
    if (!started || stopped || retry !== undefined || linger !== undefined) return;
    if (running) {
      again = true;
      return;
    }
    const wait = partialAt + options.lingerMs - performance.now();
    if (wait > 0) {
      linger = setTimeout(() => {
        linger = undefined;
        run();
      }, wait);
      linger.unref();
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
    offer(change) {
      if (retry === undefined) {
        const last = announced[announced.length - 1];
        if ((last !== undefined && change.seq !== last.seq + 1) || announced.length >= MAX_ANNOUNCED) announced = [];
        announced.push(change);
      }
      run();
    },
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
      if (linger !== undefined) clearTimeout(linger);
      retry = undefined;
      linger = undefined;
      announced = [];
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
