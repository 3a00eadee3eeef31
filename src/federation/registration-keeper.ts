// The registration keeper: keeps the gateway registered with the upstream broker as a context source
// of the entity types and attributes it holds (NGSI-LD §5.9.2 Register, §5.9.3 Update, §5.9.5 Delete
// Context Source Registration). It registers once the gateway serves, renews the registration before
// it expires, updates its information when a new type or attribute appears (debounced), registers
// again when the upstream forgot it, backs off while the link is down, and removes it on a clean stop.
// Nothing waits for it: a tick on the clock drives every step.

import type { ChangeEmitter, ChangeEvent } from '../events.js';
import { type Clock, type Logger } from '../lib/index.js';
import { formatDateTime, contextLinkValue, type Iri, type JsonObject, type TermMapper } from '../ngsi/index.js';
import type { Store } from '../store/index.js';
import { recordFailure, type RetryState } from './backoff.js';
import type { UpstreamClient, UpstreamReply } from './client.js';
import { UpstreamError } from './errors.js';
import {
  informationOf, isSameHeld, readHeldTypes, registrationBody, type HeldFilter, type HeldTypes, type RegistrationFacts,
} from './registration-body.js';
import { describeReply } from './replies.js';

const REGISTRATIONS = '/ngsi-ld/v1/csourceRegistrations';
/** Longest and shortest wait between two looks at the clock (renewal, debounce and retry times are checked then). */
const MAX_TICK_MS = 1_000;
const MIN_TICK_MS = 10;

export interface RegistrationKeeperOptions {
  /** The local tenant whose entities are registered. */
  tenant: string;
  /** Type and attribute names registered (expanded with the upstream context); empty: all. */
  types: readonly string[];
  attrs: readonly string[];
  lifetimeMs: number;
  /** Renewed this long before it expires. */
  renewBeforeMs: number;
  debounceMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Longest wait for the removal on stop. */
  stopTimeoutMs: number;
}

export interface RegistrationKeeperDeps {
  client: UpstreamClient;
  store: Pick<Store, 'discovery'>;
  /** Changes after commit: a new type or attribute marks the information for an update. */
  events: Pick<ChangeEmitter, 'on'>;
  /** The upstream context: its term mapper and the URL its Link names. */
  context(): Promise<{ mapper: TermMapper; linkUrl: string }>;
  /** Id, name, endpoint and mode; read at start (the endpoint may name the bound port). */
  facts(): RegistrationFacts;
  options: RegistrationKeeperOptions;
  clock: Clock;
  log: Logger;
  random?: () => number;
}

/** What the federation status shows of the registration; instants are epoch ms. */
export interface RegistrationStatus {
  id: string;
  endpoint: string;
  mode: string;
  /** Whether the upstream holds it, as far as the last answer said. */
  registered: boolean;
  expiresAt: number | undefined;
  /** Entity types in its information. */
  types: number;
  lastSuccess: number | undefined;
  lastError: { at: number; message: string } | undefined;
  /** Failed attempts since start. */
  failures: number;
}

export interface RegistrationKeeper {
  /** Starts keeping the registration (the first attempt at once, in the background). */
  start(): void;
  status(): RegistrationStatus;
  /** Stops, and removes the registration upstream within the stop timeout. */
  stop(): Promise<void>;
}

interface KeeperState extends RetryState {
  facts: RegistrationFacts | undefined;
  registered: boolean;
  /** Whether a request that may have created it was sent (a removal is then due on stop). */
  attempted: boolean;
  expiresAt: number | undefined;
  held: HeldTypes;
  /** When a type or attribute not registered appeared; undefined: nothing new. */
  dirtyAt: number | undefined;
  /** Whether the last look found nothing to register (then a change is waited for). */
  isIdle: boolean;
  lastSuccess: number | undefined;
}

const isOk = (status: number): boolean => status >= 200 && status < 300;

/** Whether a committed change shows a type or attribute the registration does not name yet. */
function isNew(e: ChangeEvent, tenant: string, held: HeldTypes, filter: HeldFilter | undefined): boolean {
  if (e.tenant !== tenant || e.entity === undefined) return false;
  for (const type of e.entity.types) {
    if (filter?.types !== undefined && !filter.types.has(type)) continue;
    const attrs = held.get(type);
    if (attrs === undefined) return true;
    for (const attr of e.written) if (!attrs.has(attr) && (filter?.attrs === undefined || filter.attrs.has(attr))) return true;
  }
  return false;
}

function filterOf(options: RegistrationKeeperOptions, mapper: TermMapper): HeldFilter {
  const expand = (names: readonly string[]): Set<Iri> | undefined => (names.length === 0 ? undefined : new Set(names.map((n) => mapper.expandTerm(n))));
  return { types: expand(options.types), attrs: expand(options.attrs) };
}

type Send = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: JsonObject) => Promise<UpstreamReply>;

interface PutIo {
  whole(): JsonObject;
  partial: JsonObject;
  /** The renewal's PATCH body when it is registered; undefined: create it. */
  patch: JsonObject | undefined;
}

/**
 * NGSI-LD §5.9.3: the renewal is a PATCH; forgotten upstream (404) it is created again (§5.9.2).
 * A creation that finds it (409, left by an earlier run) updates it whole; an update refused as a
 * conflict removes it and creates it again.
 */
async function putRegistration(send: Send, id: string, io: PutIo): Promise<void> {
  const item = `${REGISTRATIONS}/${encodeURIComponent(id)}`;
  const create = async (): Promise<UpstreamReply> => send('POST', REGISTRATIONS, io.whole());
  const recreate = async (): Promise<UpstreamReply> => {
    const removed = await send('DELETE', item);
    return isOk(removed.status) || removed.status === 404 ? create() : removed;
  };
  let reply = io.patch === undefined ? await create() : await send('PATCH', item, io.patch);
  if (reply.status === 404 && io.patch !== undefined) reply = await create();
  else if (reply.status === 409 && io.patch !== undefined) reply = await recreate();
  if (reply.status === 409) {
    reply = await send('PATCH', item, io.partial);
    if (reply.status === 404) reply = await create();
    else if (reply.status === 409) reply = await recreate();
  }
  if (!isOk(reply.status)) throw new UpstreamError(`registration ${id}: ${describeReply(reply.status, reply.body, reply.text)}`);
}

/** NGSI-LD §5.9.5: the upstream stops forwarding to a gateway that is going away (bounded; a failure is logged). */
async function removeRegistration(send: Send, facts: RegistrationFacts, expiresAt: number | undefined, log: Logger): Promise<boolean> {
  try {
    const reply = await send('DELETE', `${REGISTRATIONS}/${encodeURIComponent(facts.id)}`);
    if (!isOk(reply.status) && reply.status !== 404) throw new UpstreamError(describeReply(reply.status, reply.body, reply.text));
    log.info('registration upstream removed', { id: facts.id });
    return true;
  } catch (err) {
    log.warn('registration upstream not removed; it expires by itself', { id: facts.id, expiresAt, error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}

/** A failed attempt: the next one waits for the backoff. */
function failed(state: KeeperState, err: unknown, deps: Pick<RegistrationKeeperDeps, 'options' | 'clock' | 'log'>, random: () => number): void {
  const { options, clock, log } = deps;
  const now = clock.now();
  const { message, delay } = recordFailure(state, err, now, options, random);
  // A registration past its expiresAt is gone upstream: the next attempt creates it.
  if (state.expiresAt !== undefined && now >= state.expiresAt) state.registered = false;
  log.warn('registration upstream failed; retrying', { error: message, failures: state.failures, retryInMs: delay });
}

function statusOf(state: KeeperState): RegistrationStatus {
  return {
    id: state.facts?.id ?? '', endpoint: state.facts?.endpoint ?? '', mode: state.facts?.mode ?? '', registered: state.registered,
    expiresAt: state.registered ? state.expiresAt : undefined, types: state.registered ? state.held.size : 0,
    lastSuccess: state.lastSuccess, lastError: state.lastError, failures: state.failuresTotal,
  };
}

/** What to register now: the held types, what was registered while none is held, or the configured types. */
function heldNow(store: Pick<Store, 'discovery'>, tenant: string, filter: HeldFilter, registered: HeldTypes): HeldTypes {
  const held = readHeldTypes(store, tenant, filter);
  if (held.size > 0) return held;
  if (registered.size > 0) return registered;
  return new Map([...filter.types ?? []].map((t) => [t, new Map()]));
}

/** Requests upstream with the upstream context's Link, under `signal`. */
function senderOf(client: UpstreamClient, linkUrl: string, signal: AbortSignal): Send {
  return async (method, path, body) => client.send({
    method, path, link: contextLinkValue(linkUrl), signal, ...(body !== undefined ? { body } : {}),
  });
}

export function createRegistrationKeeper(deps: RegistrationKeeperDeps): RegistrationKeeper {
  const { client, store, options, clock, log } = deps;
  const random = deps.random ?? Math.random;
  const state: KeeperState = {
    facts: undefined, registered: false, attempted: false, expiresAt: undefined, held: new Map(), dirtyAt: undefined, isIdle: false,
    nextAttemptAt: 0, failures: 0, failuresTotal: 0, lastSuccess: undefined, lastError: undefined,
  };
  const abort = new AbortController();
  let filter: HeldFilter | undefined;
  let busy: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let unlisten: (() => void) | undefined;

  const sender = (linkUrl: string, signal: AbortSignal): Send => senderOf(client, linkUrl, signal);

  const isDirty = (now: number): boolean => state.dirtyAt !== undefined && now >= state.dirtyAt + options.debounceMs;
  // With nothing to register yet, it waits for a change (debounced) instead of reading the store on every tick.
  const isDue = (now: number): boolean => (!state.registered && (!state.isIdle || isDirty(now)))
    || (state.expiresAt !== undefined && now >= state.expiresAt - options.renewBeforeMs)
    || isDirty(now);

  /** One step: register, renew or update, as due. Throws UpstreamError when the upstream did not take it. */
  const step = async (now: number): Promise<void> => {
    const facts = (state.facts ??= deps.facts());
    const { mapper, linkUrl } = await deps.context();
    const dirtyAt = state.dirtyAt;
    state.dirtyAt = undefined;
    try {
      filter ??= filterOf(options, mapper);
      const held = heldNow(store, options.tenant, filter, state.held);
      state.isIdle = held.size === 0;
      if (state.isIdle) return; // Nothing held yet: registered with the first entity.
      const isChanged = !isSameHeld(held, state.held);
      const isRenewal = !state.registered || state.expiresAt === undefined || now >= state.expiresAt - options.renewBeforeMs;
      if (!isChanged && !isRenewal) return;
      const expiresAt = now + options.lifetimeMs;
      const information = informationOf(held, mapper);
      const whole = (): JsonObject => registrationBody(facts, information, formatDateTime(expiresAt), true);
      const partial = registrationBody(facts, information, formatDateTime(expiresAt), false);
      const patch = state.registered ? { expiresAt: formatDateTime(expiresAt), ...(isChanged ? { information } : {}) } : undefined;
      state.attempted = true;
      await putRegistration(sender(linkUrl, abort.signal), facts.id, { whole, partial, patch });
      if (!state.registered) log.info('registered upstream as a context source', { id: facts.id, endpoint: facts.endpoint, types: held.size });
      else if (isChanged) log.info('registration upstream updated', { id: facts.id, types: held.size });
      Object.assign(state, { registered: true, expiresAt, held, lastSuccess: clock.now() });
    } catch (err) {
      state.dirtyAt ??= dirtyAt;
      throw err;
    }
  };

  const tick = (): void => {
    const now = clock.now();
    // NOTE: a retry time further off than the longest backoff means the clock went back: not waited for.
    const isWaiting = now < state.nextAttemptAt && state.nextAttemptAt - now <= options.retryMaxMs;
    if (busy !== undefined || stopped || isWaiting || !isDue(now)) return;
    busy = step(now).then(() => {
      state.failures = 0;
      state.nextAttemptAt = 0;
    }, (err: unknown) => {
      if (!stopped) failed(state, err, deps, random);
    }).finally(() => {
      busy = undefined;
    });
  };

  return {
    start() {
      unlisten = deps.events.on((e) => {
        if (state.dirtyAt === undefined && isNew(e, options.tenant, state.held, filter)) state.dirtyAt = clock.now();
      });
      timer = setInterval(tick, Math.max(MIN_TICK_MS, Math.min(MAX_TICK_MS, options.debounceMs)));
      timer.unref();
      tick();
    },
    status: () => statusOf(state),
    stop: () => stopKeeper(),
  };

  async function stopKeeper(): Promise<void> {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    unlisten?.();
    abort.abort();
    await busy;
    if (state.facts === undefined || !state.attempted) return;
    const { linkUrl } = await deps.context();
    if (await removeRegistration(sender(linkUrl, AbortSignal.timeout(options.stopTimeoutMs)), state.facts, state.expiresAt, log)) state.registered = false;
  }
}
