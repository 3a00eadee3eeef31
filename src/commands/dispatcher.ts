// The command dispatcher (edge.md §6), one more reader of the change journal: a committed write of
// a command attribute of a device's entity (from any source but the device's own measurements)
// becomes a command row, recorded with `<name>_status` PENDING and the reader's cursor in one write,
// then published QoS 1 on `ngsi/<tenant>/<deviceId>/cmd`. The device's PUBACK makes it DELIVERED,
// its answer on `cmdexe` OK or ERROR (with `<name>_info`), and its expiry, or a later command of the
// same name, EXPIRED. Each state is a write of the write core, as the commands' own subject.

import type { ChangeEvent, WriteCore } from '../events.js';
import type { ContextService } from '../jsonld/index.js';
import type { Clock, IdGenerator, Logger } from '../lib/index.js';
import type { Json, Principal } from '../ngsi/index.js';
import type { JournalFeed, JournalFollower, Store } from '../store/index.js';
import { createCommandIndex, type CommandIndex, type CommandSpec, type CommandedDevice } from './command-index.js';
import { commandPayload, createOpenCommands, idOfPayload, OPEN_STATES, type OpenCommand, type OpenCommands } from './open-commands.js';
import { commandValue, stateOf, writeStates, type StateWrite } from './state-writes.js';
import { createAnswerDrops, type AnswerDrop, type AnswerDrops } from './answer-drops.js';
import { pruneFinishedCommands } from './prune.js';

/** The journal reader of the dispatcher (its cursor's key). */
const COMMANDS_READER = 'commands';
/** The subject the states of commands are written as. */
const COMMANDS_SUBJECT = 'urn:ngsi-ld:edgeld:commands';

/** A device's answer on `cmdexe`, validated at the edge. */
export interface CommandAnswer {
  id: string;
  status: 'OK' | 'ERROR';
  /** Absent: no `<name>_info` is written. */
  info?: Json;
}

export interface CommandStats {
  issued: number;
  delivered: number;
  answered: number;
  expired: number;
  /** Commands pending or delivered now. */
  open: number;
  /** Finished commands removed from the store by the housekeeping (past commands.retention). */
  pruned: number;
  /** Answers dropped, by reason. */
  dropped: Record<AnswerDrop, number>;
}

export interface CommandDispatcherDeps {
  store: Pick<Store, 'commands' | 'devices' | 'journal' | 'isOpen' | 'write'>;
  feed: JournalFeed;
  core: WriteCore;
  contexts: Pick<ContextService, 'resolve' | 'core'>;
  clock: Clock;
  log: Logger;
  newId: IdGenerator;
  /** The subject a device's own measurements are written as (never dispatched). */
  deviceSubject(tenant: string, deviceId: string): string;
  /** Publishes a command QoS 1, not retained, on the device's `cmd` topic; rejects when the broker is not running. */
  publish(tenant: string, deviceId: string, payload: string): Promise<void>;
  /** How often commands past their expiry are looked for (ms, default 1,000). */
  sweepMs?: number;
}

export interface CommandDispatcher {
  /** Reads the devices that accept commands and the open commands, then follows the journal. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A device's record was written: its commands are read again. */
  deviceWritten: (tenant: string, deviceId: string) => void;
  /** The embedded broker started: pending commands are published (persistent sessions queue them). */
  brokerStarted(): void;
  /** Whether a message on a device's `cmd` topic may still go to it: a command only while open and not expired. */
  mayForward(tenant: string, deviceId: string, payload: Buffer): boolean;
  /** The device acknowledged (PUBACK) a message of its `cmd` topic. */
  delivered(tenant: string, deviceId: string, payload: Buffer): void;
  /** A client subscribed to the device's `cmd` topic: its pending commands are published again. */
  subscribed(tenant: string, deviceId: string): void;
  /** Applies a device's answer (resolves after its commit), or drops it with a log line and a count. */
  answer(tenant: string, deviceId: string, answer: CommandAnswer): Promise<void>;
  /** Counts and logs an answer that is no valid answer. */
  refuseAnswer(tenant: string, deviceId: string, detail: string): void;
  stats(): CommandStats;
  /** Resolves once every change committed so far is dispatched. */
  idle(): Promise<void>;
  /** Removes the finished commands (OK, ERROR, EXPIRED) that finished before `before`, in chunks; resolves with how many. */
  prune(before: number, signal?: AbortSignal): Promise<number>;
}

/** A command found in a change. */
interface Issue {
  device: CommandedDevice;
  spec: CommandSpec;
  value: Json;
}

/** What the dispatcher's functions share. */
interface Dispatch {
  readonly deps: CommandDispatcherDeps;
  readonly index: CommandIndex;
  readonly open: OpenCommands;
  readonly drops: AnswerDrops;
  readonly counts: { issued: number; delivered: number; answered: number; expired: number; pruned: number };
  readonly actors: Map<string, Principal>;
  /** Moves asked for in this turn, not yet written (see settle()). */
  readonly settling: Settlement[];
}

/** The principal the states of a tenant's commands are written as: the gateway itself. */
function actorOf(d: Dispatch, tenant: string): Principal {
  let actor = d.actors.get(tenant);
  if (actor === undefined) d.actors.set(tenant, (actor = { tenant, subject: COMMANDS_SUBJECT, admin: true, assignees: [], groups: [] }));
  return actor;
}

/** The commands a change issues; none for almost every change (a map lookup). */
function issuesOf(index: CommandIndex, change: ChangeEvent): Issue[] | undefined {
  if (change.kind !== 'entityUpdated' && change.kind !== 'entityCreated' && change.kind !== 'entityReplaced') return undefined;
  const device = index.get(change.tenant, change.id);
  // NOTE: a device's own measurement never issues a command, whatever it writes.
  if (device === undefined || change.subject === device.subject || change.entity === undefined) return undefined;
  let out: Issue[] | undefined;
  for (const attr of change.written) {
    const spec = device.byAttr.get(attr);
    const instance = spec && change.entity.attrs[attr]?.[0];
    if (spec === undefined || instance === undefined) continue;
    (out ??= []).push({ device, spec, value: commandValue(instance, device.mapper) });
  }
  return out;
}

function publish(d: Dispatch, c: OpenCommand): void {
  d.deps.publish(c.tenant, c.deviceId, c.payload).catch((err: unknown) => {
    d.deps.log.debug('command not published now; the device gets it when it subscribes', { id: c.id, deviceId: c.deviceId, err });
  });
}

/** Records the commands with their PENDING state (superseding open ones of the same name) and the cursor, in one write. */
async function issue(d: Dispatch, tenant: string, issues: readonly Issue[], upTo: number): Promise<void> {
  const { store, newId } = d.deps;
  let made: OpenCommand[] = [];
  let ended: OpenCommand[] = [];
  await d.deps.core.write(actorOf(d, tenant), (tx) => {
    made = [];
    ended = [];
    const states: StateWrite[] = [];
    for (const { device, spec, value } of issues) {
      const ofDevice = made.filter((o) => o.deviceId === device.deviceId);
      const earlier = [...d.open.ofDevice(tenant, device.deviceId), ...ofDevice].filter((o) => o.name === spec.name && !ended.includes(o));
      for (const o of earlier) {
        if (!store.commands.transition(o.id, OPEN_STATES, 'EXPIRED', tx.now)) continue;
        states.push(stateOf(o.entityId, o.statusAttr, 'EXPIRED'));
        ended.push(o);
      }
      const record = {
        id: newId(), tenant, deviceId: device.deviceId, entityId: device.entityId, name: spec.name, attr: spec.attr, value,
        issuedAt: tx.now, expiresAt: tx.now + spec.expiresMs, state: 'PENDING' as const,
      };
      store.commands.insert(record);
      made.push({ ...record, statusAttr: spec.statusAttr, infoAttr: spec.infoAttr, payload: commandPayload(record, value), busy: false });
      states.push(stateOf(device.entityId, spec.statusAttr, 'PENDING'));
    }
    writeStates(tx, states, newId, COMMANDS_SUBJECT);
    store.journal.setCursor(COMMANDS_READER, upTo);
  });
  for (const o of ended) d.open.remove(o);
  d.counts.expired += ended.length;
  d.counts.issued += made.length;
  for (const o of made) {
    if (ended.includes(o)) continue;
    d.open.add(o);
    publish(d, o);
  }
}

/** The journal consumer: changes up to the first that issues commands of another tenant than the first one's. */
async function handleChanges(d: Dispatch, changes: ChangeEvent[], after: number): Promise<number> {
  let tenant: string | undefined;
  const issues: Issue[] = [];
  let upTo = after;
  for (const change of changes) {
    const found = issuesOf(d.index, change);
    if (found !== undefined) {
      if (tenant !== undefined && tenant !== change.tenant) break;
      tenant = change.tenant;
      issues.push(...found);
    }
    upTo = change.seq;
  }
  if (tenant !== undefined) await issue(d, tenant, issues, upTo);
  return upTo;
}

type Target = 'DELIVERED' | 'OK' | 'ERROR' | 'EXPIRED';

/** Moves asked for in one turn of the event loop, written together at its end. */
interface Settlement {
  list: readonly OpenCommand[];
  to: Target;
  info: Json | undefined;
  done(moved: OpenCommand[]): void;
  failed(err: unknown): void;
}

/**
 * Moves open commands to a state with their `_status` (and `_info`); resolves with those moved.
 * NOTE: the moves asked for in one turn of the event loop go in one write per tenant, in the order
 * asked: a device that acknowledges a command and answers it at once (both packets in one read) gets
 * its DELIVERED and its OK as two instances of `_status` in one update of its entity, not two writes.
 */
function settle(d: Dispatch, list: readonly OpenCommand[], to: Target, info?: Json): Promise<OpenCommand[]> {
  if (list.length === 0) return Promise.resolve([]);
  return new Promise((done, failed) => {
    d.settling.push({ list, to, info, done, failed });
    if (d.settling.length === 1) setImmediate(() => flushSettlements(d));
  });
}

function flushSettlements(d: Dispatch): void {
  const byTenant = new Map<string, Settlement[]>();
  for (const s of d.settling.splice(0)) {
    const tenant = s.list[0]!.tenant; // NOTE: settle() queues no empty list
    const group = byTenant.get(tenant);
    if (group === undefined) byTenant.set(tenant, [s]);
    else group.push(s);
  }
  for (const [tenant, group] of byTenant) {
    d.deps.core.write(actorOf(d, tenant), (tx) => {
      const states: StateWrite[] = [];
      const results = group.map((s) => {
        const from = s.to === 'DELIVERED' ? ['PENDING' as const] : OPEN_STATES;
        const moved: OpenCommand[] = [];
        for (const o of s.list) {
          if (!d.deps.store.commands.transition(o.id, from, s.to, tx.now)) continue;
          moved.push(o);
          states.push(stateOf(o.entityId, o.statusAttr, s.to));
          if (s.info !== undefined) states.push({ entityId: o.entityId, attr: o.infoAttr, value: s.info });
        }
        return moved;
      });
      writeStates(tx, states, d.deps.newId, COMMANDS_SUBJECT);
      return results;
    }).then(
      (results) => group.forEach((s, i) => s.done(results[i] ?? [])),
      (err: unknown) => group.forEach((s) => s.failed(err)),
    );
  }
}

/** Ends the commands past their expiry, a write per tenant. */
async function expireDue(d: Dispatch): Promise<void> {
  if (d.open.size === 0) return;
  const now = d.deps.clock.now();
  const byTenant = new Map<string, OpenCommand[]>();
  for (const o of d.open.values()) {
    if (o.expiresAt > now || o.busy) continue;
    o.busy = true;
    const list = byTenant.get(o.tenant);
    if (list === undefined) byTenant.set(o.tenant, [o]);
    else list.push(o);
  }
  for (const list of byTenant.values()) {
    try {
      const moved = await settle(d, list, 'EXPIRED');
      d.counts.expired += moved.length;
      for (const o of list) d.open.remove(o);
    } catch (err) {
      for (const o of list) o.busy = false;
      d.deps.log.warn('expired commands not recorded; tried again', { err });
    }
  }
}

async function applyAnswer(d: Dispatch, tenant: string, deviceId: string, a: CommandAnswer): Promise<void> {
  const o = d.open.get(a.id);
  const drop = (reason: AnswerDrop, detail: string): void => d.drops.drop(reason, { tenant, deviceId, id: a.id, detail });
  if (o === undefined) return drop('unknown', 'no open command has this id (unknown, answered or expired)');
  if (o.tenant !== tenant || o.deviceId !== deviceId) return drop('foreign', 'the command is another device\'s');
  if (o.expiresAt <= d.deps.clock.now()) return drop('expired', 'the command expired');
  if (o.busy) return drop('duplicate', 'an answer or the expiry of this command is being recorded');
  o.busy = true;
  try {
    // An answer says the command was delivered: a device may answer before its PUBACK arrives (mqtt.js
    // acknowledges after its message handler ran). DELIVERED is recorded first, in the same write.
    if (o.state === 'PENDING') markDelivered(d, tenant, deviceId, o);
    const moved = await settle(d, [o], a.status, a.info);
    d.open.remove(o);
    if (moved.length === 0) return drop('unknown', 'the command was answered or expired already');
    d.counts.answered += 1;
  } finally {
    o.busy = false;
  }
}

function markDelivered(d: Dispatch, tenant: string, deviceId: string, command: Buffer | OpenCommand): void {
  const id = Buffer.isBuffer(command) ? idOfPayload(command) : command.id;
  const o = id === undefined ? undefined : d.open.get(id);
  if (o === undefined || o.state !== 'PENDING' || o.tenant !== tenant || o.deviceId !== deviceId) return;
  o.state = 'DELIVERED';
  settle(d, [o], 'DELIVERED').then(
    (moved) => void (d.counts.delivered += moved.length),
    (err: unknown) => {
      // Not recorded: it stays PENDING, as stored, and goes again at the device's next subscription (it de-duplicates by id).
      if (o.state === 'DELIVERED') o.state = 'PENDING';
      d.deps.log.warn('command delivery not recorded', { id: o.id, deviceId, err });
    },
  );
}

function republish(d: Dispatch, tenant: string, deviceId: string): void {
  const now = d.deps.clock.now();
  for (const o of d.open.ofDevice(tenant, deviceId)) if (o.state === 'PENDING' && o.expiresAt > now) publish(d, o);
}

/** Publishes every pending command not expired (a persistent session queues it; a publish before the broker runs fails quietly). */
function publishPending(d: Dispatch): void {
  const now = d.deps.clock.now();
  for (const o of d.open.values()) if (o.state === 'PENDING' && o.expiresAt > now) publish(d, o);
}

export function createCommandDispatcher(deps: CommandDispatcherDeps): CommandDispatcher {
  const index = createCommandIndex({ store: deps.store, contexts: deps.contexts, log: deps.log, deviceSubject: deps.deviceSubject });
  const d: Dispatch = {
    deps, index, open: createOpenCommands(), drops: createAnswerDrops(deps.log, deps.clock),
    counts: { issued: 0, delivered: 0, answered: 0, expired: 0, pruned: 0 }, actors: new Map(), settling: [],
  };
  // Registered now, so that a reader seen for the first time starts at the journal's end as it is now.
  const follower: JournalFollower = deps.feed.register({
    reader: COMMANDS_READER,
    handle: (changes, batch) => handleChanges(d, changes, batch.after),
    saveEveryMs: 1_000,
    ignoresAll: () => index.isEmpty(),
    failed: (err, retry) => deps.log.warn('command dispatch failed; retrying', { err, delayMs: retry.delayMs }),
  });
  let sweep: NodeJS.Timeout | undefined;
  let sweeping = false;
  return {
    async start() {
      await index.load();
      d.open.load(deps.store, index);
      follower.start();
      // The broker may have started while the open commands were read (it asks for none before).
      publishPending(d);
      sweep = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        void expireDue(d).finally(() => (sweeping = false));
      }, deps.sweepMs ?? 1_000);
      sweep.unref();
    },
    async stop() {
      clearInterval(sweep);
      await follower.stop();
    },
    deviceWritten(tenant, deviceId) {
      index.refresh(tenant, deviceId).catch((err: unknown) => deps.log.warn('commands of a device not read', { tenant, deviceId, err }));
    },
    brokerStarted: () => publishPending(d),
    mayForward(tenant, deviceId, payload) {
      const id = idOfPayload(payload);
      // NOTE: a message that is no command of the dispatcher's (no id) is the publisher's business.
      if (id === undefined) return true;
      const o = d.open.get(id);
      return o !== undefined && o.tenant === tenant && o.deviceId === deviceId && o.expiresAt > deps.clock.now();
    },
    delivered: (tenant, deviceId, payload) => markDelivered(d, tenant, deviceId, payload),
    subscribed: (tenant, deviceId) => republish(d, tenant, deviceId),
    answer: (tenant, deviceId, a) => applyAnswer(d, tenant, deviceId, a),
    refuseAnswer: (tenant, deviceId, detail) => d.drops.drop('invalid', { tenant, deviceId, detail }),
    stats: () => ({ ...d.counts, open: d.open.size, dropped: d.drops.counts() }),
    idle: () => follower.idle(),
    async prune(before, signal) {
      const { removed } = await pruneFinishedCommands({ store: deps.store, log: deps.log, ...(signal ? { signal } : {}) }, before);
      d.counts.pruned += removed;
      return removed;
    },
  };
}
