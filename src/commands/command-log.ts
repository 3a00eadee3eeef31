// What a reader may know of the commands of one entity (edge.md §6): the device whose entity it is,
// the commands the device declares, and the latest commands issued through the entity. Access to
// the entity is the caller's to check (the same rules as reading and writing the entity).

import type { Json } from '../ngsi/index.js';
import type { CommandState, DeviceCommand, Store } from '../store/index.js';

/** One command as a reader sees it. */
export interface IssuedCommand {
  id: string;
  name: string;
  value: Json;
  state: CommandState;
  issuedAt: number;
  expiresAt: number;
}

/** The commands of an entity that is a device's. */
export interface EntityCommands {
  deviceId: string;
  commands: DeviceCommand[];
  /** Newest first. */
  recent: IssuedCommand[];
}

export interface CommandLog {
  /** Undefined when no device of the tenant writes that entity. */
  ofEntity(tenant: string, entityId: string, limit: number): EntityCommands | undefined;
}

export function createCommandLog({ store }: { store: Pick<Store, 'devices' | 'commands'> }): CommandLog {
  return {
    ofEntity(tenant, entityId, limit) {
      const device = store.devices.byEntity(tenant, entityId);
      if (device === undefined) return undefined;
      const recent = store.commands.recent(tenant, entityId, limit).map((c) => ({
        id: c.id, name: c.name, value: c.value, state: c.state, issuedAt: c.issuedAt, expiresAt: c.expiresAt,
      }));
      return { deviceId: device.deviceId, commands: device.commands, recent };
    },
  };
}
