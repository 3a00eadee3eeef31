// Home Assistant MQTT discovery on the embedded broker: one more reader of the change journal. At
// start, and whenever a device record or its entity changes, the device's discovery configs and its
// state are published retained (only what changed); a device deleted has its configs removed (empty
// retained payloads). Home Assistant's buttons, numbers and switches publish on command topics that
// the broker hands here: each becomes a write of the command attribute through the write core, as
// the publishing client, which the command dispatcher then sends to the device.

import type { ChangeEvent } from '../events.js';
import type { ContextInput, ContextService } from '../jsonld/index.js';
import type { Logger } from '../lib/index.js';
import type { EntityId, Iri, Json, Principal, TermMapper } from '../ngsi/index.js';
import type { DeviceRecord, JournalFeed, JournalFollower, Store } from '../store/index.js';
import {
  GATEWAY_STATUS_TOPIC, OFFLINE, ONLINE, PRESS, discoveryOf, gatewayConfig, stateTopicOf, type CommandComponent, type Discovery, type DiscoveryOptions,
} from './discovery.js';

/** The journal reader of the integration (its cursor's key). */
const READER = 'home-assistant';
const PAGE = 500;
/** Longest payload of a button press taken as a command's value. */
const MAX_PRESS = 256;

export interface HomeAssistantDeps {
  store: Pick<Store, 'devices' | 'entities'>;
  feed: JournalFeed;
  contexts: Pick<ContextService, 'resolve' | 'core'>;
  log: Logger;
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
}

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

export function createHomeAssistant(deps: HomeAssistantDeps): HomeAssistant {
  const { store, log, options } = deps;
  const devices = new Map<string, Known>();
  const byEntity = new Map<string, Known[]>();
  let running = false;
  /** Every publication runs in this chain, one after the other: a device's messages never overtake each other. */
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (work: () => Promise<void>): Promise<void> => (chain = chain.then(work).catch((err: unknown) => {
    log.warn('home assistant discovery not published', { err });
  }));

  const publish = async (topic: string, payload: string): Promise<void> => {
    try {
      await deps.publish(topic, payload, true);
    } catch (err) {
      log.debug('home assistant message not published', { topic, err });
    }
  };

  const forget = (k: Known): void => {
    devices.delete(keyOf(k.tenant, k.record.deviceId));
    const ekey = keyOf(k.tenant, k.record.entityId);
    const rest = (byEntity.get(ekey) ?? []).filter((o) => o !== k);
    if (rest.length === 0) byEntity.delete(ekey);
    else byEntity.set(ekey, rest);
  };

  const remember = (k: Known): void => {
    devices.set(keyOf(k.tenant, k.record.deviceId), k);
    const ekey = keyOf(k.tenant, k.record.entityId);
    byEntity.set(ekey, [...(byEntity.get(ekey) ?? []), k]);
  };

  /** Publishes what changed of a device's configs and state (all of it the first time). */
  const publishDevice = async (k: Known, entity: ChangeEvent['entity']): Promise<void> => {
    const device = { tenant: k.tenant, deviceId: k.record.deviceId, entityType: k.record.entityType, commands: k.record.commands.map((c) => c.name) };
    const next = discoveryOf(options, device, entity, k.mapper);
    const before = k.published;
    k.published = next;
    for (const [topic, payload] of next.configs) if (before?.configs.get(topic) !== payload) await publish(topic, payload);
    for (const topic of before?.configs.keys() ?? []) if (!next.configs.has(topic)) await publish(topic, '');
    if (before?.state !== next.state) await publish(stateTopicOf(k.tenant, k.record.deviceId), next.state);
  };

  const unpublishDevice = async (k: Known): Promise<void> => {
    for (const topic of k.published?.configs.keys() ?? []) await publish(topic, '');
    await publish(stateTopicOf(k.tenant, k.record.deviceId), '');
  };

  /** Reads a device record into memory and publishes it; undefined when its @context cannot be resolved. */
  const load = async (tenant: string, record: DeviceRecord, previous: Known | undefined): Promise<void> => {
    let mapper: TermMapper;
    try {
      // NOTE: a DeviceContext is a ContextInput (checked when the device was registered).
      mapper = record.context === undefined ? deps.contexts.core : await deps.contexts.resolve(record.context as ContextInput);
    } catch (err) {
      log.warn('a device is not discovered: its @context cannot be resolved', { tenant, deviceId: record.deviceId, err });
      return;
    }
    const k: Known = { tenant, record, mapper, published: previous?.published };
    if (previous !== undefined) forget(previous);
    remember(k);
    await publishDevice(k, store.entities.get({ tenant }, record.entityId));
  };

  const refresh = async (tenant: string, deviceId: string): Promise<void> => {
    const previous = devices.get(keyOf(tenant, deviceId));
    const record = store.devices.get(tenant, deviceId);
    if (record !== undefined) return load(tenant, record, previous);
    if (previous === undefined) return;
    forget(previous);
    await unpublishDevice(previous);
  };

  const handle = async (changes: ChangeEvent[]): Promise<void> => {
    // The newest state of each entity a device writes: one publication per device and batch.
    const latest = new Map<Known[], ChangeEvent>();
    for (const change of changes) {
      if (change.kind === 'historyChanged' || change.kind === 'registrationChanged') continue;
      const list = byEntity.get(keyOf(change.tenant, change.id));
      if (list !== undefined) latest.set(list, change);
    }
    for (const [list, change] of latest) for (const k of list) await publishDevice(k, change.entity);
  };

  const follower: JournalFollower = deps.feed.register({
    reader: READER,
    handle: (changes) => enqueue(() => handle(changes)),
    saveEveryMs: 1_000,
    ignoresAll: () => !running || devices.size === 0,
    failed: (err, retry) => log.warn('home assistant states not published; retrying', { err, delayMs: retry.delayMs }),
  });

  const loadAll = async (): Promise<void> => {
    const gateway = gatewayConfig(options);
    await publish(gateway.topic, gateway.payload);
    await publish(GATEWAY_STATUS_TOPIC, ONLINE);
    for (let after = 0, page = store.devices.everyTenant(0, PAGE); page.length > 0; page = store.devices.everyTenant(after, PAGE)) {
      for (const { tenant, device } of page) await load(tenant, device, devices.get(keyOf(tenant, device.deviceId)));
      after = page[page.length - 1]!.seq;
    }
  };

  return {
    async start() {
      running = true;
      await enqueue(loadAll);
      follower.start();
      log.info('home assistant discovery published', { prefix: options.prefix, nodeId: options.nodeId, devices: devices.size });
    },
    async stop() {
      if (!running) return;
      running = false;
      await follower.stop();
      await enqueue(() => publish(GATEWAY_STATUS_TOPIC, OFFLINE));
    },
    deviceWritten(tenant, deviceId) {
      if (running) void enqueue(() => refresh(tenant, deviceId));
    },
    async command(actor, tenant, deviceId, command, payload) {
      const k = devices.get(keyOf(tenant, deviceId));
      const component = k?.published?.commands.get(command);
      if (k === undefined || component === undefined) {
        log.info('home assistant command dropped: no such command of a device', { tenant, deviceId, command });
        return;
      }
      const parsed = commandValueOf(component, payload);
      if ('expected' in parsed) {
        log.info('home assistant command dropped: a bad payload', { tenant, deviceId, command, expected: parsed.expected });
        return;
      }
      try {
        await deps.writeCommand(actor, k.record.entityId, k.mapper.expandTerm(command), parsed.value);
      } catch (err) {
        log.info('home assistant command not written', { tenant, deviceId, command, subject: actor.subject ?? null, err });
      }
    },
    idle: async () => {
      await follower.idle();
      await chain;
    },
  };
}
