// Context source registration use cases (NGSI-LD §5.9, §5.10): register, retrieve, query, update,
// delete; each write one transaction that checks the mode rules against the stored registrations
// and the local entities.

import type { ChangeEvent, RegistrationStates } from '../events.js';
import type { Clock, IdGenerator } from '../lib/index.js';
import { AccessDeniedError, ConflictError, ResourceNotFoundError, type EntityId, type Json, type Principal, type TermMapper } from '../ngsi/index.js';
import type { Store, StoredRegistration, TxContext } from '../store/index.js';
import { fromStored, keysOf, toStored } from './codec.js';
import type { RegistrationInput } from './input.js';
import { clashingModes, matchesQuery, registrationsOverlap } from './match.js';
import type { Registration, RegistrationQuery } from './model.js';
import { parseRegistration, patchRegistration } from './parse.js';
import { localClash } from './local-clash.js';
import type { SourceIndex } from './sources.js';

export interface RegistrationServiceDeps {
  store: Store;
  clock: Clock;
  newId: IdGenerator;
  /** Whether an endpoint is this broker itself (a registration would forward to itself). */
  isSelf: (url: URL) => boolean;
  /** Announces a change once committed (the change emitter: it wakes the journal's readers). */
  announce?: (change: ChangeEvent) => void;
  /** The count of registrations per tenant that spares distributed operations a store read. */
  index: Pick<SourceIndex, 'added' | 'removed' | 'changed'>;
}

/** The request's term maps and @context as given (absent: core only). */
export interface RegistrationContext {
  mapper: TermMapper;
  context?: Json | undefined;
}

export interface RegistrationPage {
  items: Registration[];
  count?: number;
}

export interface RegistrationService {
  /** §5.9.2: 409 AlreadyExists when the tenant has that id, 409 Conflict when the mode rules forbid it. */
  create(actor: Principal, input: RegistrationInput, ctx: RegistrationContext): Registration;
  /** §5.10.1: 404 ResourceNotFound when unknown or expired. */
  get(actor: Principal, id: string): Registration;
  /** §5.10.2, in creation order; expired registrations are left out. */
  list(actor: Principal, query: RegistrationQuery, page: { limit: number; offset: number; count: boolean }): RegistrationPage;
  /** §5.9.3: members given replace the stored ones, null removes one; 404 when unknown. */
  update(actor: Principal, id: string, input: RegistrationInput, ctx: RegistrationContext): Registration;
  /** §5.9.4: 404 when unknown. */
  delete(actor: Principal, id: string): void;
  /** Removes registrations whose expiresAt has passed at `now`, each journaled once as expired; returns how many. */
  expire(now: number): number;
}

/** Most expired registrations one expiry run removes (the next run takes the rest). */
const EXPIRE_BATCH = 100;

/** The stored form of a registration as journaled (JSON by construction: it is written as a document). */
const stateOf = (stored: StoredRegistration): Json => stored as unknown as Json;

/** Most registrations of a tenant one listing or conflict check reads (an edge gateway holds a few). */
const MAX_CANDIDATES = 10_000;

const notFound = (id: string): ResourceNotFoundError => new ResourceNotFoundError('Context source registration not found', `No registration ${id}`);

/**
 * NGSI-LD §5.11.7: a registration change is journaled in its write's transaction, so that the
 * registration subscriptions' notifier (a journal reader) sees every one, once committed.
 */
function journal(deps: RegistrationServiceDeps, tx: TxContext, change: { tenant: string; id: string; subject: string | undefined; states: RegistrationStates }): void {
  const { tenant, id, subject, states } = change;
  const entry = {
    // NOTE: a registration change names the registration, not an entity; the readers tell them apart by kind.
    tenant, kind: 'registrationChanged' as const, id: id as EntityId, at: deps.clock.now(), written: [], deleted: [], instances: [], registration: states,
    ...(subject !== undefined ? { subject } : {}),
  };
  const seq = deps.store.journal.append(entry);
  const { announce } = deps;
  if (announce !== undefined) tx.onCommit(() => announce({ ...entry, seq }));
}

/**
 * A registration reroutes the reads and writes of every subject of the tenant to its endpoint, so
 * with authentication on only an administrator creates, changes or deletes one.
 */
function mayWrite(actor: Principal): void {
  if (!actor.admin) throw new AccessDeniedError('Access denied', 'Only an administrator registers, changes or deletes context sources');
}

/** Behaviour §8, as for subscriptions: others than its owner (and administrators) get 403; existence is told first (404). */
function owned(actor: Principal, reg: Registration): Registration {
  if (actor.admin || (reg.owner !== undefined && reg.owner.subject === actor.subject)) return reg;
  throw new AccessDeniedError('Access denied', `Registration ${reg.id} belongs to another subject`);
}

/** NGSI-LD §4.3.6.3, §5.9.2.4: the mode rules against the other registrations and the local entities. */
function checkConflicts(deps: RegistrationServiceDeps, tenant: string, reg: Registration): void {
  const { store } = deps;
  const modes = clashingModes(reg.mode);
  if (modes.length === 0) return;
  for (const stored of store.registrations.withModes(tenant, modes, deps.clock.now(), MAX_CANDIDATES)) {
    const other = fromStored(stored);
    if (other.id !== reg.id && registrationsOverlap(reg, other)) {
      throw new ConflictError('Conflicting registration', `${reg.mode} registration overlaps the ${other.mode} registration ${other.id}`);
    }
  }
  const why = localClash(store, tenant, reg);
  if (why !== undefined) throw new ConflictError('Conflicting registration', why);
}

export function createRegistrationService(deps: RegistrationServiceDeps): RegistrationService {
  const { store, clock } = deps;
  const load = (tenant: string, id: string): Registration => {
    const stored = store.registrations.get(tenant, id);
    if (stored === undefined || (stored.expiresAt !== undefined && stored.expiresAt <= clock.now())) throw notFound(id);
    return fromStored(stored);
  };
  return {
    create(actor, input, ctx) {
      const { tenant } = actor;
      mayWrite(actor);
      const parsed = parseRegistration(input, { ...ctx, now: clock.now(), newId: deps.newId, isSelf: deps.isSelf });
      const reg: Registration = actor.subject === undefined ? parsed : { ...parsed, owner: { subject: actor.subject } };
      store.transaction((tx) => {
        checkConflicts(deps, tenant, reg);
        const stored = toStored(reg);
        store.registrations.insert(tenant, stored, keysOf(reg));
        journal(deps, tx, { tenant, id: reg.id, subject: actor.subject, states: { after: stateOf(stored) } });
      });
      deps.index.added(tenant);
      return reg;
    },
    get: (actor, id) => owned(actor, load(actor.tenant, id)),
    list(actor, query, page) {
      const owner = actor.admin ? undefined : actor.subject ?? '';
      const selection = {
        now: clock.now(), limit: MAX_CANDIDATES, ...(owner !== undefined ? { owner } : {}),
        ...(query.types ? { types: query.types } : query.attrs ? { attrs: query.attrs } : query.ids ? { ids: query.ids } : {}),
      };
      const found = store.registrations.candidates(actor.tenant, selection).map(fromStored).filter((r) => matchesQuery(r, query));
      const out: RegistrationPage = { items: found.slice(page.offset, page.offset + page.limit) };
      if (page.count) out.count = found.length;
      return out;
    },
    update(actor, id, input, ctx) {
      const { tenant } = actor;
      const next = store.transaction((tx) => {
        const previous = owned(actor, load(tenant, id));
        mayWrite(actor);
        const next = patchRegistration(previous, input, { mapper: ctx.mapper, now: clock.now(), isSelf: deps.isSelf });
        checkConflicts(deps, tenant, next);
        const stored = toStored(next);
        store.registrations.replace(tenant, stored, keysOf(next));
        journal(deps, tx, { tenant, id, subject: actor.subject, states: { before: stateOf(toStored(previous)), after: stateOf(stored) } });
        return next;
      });
      deps.index.changed(tenant);
      return next;
    },
    delete(actor, id) {
      const { tenant } = actor;
      store.transaction((tx) => {
        const previous = owned(actor, load(tenant, id));
        mayWrite(actor);
        if (!store.registrations.delete(tenant, id)) throw notFound(id);
        journal(deps, tx, { tenant, id, subject: actor.subject, states: { before: stateOf(toStored(previous)) } });
      });
      deps.index.removed(tenant);
    },
    expire(now) {
      // NGSI-LD §5.2.9 expiresAt: an expired registration is gone for every operation already; removing
      // it journals its end once (the row goes with it, so a later run does not see it again).
      // NOTE: runs every second: most runs find nothing and open no write transaction.
      if (store.registrations.expired(now, 1).length === 0) return 0;
      return store.transaction((tx) => {
        const expired = store.registrations.expired(now, EXPIRE_BATCH);
        for (const { tenant, reg } of expired) {
          store.registrations.delete(tenant, reg.id);
          journal(deps, tx, { tenant, id: reg.id, subject: undefined, states: { before: stateOf(reg), expired: true } });
        }
        // NOTE: counted off once committed (an undone transaction keeps them).
        tx.onCommit(() => {
          for (const { tenant } of expired) deps.index.removed(tenant);
        });
        return expired.length;
      });
    },
  };
}
