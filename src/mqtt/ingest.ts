// Measurements over MQTT (edge.md §2): topic → device → entity, payload → NGSI-LD attributes with
// their observedAt, then the one write path. A message is answered only after its commit; a bad one
// is dropped with a log line and a counter, and never writes anything.
//
// ngsi/<tenant>/<deviceId>/attrs          JSON object of attributes, or an array of them (backfill)
// ngsi/<tenant>/<deviceId>/attrs/<attr>   one value
// ngsi/<tenant>/<deviceId>/status         "online" / "offline" → the connectionStatus Property

import { InsufficientStorageError, NgsiError, formatDateTime, isTenantName, type Iri, type ObservedInstance, type Principal, type TermMapper } from '../ngsi/index.js';
import type { Measurement } from '../entities/index.js';
import { isDeviceId, type DeviceMapping } from '../devices/index.js';
import { boundedMemo, type Clock, type Logger } from '../lib/index.js';
import {
  DROP_REASONS, Dropped, compactOf, instancesOf, payloadObjects, plainInstances, type DropReason, type MeasurementTopic,
} from './payload.js';

export type { DropReason, MeasurementTopic };

/** The topic prefix of measurements. */
export const MEASUREMENT_PREFIX = 'ngsi/';
/** The `<tenant>` segment that names the default tenant. */
export const DEFAULT_TENANT_SEGMENT = 'default';

const ATTRIBUTE_NAME = /^[^\s/+#]{1,256}$/;
/** Entity ids (and type lists) kept for this many devices at most. */
const MAX_CACHED_DEVICES = 10_000;
/** The empty list of instances, shared (never added to). */
const NONE: ObservedInstance[] = [];

/** Who published a message, as authenticated: named in the log line of each message dropped. */
/** The User Properties of an MQTT 5 packet: a name, a value or several. */
export type UserProperties = Record<string, string | string[]>;

export interface Publisher {
  readonly clientId: string;
  /** The device (`<tenant>/<deviceId>`), the token's subject, or null when anonymous. */
  readonly user: string | null;
}

export interface IngestDeps {
  clock: Clock;
  log: Logger;
  maxPayload: number;
  /** Type of an unregistered device's entity (`mqtt.default-entity-type`). */
  defaultEntityType: string;
  /** Whether an unregistered device's entity is created on its first measurement. */
  autoprovision: boolean;
  /** The registry's mapping of a device; undefined when unregistered. */
  device(tenant: string, deviceId: string): DeviceMapping | undefined;
  /** Term maps of a context (undefined: the core context, at once); cached by the context service. */
  mapper(context: unknown): TermMapper | Promise<TermMapper>;
  /** The write (entities' measurement use case). */
  record(actor: Principal, m: Measurement, opts: { create: boolean }): Promise<{ created: boolean }>;
}

export type IngestOutcome = { stored: true; created: boolean } | { stored: false; reason: DropReason; detail: string };

export interface IngestStats {
  received: number;
  stored: number;
  dropped: Record<DropReason, number>;
}

export interface Ingest {
  /**
   * Stores one message as `actor` (resolves after commit) or drops it; never rejects. No actor: the
   * client may not publish for this device (dropped as forbidden).
   */
  /**
   * `userProperties`: those of an MQTT 5 PUBLISH, written into the log line of the measurement (debug
   * when stored, with the reason when dropped).
   */
  handle(actor: Principal | undefined, topic: MeasurementTopic, payload: Buffer, from: Publisher, userProperties?: UserProperties): Promise<IngestOutcome>;
  /** Counts and logs a message dropped before ingestion: a topic under `ngsi/` that is no measurement topic. */
  dropTopic(topic: string, from: Publisher): void;
  stats(): IngestStats;
}

/** Parsed topics kept at most. */
const MAX_CACHED_TOPICS = 10_000;

/**
 * The measurement topic of a publish, or undefined when it is not one (or malformed). NOTE: a device
 * publishes on the same few topics again and again: each is parsed once (the result is read-only),
 * saving the split, the name checks and five strings per message.
 */
export const parseMeasurementTopic: (topic: string) => MeasurementTopic | undefined = boundedMemo(MAX_CACHED_TOPICS, parseTopic);

function parseTopic(topic: string): MeasurementTopic | undefined {
  if (!topic.startsWith(MEASUREMENT_PREFIX)) return undefined;
  const [, tenantSegment, deviceId, kind, attr, ...rest] = topic.split('/');
  if (tenantSegment === undefined || deviceId === undefined || !isTenantName(tenantSegment) || !isDeviceId(deviceId) || rest.length > 0) return undefined;
  const tenant = tenantSegment === DEFAULT_TENANT_SEGMENT ? '' : tenantSegment;
  if (kind === 'attrs' && attr === undefined) return { kind: 'attrs', tenant, deviceId };
  if (kind === 'attrs' && attr !== undefined && ATTRIBUTE_NAME.test(attr)) return { kind: 'attr', tenant, deviceId, attr };
  if (kind === 'status' && attr === undefined) return { kind: 'status', tenant, deviceId };
  return undefined;
}


/** What ingestion makes once and reuses for every message (read-only to the write path). */
interface IngestCaches {
  /** The entity id of an unregistered device. */
  defaultEntityId(deviceId: string): string;
  /** The one-type list of a type. */
  typesOf(type: Iri): Iri[];
}

/** Stores one message as `actor` (resolves after commit); throws `Dropped` for a message it drops. */
async function measure(deps: IngestDeps, caches: IngestCaches, actor: Principal | undefined, topic: MeasurementTopic, payload: Buffer): Promise<IngestOutcome> {
  if (payload.length > deps.maxPayload) throw new Dropped('too-large', `${payload.length} bytes is over mqtt.max-payload (${deps.maxPayload})`);
  if (actor === undefined) throw new Dropped('forbidden', 'this client may not publish measurements of this device');
  const device = deps.device(topic.tenant, topic.deviceId);
  const nowMs = deps.clock.now();
  // NOTE: formatted only when needed: the plain values of a payload carry the instant as a number.
  let nowText: string | undefined;
  const now = (): string => (nowText ??= formatDateTime(nowMs));
  const objects = payloadObjects(topic, payload, now);
  const found = deps.mapper(device?.context);
  const mapper = found instanceof Promise ? await found : found;
  let instances: ObservedInstance[] = NONE;
  let received: ObservedInstance[] = NONE;
  const add = (given: ObservedInstance[], stamped: ObservedInstance[]): void => {
    if (given.length > 0) instances = instances === NONE ? given : [...instances, ...given];
    if (stamped.length > 0) received = received === NONE ? stamped : [...received, ...stamped];
  };
  for (const o of objects) {
    const plain = plainInstances(o, device, mapper, nowMs);
    if (plain !== undefined) {
      if (o['observedAt'] === undefined) add(NONE, plain);
      else add(plain, NONE);
      continue;
    }
    const c = compactOf(o, device, now());
    add(instancesOf(c.given, mapper, nowMs), instancesOf(c.received, mapper, nowMs));
  }
  const m: Measurement = {
    entityId: device?.entityId ?? caches.defaultEntityId(topic.deviceId), types: caches.typesOf(mapper.expandTerm(device?.entityType ?? deps.defaultEntityType)),
    instances, received,
  };
  if (device !== undefined && Object.keys(device.staticAttributes).length > 0) m.initial = initialInstances(device, mapper, now(), nowMs);
  try {
    // A registered device's entity is created on first use, by the device or an administrator (a
    // subject creating it would own it); an unregistered one's only with autoprovisioning.
    const { created } = await deps.record(actor, m, { create: (device !== undefined && actor.admin) || deps.autoprovision });
    return { stored: true, created };
  } catch (err) {
    if (err instanceof InsufficientStorageError) throw new Dropped('disk-full', err.detail ?? err.message);
    if (err instanceof NgsiError && err.status === 404) throw new Dropped('unknown-device', `device ${topic.deviceId} is not registered and has no entity`);
    if (err instanceof NgsiError) throw new Dropped(err.status === 403 ? 'forbidden' : 'invalid', err.detail ?? err.message);
    throw err;
  }
}

/** The attributes a registered device's entity starts with, observed now. */
function initialInstances(device: DeviceMapping, mapper: TermMapper, now: string, nowMs: number): ObservedInstance[] {
  // NOTE: static attributes are checked as objects when the device is registered
  const compact = Object.fromEntries(Object.entries(device.staticAttributes).map(([k, v]) => [k, { observedAt: now, ...(v as object) }]));
  return instancesOf(compact, mapper, nowMs);
}

export function createIngest(deps: IngestDeps): Ingest {
  const { log } = deps;
  const dropped = Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>; // NOTE: one key per reason, just made
  let received = 0;
  let stored = 0;
  const caches: IngestCaches = {
    defaultEntityId: boundedMemo(MAX_CACHED_DEVICES, (deviceId: string) => `urn:ngsi-ld:${deps.defaultEntityType}:${deviceId}`),
    typesOf: boundedMemo(MAX_CACHED_DEVICES, (type: Iri): Iri[] => [type]),
  };

  return {
    async handle(actor, topic, payload, from, userProperties) {
      received += 1;
      try {
        const outcome = await measure(deps, caches, actor, topic, payload);
        stored += 1;
        // NOTE: only for a publish with user properties: the others cost no log call.
        if (userProperties !== undefined) log.debug('mqtt measurement stored', { clientId: from.clientId, user: from.user, tenant: topic.tenant, deviceId: topic.deviceId, userProperties });
        return outcome;
      } catch (err) {
        const reason: DropReason = err instanceof Dropped ? err.reason : 'failed';
        const detail = err instanceof Error ? err.message : String(err);
        dropped[reason] += 1;
        const who = { clientId: from.clientId, user: from.user, tenant: topic.tenant, deviceId: topic.deviceId, reason, ...(userProperties ? { userProperties } : {}) };
        if (reason === 'failed') log.error('mqtt measurement not stored', { ...who, err });
        // NOTE: the store logs a full disk once; a line per measurement would only fill it faster.
        else if (reason === 'disk-full') log.debug('mqtt measurement dropped', who);
        else log.warn('mqtt measurement dropped', { ...who, detail });
        return { stored: false, reason, detail };
      }
    },
    dropTopic(topic, from) {
      received += 1;
      dropped.topic += 1;
      log.warn('mqtt measurement dropped', {
        clientId: from.clientId, user: from.user, topic, reason: 'topic',
        detail: 'expected ngsi/<tenant>/<deviceId>/attrs, ngsi/<tenant>/<deviceId>/attrs/<attr> or ngsi/<tenant>/<deviceId>/status',
      });
    },
    stats: () => ({ received, stored, dropped: { ...dropped } }),
  };
}
