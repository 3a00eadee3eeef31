// Home Assistant MQTT discovery on the embedded broker: one more reader of the change journal. At
// start, and whenever a device record or its entity changes, the device's discovery configs and its
// state are published retained (only what changed); a device deleted has its configs removed (empty
// retained payloads). Home Assistant's buttons, numbers and switches publish on command topics that
// the broker hands here: each becomes a write of the command attribute through the write core, as
// the publishing client, which the command dispatcher then sends to the device.

import type { ChangeEvent } from '../events.js';
import type { ContextInput, ContextService } from '../jsonld/index.js';
import type { Clock, Logger } from '../lib/index.js';
import type { EntityId, Iri, Json, Principal, TermMapper } from '../ngsi/index.js';
import type { DeviceRecord, JournalFeed, JournalFollower, Store } from '../store/index.js';
import {
  GATEWAY_STATUS_TOPIC, OFFLINE, ONLINE, PRESS, discoveryOf, gatewayConfig, stateTopicOf, type CommandComponent, type Discovery, type DiscoveryOptions,
} from './discovery.js';
import { ownRetainedTopics } from './retained.js';

/** The journal reader of the integration (its cursor's key). */
const READER = 'home-assistant';
const PAGE = 500;
/** Longest payload of a button press taken as a command's value. */
const MAX_PRESS = 256;

export interface HomeAssistantDeps {
  store: Pick<Store, 'devices' | 'entities' | 'mqttSessions'>;
  feed: JournalFeed;
  contexts: Pick<ContextService, 'resolve' | 'core'>;
  log: Logger;
  clock: Clock;
  options: DiscoveryOptions;
  /** Publishes QoS 1 on the embedded broker, retained or not; rejects when the broker is not running. */
  publish(topic: string, payload: string, retain: boolean): Promise<void>;
  /** Writes an attribute of an entity as `actor` through the write core (with its permission checks). */
  writeCommand(actor: Principal, entityId: EntityId, attr: Iri, value: Json): Promise<void>;
}

export interface HomeAssistant {
  /** The embedded broker runs: the gateway is online, every device's configs and state are published, changes followed. */
  start(): Promise<void>;
  /** The gateway goes offline (retained), the journal is no longer followed. */
  stop(): Promise<void>;
  /** A device record was registered, updated or deleted: its configs follow. */
  deviceWritten(tenant: string, deviceId: string): void;
  /** A message on a command topic: written as the command attribute's value by `actor`; resolves after its write (or refusal). */
  command(actor: Principal, tenant: string, deviceId: string, command: string, payload: Buffer): Promise<void>;
  /** Resolves once every change committed so far is published. */
  idle(): Promise<void>;
  stats(): HomeAssistantStats;
}

/** unknown: no such command of a registered device; payload: not a value of its component; refused: the write was refused (permission, entity gone). */
export type CommandDrop = 'unknown' | 'payload' | 'refused';
export const COMMAND_DROPS: readonly CommandDrop[] = ['unknown', 'payload', 'refused'];

export interface HomeAssistantStats {
  /** Commands from Home Assistant written. */
  commands: number;
  dropped: Record<CommandDrop, number>;
}

/** A dropped command is logged at most once a second per reason (a client flooding fills no log). */
const LOG_EVERY_MS = 1_000;

/** A device as last published. */
interface Known {
  readonly tenant: string;
  readonly record: DeviceRecord;
  readonly mapper: TermMapper;
  published: Discovery | undefined;
}

const keyOf = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

/** The value a command topic's payload writes, or what was expected instead. */
function commandValueOf(component: CommandComponent, payload: Buffer): { value: Json } | { expected: string } {
  const text = payload.toString('utf8').trim();
  switch (component) {
    case 'button':
      return text === '' || text.length > MAX_PRESS ? { expected: `a press of 1 to ${MAX_PRESS} characters (${PRESS})` } : { value: text };
    case 'switch':
      return text === 'ON' ? { value: true } : text === 'OFF' ? { value: false } : { expected: 'ON or OFF' };
    case 'number': {
      const n = text === '' ? Number.NaN : Number(text);
      return Number.isFinite(n) ? { value: n } : { expected: 'a number' };
    }
  }
}

/** What the integration's functions share. */
interface Discoverer {
  readonly deps: HomeAssistantDeps;
  readonly devices: Map<string, Known>;
  readonly byEntity: Map<string, Known[]>;
  /** Every publication runs in this chain, one after the other: a device's messages never overtake each other. */
  chain: Promise<void>;
  running: boolean;
  readonly counts: HomeAssistantStats;
  readonly loggedAt: Record<CommandDrop, number>;
}

function drop(s: Discoverer, reason: CommandDrop, fields: Record<string, unknown>): void {
  s.counts.dropped[reason] += 1;
  const now = s.deps.clock.now();
  if (now - s.loggedAt[reason] < LOG_EVERY_MS) return;
  s.loggedAt[reason] = now;
  s.deps.log.info('home assistant command dropped', { reason, ...fields });
}

function enqueue(s: Discoverer, work: () => Promise<void>): Promise<void> {
  return (s.chain = s.chain.then(work).catch((err: unknown) => {
    s.deps.log.warn('home assistant discovery not published', { err });
  }));
}

async function publish(s: Discoverer, topic: string, payload: string): Promise<void> {
  try {
    await s.deps.publish(topic, payload, true);
  } catch (err) {
    s.deps.log.debug('home assistant message not published', { topic, err });
  }
}

function forget(s: Discoverer, k: Known): void {
  s.devices.delete(keyOf(k.tenant, k.record.deviceId));
  const ekey = keyOf(k.tenant, k.record.entityId);
  const rest = (s.byEntity.get(ekey) ?? []).filter((o) => o !== k);
  if (rest.length === 0) s.byEntity.delete(ekey);
  else s.byEntity.set(ekey, rest);
}

function remember(s: Discoverer, k: Known): void {
  s.devices.set(keyOf(k.tenant, k.record.deviceId), k);
  const ekey = keyOf(k.tenant, k.record.entityId);
  s.byEntity.set(ekey, [...(s.byEntity.get(ekey) ?? []), k]);
}

/** Publishes what changed of a device's configs and state (all of it the first time). */
async function publishDevice(s: Discoverer, k: Known, entity: ChangeEvent['entity']): Promise<void> {
  const device = { tenant: k.tenant, deviceId: k.record.deviceId, entityType: k.record.entityType, commands: k.record.commands.map((c) => c.name) };
  const next = discoveryOf(s.deps.options, device, entity, k.mapper, k.published);
  const before = k.published;
  k.published = next;
  for (const [topic, payload] of next.configs) if (before?.configs.get(topic) !== payload) await publish(s, topic, payload);
  for (const topic of before?.configs.keys() ?? []) if (!next.configs.has(topic)) await publish(s, topic, '');
  if (before?.state !== next.state) await publish(s, stateTopicOf(k.tenant, k.record.deviceId), next.state);
}

async function unpublishDevice(s: Discoverer, k: Known): Promise<void> {
  for (const topic of k.published?.configs.keys() ?? []) await publish(s, topic, '');
  await publish(s, stateTopicOf(k.tenant, k.record.deviceId), '');
}

/** Reads a device record into memory and publishes it (not when its @context cannot be resolved). */
async function load(s: Discoverer, tenant: string, record: DeviceRecord): Promise<void> {
  const previous = s.devices.get(keyOf(tenant, record.deviceId));
  let mapper: TermMapper;
  try {
    // NOTE: a DeviceContext is a ContextInput (checked when the device was registered).
    mapper = record.context === undefined ? s.deps.contexts.core : await s.deps.contexts.resolve(record.context as ContextInput);
  } catch (err) {
    s.deps.log.warn('a device is not discovered: its @context cannot be resolved', { tenant, deviceId: record.deviceId, err });
    return;
  }
  const k: Known = { tenant, record, mapper, published: previous?.published };
  if (previous !== undefined) forget(s, previous);
  remember(s, k);
  await publishDevice(s, k, s.deps.store.entities.get({ tenant }, record.entityId));
}

async function refresh(s: Discoverer, tenant: string, deviceId: string): Promise<void> {
  const record = s.deps.store.devices.get(tenant, deviceId);
  if (record !== undefined) return load(s, tenant, record);
  const previous = s.devices.get(keyOf(tenant, deviceId));
  if (previous === undefined) return;
  forget(s, previous);
  await unpublishDevice(s, previous);
}

async function handle(s: Discoverer, changes: ChangeEvent[]): Promise<void> {
  // The newest state of each entity a device writes: one publication per device and batch.
  const latest = new Map<Known[], ChangeEvent>();
  for (const change of changes) {
    if (change.kind === 'historyChanged' || change.kind === 'registrationChanged') continue;
    const list = s.byEntity.get(keyOf(change.tenant, change.id));
    if (list !== undefined) latest.set(list, change);
  }
  for (const [list, change] of latest) for (const k of list) await publishDevice(s, k, change.entity);
}

async function loadAll(s: Discoverer): Promise<void> {
  const gateway = gatewayConfig(s.deps.options);
  await publish(s, gateway.topic, gateway.payload);
  await publish(s, GATEWAY_STATUS_TOPIC, ONLINE);
  const { devices } = s.deps.store;
  for (let after = 0, page = devices.everyTenant(0, PAGE); page.length > 0; page = devices.everyTenant(after, PAGE)) {
    for (const { tenant, device } of page) await load(s, tenant, device);
    after = page[page.length - 1]!.seq;
  }
}

/** Removes the retained configs and states of devices no longer registered (deleted while the gateway was down or the integration off). */
async function removeStale(s: Discoverer): Promise<void> {
  const current = new Set([gatewayConfig(s.deps.options).topic, GATEWAY_STATUS_TOPIC]);
  for (const k of s.devices.values()) {
    for (const topic of k.published?.configs.keys() ?? []) current.add(topic);
    current.add(stateTopicOf(k.tenant, k.record.deviceId));
  }
  for (const topic of ownRetainedTopics(s.deps.store, s.deps.options)) if (!current.has(topic)) await publish(s, topic, '');
}

async function applyCommand(s: Discoverer, actor: Principal, tenant: string, deviceId: string, command: string, payload: Buffer): Promise<void> {
  const k = s.devices.get(keyOf(tenant, deviceId));
  const component = k?.published?.commands.get(command);
  if (k === undefined || component === undefined) return drop(s, 'unknown', { tenant, deviceId, command });
  const parsed = commandValueOf(component, payload);
  if ('expected' in parsed) return drop(s, 'payload', { tenant, deviceId, command, expected: parsed.expected });
  try {
    await s.deps.writeCommand(actor, k.record.entityId, k.mapper.expandTerm(command), parsed.value);
    s.counts.commands += 1;
  } catch (err) {
    drop(s, 'refused', { tenant, deviceId, command, subject: actor.subject ?? null, err });
  }
}

export function createHomeAssistant(deps: HomeAssistantDeps): HomeAssistant {
  const s: Discoverer = {
    deps, devices: new Map(), byEntity: new Map(), chain: Promise.resolve(), running: false,
    counts: { commands: 0, dropped: { unknown: 0, payload: 0, refused: 0 } }, loggedAt: { unknown: -Infinity, payload: -Infinity, refused: -Infinity },
  };
  // Registered now, so that a reader seen for the first time starts at the journal's end as it is now.
  const follower: JournalFollower = deps.feed.register({
    reader: READER,
    handle: (changes) => enqueue(s, () => handle(s, changes)),
    saveEveryMs: 1_000,
    // NOTE: what changes while not running is published whole at start.
    ignoresAll: () => !s.running || s.devices.size === 0,
    failed: (err, retry) => deps.log.warn('home assistant states not published; retrying', { err, delayMs: retry.delayMs }),
  });
  return {
    async start() {
      s.running = true;
      await enqueue(s, async () => {
        await loadAll(s);
        await removeStale(s);
      });
      follower.start();
      deps.log.info('home assistant discovery published', { prefix: deps.options.prefix, nodeId: deps.options.nodeId, devices: s.devices.size });
    },
    async stop() {
      if (!s.running) return;
      s.running = false;
      await follower.stop();
      await enqueue(s, () => publish(s, GATEWAY_STATUS_TOPIC, OFFLINE));
    },
    deviceWritten(tenant, deviceId) {
      if (s.running) void enqueue(s, () => refresh(s, tenant, deviceId));
    },
    command: (actor, tenant, deviceId, command, payload) => applyCommand(s, actor, tenant, deviceId, command, payload),
    idle: async () => {
      await follower.idle();
      await s.chain;
    },
    stats: () => ({ commands: s.counts.commands, dropped: { ...s.counts.dropped } }),
  };
}
