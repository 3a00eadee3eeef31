// The commands still open (PENDING or DELIVERED), in memory by id and by device: what a delivery or
// an answer is matched against (a map lookup, so a flood of answers costs no query), what a device
// gets again when it subscribes, and what expires. Loaded from the store at start.

import { formatDateTime, type Json } from '../ngsi/index.js';
import type { CommandRecord, CommandState, Store } from '../store/index.js';
import type { CommandIndex } from './command-index.js';

/** An open command as the dispatcher keeps it. */
export interface OpenCommand {
  readonly id: string;
  readonly tenant: string;
  readonly deviceId: string;
  readonly entityId: string;
  readonly name: string;
  readonly statusAttr: string;
  readonly infoAttr: string;
  readonly expiresAt: number;
  /** The message sent on the device's `cmd` topic. */
  readonly payload: string;
  state: 'PENDING' | 'DELIVERED';
  /** A write about it is under way (an answer or its expiry): another is refused meanwhile. */
  busy: boolean;
}

export const OPEN_STATES: readonly CommandState[] = ['PENDING', 'DELIVERED'];

/** The message to the device (edge.md §6). */
export function commandPayload(r: Pick<CommandRecord, 'id' | 'name' | 'issuedAt' | 'expiresAt'>, value: Json): string {
  return JSON.stringify({ id: r.id, name: r.name, value, issuedAt: formatDateTime(r.issuedAt), expiresAt: formatDateTime(r.expiresAt) });
}

/** The ids of the command messages seen, by the message: forwarded, then acknowledged, it is read once. */
const idsOfPayloads = new WeakMap<Buffer, string | undefined>();

/** The id of a command message (undefined when it is none). */
export function idOfPayload(payload: Buffer): string | undefined {
  if (idsOfPayloads.has(payload)) return idsOfPayloads.get(payload);
  const id = readId(payload);
  idsOfPayloads.set(payload, id);
  return id;
}

function readId(payload: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(payload.toString('utf8'));
    const id: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'id') : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

const deviceKey = (tenant: string, deviceId: string): string => `${tenant}\u0000${deviceId}`;

export interface OpenCommands {
  get(id: string): OpenCommand | undefined;
  /** The open commands of a device, oldest first. */
  ofDevice(tenant: string, deviceId: string): readonly OpenCommand[];
  add(c: OpenCommand): void;
  remove(c: OpenCommand): void;
  values(): IterableIterator<OpenCommand>;
  readonly size: number;
  /** Reads the open commands of the store. */
  load(store: Pick<Store, 'commands'>, index: CommandIndex): void;
}

const PAGE = 500;

export function createOpenCommands(): OpenCommands {
  const byId = new Map<string, OpenCommand>();
  const byDevice = new Map<string, OpenCommand[]>();
  const self: OpenCommands = {
    get: (id) => byId.get(id),
    ofDevice: (tenant, deviceId) => byDevice.get(deviceKey(tenant, deviceId)) ?? [],
    add(c) {
      byId.set(c.id, c);
      const key = deviceKey(c.tenant, c.deviceId);
      const list = byDevice.get(key);
      if (list === undefined) byDevice.set(key, [c]);
      else list.push(c);
    },
    remove(c) {
      if (byId.get(c.id) !== c) return;
      byId.delete(c.id);
      const key = deviceKey(c.tenant, c.deviceId);
      const rest = (byDevice.get(key) ?? []).filter((x) => x !== c);
      if (rest.length === 0) byDevice.delete(key);
      else byDevice.set(key, rest);
    },
    values: () => byId.values(),
    get size() {
      return byId.size;
    },
    load(store, index) {
      let after = { expiresAt: 0, id: '' };
      for (let page = store.commands.open(after, PAGE); page.length > 0; page = store.commands.open(after, PAGE)) {
        for (const r of page) {
          const spec = index.device(r.tenant, r.deviceId)?.byAttr.get(r.attr);
          self.add({
            id: r.id, tenant: r.tenant, deviceId: r.deviceId, entityId: r.entityId, name: r.name, expiresAt: r.expiresAt,
            statusAttr: spec?.statusAttr ?? `${r.attr}_status`, infoAttr: spec?.infoAttr ?? `${r.attr}_info`,
            payload: commandPayload(r, r.value), state: r.state === 'DELIVERED' ? 'DELIVERED' : 'PENDING', busy: false,
          });
        }
        const last = page[page.length - 1]!;
        after = { expiresAt: last.expiresAt, id: last.id };
      }
    },
  };
  return self;
}
