// Device registry use cases: administrators register the MQTT devices of a tenant (the entity each
// one writes, how its measurements map to attributes, its secret), and ingestion resolves a device
// and checks its secret. Secrets are kept only as scrypt hashes and shown once.

import { randomBytes } from 'node:crypto';
import { hashSecret, hashSecretAsync, verifySecret } from '../auth/index.js';
import { AccessDeniedError, ResourceNotFoundError, type JsonObject, type Principal } from '../ngsi/index.js';
import { createLru, type Clock, type Lru } from '../lib/index.js';
import type { ContextService } from '../jsonld/index.js';
import type { DeviceCommand, DeviceContext, DeviceRecord, Store } from '../store/index.js';
import { checkWithContext } from './check-context.js';
import {
  DEFAULT_COMMAND_EXPIRES, checkCommands, checkContext, checkDeviceId, checkEntityId, checkEntityType, checkRenames, checkStaticAttributes, checkUnitCodes, invalid, isDeviceId,
} from './validate.js';

/** A registered device as the registry shows it: never its secret nor the secret's hash. */
export type Device = DeviceRecord;

/** What an administrator gives to register a device. */
export interface DeviceInput {
  deviceId: string;
  /** Default `urn:ngsi-ld:<entityType>:<deviceId>`. */
  entityId?: string;
  /** Default the configured default entity type (`mqtt.default-entity-type`). */
  entityType?: string;
  renames?: Record<string, string>;
  unitCodes?: Record<string, string>;
  staticAttributes?: JsonObject;
  context?: DeviceContext;
  /** The commands it accepts (edge.md §6); `expires` defaults to PT1M. */
  commands?: CommandInput[];
}

/** A command as declared: `expires` absent is PT1M. */
export interface CommandInput {
  name: string;
  expires?: string;
}

/** What an update changes: each member given replaces the stored one; `context: null` is the core context again. */
export interface DevicePatch {
  entityId?: string;
  entityType?: string;
  renames?: Record<string, string>;
  unitCodes?: Record<string, string>;
  staticAttributes?: JsonObject;
  context?: DeviceContext | null;
  commands?: CommandInput[];
}

/** What ingestion needs of a registered device. Frozen: it is shared by every message of the device. */
export interface DeviceMapping {
  readonly entityId: string;
  readonly entityType: string;
  /** Measurement key → attribute name. */
  readonly renames: Readonly<Record<string, string>>;
  /** Attribute name → UN/CEFACT unit code. */
  readonly unitCodes: Readonly<Record<string, string>>;
  /** NGSI-LD attributes in compact normalized form. */
  readonly staticAttributes: Readonly<JsonObject>;
  /** The @context that expands the names above; absent: the core context. */
  readonly context?: DeviceContext;
}

export interface DeviceService {
  /** Throws AccessDenied unless the actor may manage devices (so an edge can refuse before reading a body). */
  authorize(actor: Principal): void;
  /** Registers a device; its secret is returned here only. AlreadyExists when the tenant has the id. */
  create(actor: Principal, input: DeviceInput): Promise<{ device: Device; secret: string }>;
  get(actor: Principal, deviceId: string): Device;
  /** The devices of the actor's tenant in registration order; count computed only when asked. */
  list(actor: Principal, page: { limit: number; offset: number; count: boolean }): { items: Device[]; count?: number };
  update(actor: Principal, deviceId: string, patch: DevicePatch): Promise<Device>;
  delete(actor: Principal, deviceId: string): void;
  /** Draws a new secret (the old one stops working) and returns it, shown this once. */
  rotateSecret(actor: Principal, deviceId: string): string;
  /** The mapping of a registered device of the tenant ('' is the default tenant), or undefined. */
  resolve(tenant: string, deviceId: string): DeviceMapping | undefined;
  /**
   * Whether the secret is the device's, compared in constant time; false for an unknown device.
   * Rejects with SecretCheckBusyError when too many checks are in progress already.
   */
  checkSecret(tenant: string, deviceId: string, secret: string): Promise<boolean>;
}

export interface DeviceServiceDeps {
  store: Pick<Store, 'devices' | 'transaction'>;
  clock: Clock;
  /** Resolves a device's @context, against which its names and static attributes are checked. */
  contexts: Pick<ContextService, 'resolve'>;
  /** `mqtt.default-entity-type`. */
  defaultEntityType: string;
  /** Checks a secret against its hash (the global bound on checks); verifySecret when absent. */
  checkSecret?: (secret: string, hash: string) => Promise<boolean>;
  /** A new device secret; default 24 random bytes, base64url. */
  randomSecret?: () => string;
  /** A device was registered, updated or deleted (after commit): what depends on its record follows. */
  onWritten?: (tenant: string, deviceId: string) => void;
}

/** Devices whose resolution is kept in memory (the hot path of ingestion). */
const CACHE_SIZE = 1_024;
const SECRET_BYTES = 24;

const drawSecret = (): string => randomBytes(SECRET_BYTES).toString('base64url');

function requireAdmin(actor: Principal): void {
  if (!actor.admin) throw new AccessDeniedError('Access denied', 'Managing devices needs the admin role');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function mappingOf(d: DeviceRecord): DeviceMapping {
  const m = {
    entityId: d.entityId, entityType: d.entityType, renames: d.renames, unitCodes: d.unitCodes, staticAttributes: d.staticAttributes,
    ...(d.context === undefined ? {} : { context: d.context }),
  };
  return deepFreeze(m);
}

/** Checks the members a record has; the caller fills in defaults first. */
function checkRecord(d: Omit<DeviceRecord, 'createdAt' | 'modifiedAt'>): void {
  checkEntityType(d.entityType);
  checkEntityId(d.entityId);
  checkRenames(d.renames);
  checkUnitCodes(d.unitCodes);
  checkStaticAttributes(d.staticAttributes);
  checkCommands(d.commands);
  if (d.context !== undefined) checkContext(d.context);
}

/** The declarations with their defaults filled in. */
const commandsOf = (given: readonly CommandInput[]): DeviceCommand[] => given.map((c) => ({ name: c.name, expires: c.expires ?? DEFAULT_COMMAND_EXPIRES }));

/** What the registry's functions share. */
interface Registry {
  readonly store: DeviceServiceDeps['store'];
  readonly clock: Clock;
  readonly contexts: DeviceServiceDeps['contexts'];
  readonly randomSecret: () => string;
  readonly checkSecret: (secret: string, hash: string) => Promise<boolean>;
  /** null: known to be unregistered (a device publishing without a record is looked up once). */
  readonly cache: Lru<string, DeviceMapping | null>;
  readonly onWritten: ((tenant: string, deviceId: string) => void) | undefined;
}

const keyOf = (tenant: string, deviceId: string): string => `${tenant}\u0000${deviceId}`;

const notFound = (deviceId: string): ResourceNotFoundError => new ResourceNotFoundError('Device not found', deviceId);

/** Runs a write of one device and forgets its cached mapping, now and again when the write commits. */
function writing<T>(r: Registry, tenant: string, deviceId: string, fn: () => T): T {
  return r.store.transaction((tx) => {
    const key = keyOf(tenant, deviceId);
    const result = fn();
    r.cache.delete(key);
    tx.onCommit(() => {
      r.cache.delete(key);
      r.onWritten?.(tenant, deviceId);
    });
    return result;
  });
}

function existing(r: Registry, tenant: string, deviceId: string): DeviceRecord {
  checkDeviceId(deviceId);
  const d = r.store.devices.get(tenant, deviceId);
  if (!d) throw notFound(deviceId);
  return d;
}

async function checked(r: Registry, d: DeviceRecord): Promise<void> {
  checkRecord(d);
  await checkWithContext(r.contexts, d);
}

/** The record of a new device, defaults filled in. */
function recordOf(input: DeviceInput, defaultEntityType: string, now: number): DeviceRecord {
  const entityType = input.entityType ?? defaultEntityType;
  return {
    deviceId: input.deviceId, entityId: input.entityId ?? `urn:ngsi-ld:${entityType}:${input.deviceId}`, entityType,
    renames: input.renames ?? {}, unitCodes: input.unitCodes ?? {}, staticAttributes: input.staticAttributes ?? {},
    ...(input.context === undefined ? {} : { context: input.context }), commands: commandsOf(input.commands ?? []), createdAt: now, modifiedAt: now,
  };
}

async function updateDevice(r: Registry, actor: Principal, deviceId: string, patch: DevicePatch): Promise<Device> {
  const { context, commands, ...members } = patch;
  const { context: oldContext, ...old } = existing(r, actor.tenant, deviceId);
  const kept = context === undefined ? oldContext : context ?? undefined;
  const next: DeviceRecord = {
    ...old, ...members, ...(kept === undefined ? {} : { context: kept }), ...(commands === undefined ? {} : { commands: commandsOf(commands) }), modifiedAt: r.clock.now(),
  };
  await checked(r, next);
  writing(r, actor.tenant, deviceId, () => {
    if (!r.store.devices.replace(actor.tenant, next)) throw notFound(deviceId);
  });
  return next;
}

/** What ingestion asks of the registry: a device's mapping (cached) and whether a secret is its. */
function createDeviceLookup(r: Registry): Pick<DeviceService, 'resolve' | 'checkSecret'> {
  const { cache } = r;
  const { devices } = r.store;
  /**
   * Hashed once, on the first check of an unknown device, so that a miss costs what a hit costs; off
   * the main thread, so that the first of a flood of CONNECTs naming unknown devices stalls nothing.
   */
  let decoyHash: Promise<string> | undefined;
  return {
    resolve(tenant, deviceId) {
      const key = keyOf(tenant, deviceId);
      const hit = cache.get(key);
      if (hit !== undefined) return hit ?? undefined;
      if (!isDeviceId(deviceId)) return undefined;
      const d = devices.get(tenant, deviceId);
      const mapping = d ? mappingOf(d) : null;
      cache.set(key, mapping);
      return mapping ?? undefined;
    },

    async checkSecret(tenant, deviceId, secret) {
      const hash = isDeviceId(deviceId) ? devices.secretHash(tenant, deviceId) : undefined;
      if (hash !== undefined) return r.checkSecret(secret, hash);
      decoyHash ??= hashSecretAsync(r.randomSecret()).catch((err: unknown) => {
        decoyHash = undefined;
        throw err;
      });
      await r.checkSecret(secret, await decoyHash);
      return false;
    },
  };
}

/**
 * The device registry over the store. Management needs an administrator (authentication off, or the
 * admin role); `resolve` keeps recent answers in memory and forgets a device whenever it is written.
 */
export function createDeviceService(deps: DeviceServiceDeps): DeviceService {
  const { store, clock, contexts, defaultEntityType } = deps;
  const r: Registry = {
    store, clock, contexts, randomSecret: deps.randomSecret ?? drawSecret, checkSecret: deps.checkSecret ?? verifySecret, cache: createLru(CACHE_SIZE), onWritten: deps.onWritten,
  };
  const { devices } = store;
  /** Updates one after the other: each reads, checks (awaiting the context) and writes undisturbed. */
  let updates: Promise<unknown> = Promise.resolve();

  return {
    authorize: requireAdmin,

    async create(actor, input) {
      requireAdmin(actor);
      checkDeviceId(input.deviceId);
      const device = recordOf(input, defaultEntityType, clock.now());
      await checked(r, device);
      const secret = r.randomSecret();
      const hash = hashSecret(secret);
      writing(r, actor.tenant, device.deviceId, () => devices.insert(actor.tenant, device, hash));
      return { device, secret };
    },

    get(actor, deviceId) {
      requireAdmin(actor);
      return existing(r, actor.tenant, deviceId);
    },

    list(actor, page) {
      requireAdmin(actor);
      return devices.list(actor.tenant, page);
    },

    update(actor, deviceId, patch) {
      try {
        requireAdmin(actor);
        if (Object.keys(patch).length === 0) {
          throw invalid('Nothing to change: give entityId, entityType, renames, unitCodes, staticAttributes, context or commands');
        }
      } catch (err) {
        return Promise.reject(err);
      }
      const run = updates.then(() => updateDevice(r, actor, deviceId, patch));
      updates = run.catch(() => undefined);
      return run;
    },

    delete(actor, deviceId) {
      requireAdmin(actor);
      checkDeviceId(deviceId);
      writing(r, actor.tenant, deviceId, () => {
        if (!devices.delete(actor.tenant, deviceId)) throw notFound(deviceId);
      });
    },

    rotateSecret(actor, deviceId) {
      requireAdmin(actor);
      existing(r, actor.tenant, deviceId);
      const secret = r.randomSecret();
      const hash = hashSecret(secret);
      writing(r, actor.tenant, deviceId, () => {
        if (!devices.setSecretHash(actor.tenant, deviceId, hash, clock.now())) throw notFound(deviceId);
      });
      return secret;
    },

    ...createDeviceLookup(r),
  };
}
