// The devices that accept commands, in memory by (tenant, entity id): the dispatcher's test of a
// change is a map lookup, so that a write of an entity no device commands costs no query. Built
// from the device registry at start, and again for one device whenever its record is written.

import type { ContextInput, ContextService } from '../jsonld/index.js';
import { parseFixedDuration, type EntityId, type Iri, type TermMapper } from '../ngsi/index.js';
import type { DeviceRecord, Store } from '../store/index.js';
import type { Logger } from '../lib/index.js';

/** One command a device accepts, with the expanded names of its attribute and of its state. */
export interface CommandSpec {
  readonly name: string;
  readonly expiresMs: number;
  readonly attr: Iri;
  readonly statusAttr: Iri;
  readonly infoAttr: Iri;
}

/** A device that accepts commands, as the dispatcher sees it. */
export interface CommandedDevice {
  readonly tenant: string;
  readonly deviceId: string;
  readonly entityId: EntityId;
  /** The subject the device's own measurements are written as: never a command. */
  readonly subject: string;
  /** Its commands by the expanded name of their attribute. */
  readonly byAttr: ReadonlyMap<Iri, CommandSpec>;
  /** The terms of its @context: a command's value goes to the device in them. */
  readonly mapper: TermMapper;
}

export interface CommandIndex {
  /** The device commanded through an entity; undefined for almost every change. */
  get(tenant: string, entityId: EntityId): CommandedDevice | undefined;
  /** A device by its id (answers and deliveries name the device). */
  device(tenant: string, deviceId: string): CommandedDevice | undefined;
  /** Whether no device accepts commands. */
  isEmpty(): boolean;
  /** Reads every device that declares commands. */
  load(): Promise<void>;
  /** Reads one device's record again (registered, updated or deleted). */
  refresh(tenant: string, deviceId: string): Promise<void>;
}

export interface CommandIndexDeps {
  store: Pick<Store, 'devices'>;
  contexts: Pick<ContextService, 'resolve' | 'core'>;
  log: Logger;
  deviceSubject(tenant: string, deviceId: string): string;
}

const PAGE = 500;

export function createCommandIndex(deps: CommandIndexDeps): CommandIndex {
  const { store, contexts, log } = deps;
  /** tenant → entity id → device (nested maps: a lookup joins no key). */
  const byEntity = new Map<string, Map<EntityId, CommandedDevice>>();
  /** tenant → device id → device. */
  const byDevice = new Map<string, Map<string, CommandedDevice>>();
  let size = 0;

  const remove = (tenant: string, deviceId: string): void => {
    const old = byDevice.get(tenant)?.get(deviceId);
    if (old === undefined) return;
    byDevice.get(tenant)?.delete(deviceId);
    const entities = byEntity.get(tenant);
    if (entities?.get(old.entityId) === old) entities.delete(old.entityId);
    size -= 1;
  };

  const add = (d: CommandedDevice): void => {
    remove(d.tenant, d.deviceId);
    let entities = byEntity.get(d.tenant);
    if (entities === undefined) byEntity.set(d.tenant, (entities = new Map()));
    let devices = byDevice.get(d.tenant);
    if (devices === undefined) byDevice.set(d.tenant, (devices = new Map()));
    entities.set(d.entityId, d);
    devices.set(d.deviceId, d);
    size += 1;
  };

  const entryOf = async (tenant: string, record: DeviceRecord): Promise<CommandedDevice> => {
    // NOTE: a DeviceContext is a ContextInput (checked when the device was registered).
    const mapper = record.context === undefined ? contexts.core : await contexts.resolve(record.context as ContextInput);
    const byAttr = new Map<Iri, CommandSpec>();
    for (const { name, expires } of record.commands) {
      const spec: CommandSpec = {
        name, expiresMs: parseFixedDuration(expires) ?? 60_000, attr: mapper.expandTerm(name),
        statusAttr: mapper.expandTerm(`${name}_status`), infoAttr: mapper.expandTerm(`${name}_info`),
      };
      byAttr.set(spec.attr, spec);
    }
    return { tenant, deviceId: record.deviceId, entityId: record.entityId, subject: deps.deviceSubject(tenant, record.deviceId), byAttr, mapper };
  };

  const put = async (tenant: string, record: DeviceRecord): Promise<void> => {
    try {
      add(await entryOf(tenant, record));
    } catch (err) {
      remove(tenant, record.deviceId);
      log.warn('the commands of a device are not dispatched: its @context cannot be resolved', { tenant, deviceId: record.deviceId, err });
    }
  };

  return {
    get: (tenant, entityId) => (size === 0 ? undefined : byEntity.get(tenant)?.get(entityId)),
    device: (tenant, deviceId) => byDevice.get(tenant)?.get(deviceId),
    isEmpty: () => size === 0,
    async load() {
      for (let after = 0, page = store.devices.withCommands(0, PAGE); page.length > 0; page = store.devices.withCommands(after, PAGE)) {
        for (const { tenant, device } of page) await put(tenant, device);
        after = page[page.length - 1]!.seq;
      }
    },
    async refresh(tenant, deviceId) {
      const record = store.devices.get(tenant, deviceId);
      if (record === undefined || record.commands.length === 0) {
        remove(tenant, deviceId);
        return;
      }
      await put(tenant, record);
    },
  };
}
