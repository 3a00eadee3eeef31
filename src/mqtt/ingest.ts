// Measurements over MQTT (edge.md §2): topic → device → entity, payload → NGSI-LD attributes with
// their observedAt, then the one write path. A message is answered only after its commit; a bad one
// is dropped with a log line and a counter, and never writes anything.
//
// ngsi/<tenant>/<deviceId>/attrs          JSON object of attributes, or an array of them (backfill)
// ngsi/<tenant>/<deviceId>/attrs/<attr>   one value
// ngsi/<tenant>/<deviceId>/status         "online" / "offline" → the connectionStatus Property

import { z } from 'zod';
import {
  ENTITY_CORE_MEMBERS, InsufficientStorageError, NgsiError, formatDateTime, isDeletion, isOutputForm, isPlainObject, isTenantName, nameProblem,
  parseAttributes, parseDateTime, type Attribute, type Iri, type ObservedInstance, type Principal, type TermMapper,
} from '../ngsi/index.js';
import type { Measurement } from '../entities/index.js';
import { isDeviceId, type DeviceMapping } from '../devices/index.js';
import { boundedMemo, type Clock, type Logger } from '../lib/index.js';

/** The topic prefix of measurements. */
export const MEASUREMENT_PREFIX = 'ngsi/';
/** The `<tenant>` segment that names the default tenant. */
export const DEFAULT_TENANT_SEGMENT = 'default';

const ATTRIBUTE_NAME = /^[^\s/+#]{1,256}$/;
const GEOMETRY_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);
const STATUS_VALUES = new Set(['online', 'offline']);
/** Entity ids (and type lists) kept for this many devices at most. */
const MAX_CACHED_DEVICES = 10_000;
/** The empty list of instances, shared (never added to). */
const NONE: ObservedInstance[] = [];

export type MeasurementTopic =
  | { readonly kind: 'attrs'; readonly tenant: string; readonly deviceId: string }
  | { readonly kind: 'attr'; readonly tenant: string; readonly deviceId: string; readonly attr: string }
  | { readonly kind: 'status'; readonly tenant: string; readonly deviceId: string };

/** Why a message was dropped (the counters' keys). */
export type DropReason =
  | 'topic' | 'too-large' | 'not-json' | 'shape' | 'observed-at' | 'invalid' | 'unknown-device' | 'forbidden' | 'disk-full' | 'failed';

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
  handle(actor: Principal | undefined, topic: MeasurementTopic, payload: Buffer): Promise<IngestOutcome>;
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

/** Compact attributes whose observedAt the device gave, and those stamped with the receive time. */
interface CompactSplit {
  given: Record<string, unknown>;
  received: Record<string, unknown>;
}

/** The last instance under each name (`names[i]` is the name of `list[i]`), in the order of those last ones. */
function lastOfEach(list: ObservedInstance[], names: readonly string[]): ObservedInstance[] {
  const byName = new Map<string, ObservedInstance>();
  list.forEach((instance, i) => {
    byName.delete(names[i]!);
    byName.set(names[i]!, instance);
  });
  return byName.size === list.length ? list : [...byName.values()];
}

class Dropped extends Error {
  constructor(readonly reason: DropReason, detail: string) {
    super(detail);
  }
}

const OBJECT = z.record(z.string(), z.unknown());
const ATTRS_PAYLOAD = z.union([OBJECT, z.array(OBJECT).min(1).max(10_000)]);

/** A measurement value as a compact NGSI-LD attribute (edge.md §2). */
function attributeOf(raw: unknown, observedAt: string): Record<string, unknown> {
  if (isPlainObject(raw)) {
    if (typeof raw['type'] === 'string' && GEOMETRY_TYPES.has(raw['type']) && ('coordinates' in raw || 'geometries' in raw)) {
      return { type: 'GeoProperty', value: raw, observedAt };
    }
    if ('object' in raw) return { type: 'Relationship', observedAt, ...raw };
    if ('value' in raw) return { type: 'Property', observedAt, ...raw };
  }
  return { type: 'Property', value: raw as never, observedAt };
}

export function createIngest(deps: IngestDeps): Ingest {
  const { clock, log } = deps;
  const dropped = Object.fromEntries(
    (['topic', 'too-large', 'not-json', 'shape', 'observed-at', 'invalid', 'unknown-device', 'forbidden', 'disk-full', 'failed'] as const).map((r) => [r, 0]),
  ) as Record<DropReason, number>;
  let received = 0;
  let stored = 0;
  // NOTE: the entity id of an unregistered device and the one-type lists are made once, not per
  // message; both are read-only to the write path.
  const defaultEntityId = boundedMemo(MAX_CACHED_DEVICES, (deviceId: string) => `urn:ngsi-ld:${deps.defaultEntityType}:${deviceId}`);
  const typesOf = boundedMemo(MAX_CACHED_DEVICES, (type: Iri): Iri[] => [type]);

  const json = (payload: Buffer): unknown => {
    try {
      return JSON.parse(payload.toString('utf8'));
    } catch {
      throw new Dropped('not-json', 'the payload is not JSON');
    }
  };

  /**
   * The compact attributes of one payload object, each with its observedAt (the attribute's, else the
   * payload's, else the receive time), split by whether the device gave the time.
   */
  const compactOf = (obj: Record<string, unknown>, device: DeviceMapping | undefined, now: string): CompactSplit => {
    let observedAt: string | undefined;
    if (obj['observedAt'] !== undefined) {
      if (typeof obj['observedAt'] !== 'string' || parseDateTime(obj['observedAt']) === undefined) {
        throw new Dropped('observed-at', 'observedAt must be an ISO 8601 date-time');
      }
      observedAt = obj['observedAt'];
    }
    const out: CompactSplit = { given: {}, received: {} };
    let n = 0;
    for (const [key, raw] of Object.entries(obj)) {
      if (key === 'observedAt') continue;
      const name = device?.renames[key] ?? key;
      const attr = attributeOf(raw, observedAt ?? now);
      const unitCode = device?.unitCodes[name];
      if (unitCode !== undefined && attr['type'] === 'Property' && attr['unitCode'] === undefined) attr['unitCode'] = unitCode;
      const given = observedAt !== undefined || (isPlainObject(raw) && raw['observedAt'] !== undefined);
      (given ? out.given : out.received)[name] = attr;
      n += 1;
    }
    if (n === 0) throw new Dropped('shape', 'the payload has no attribute');
    return out;
  };

  /** Observed instances of compact attributes (names checked and expanded with the device's context). */
  const instancesOf = (compact: Record<string, unknown>, mapper: TermMapper, now: number): ObservedInstance[] => {
    if (Object.keys(compact).length === 0) return [];
    let inputs;
    try {
      inputs = parseAttributes(compact, mapper, { now, allowNull: false });
    } catch (err) {
      if (err instanceof NgsiError) throw new Dropped('invalid', err.detail ?? err.message);
      throw err;
    }
    const out: ObservedInstance[] = [];
    for (const [attr, list] of Object.entries(inputs) as Array<[Iri, typeof inputs[string]]>) {
      for (const a of list ?? []) {
        if (isDeletion(a) || a.observedAt === undefined) throw new Dropped('invalid', `${mapper.compactIri(attr)}: no value`);
        out.push({ attr, attribute: { ...a, observedAt: a.observedAt } });
      }
    }
    return out;
  };

  /**
   * The instances of a payload object whose every member is a plain number, string or boolean under a
   * valid name, built directly: what the generic path (compactOf, then instancesOf) makes of it, without
   * its JSON-LD-shaped detour. Undefined for any other object: the generic path takes it, and its errors.
   * They were observed at the payload's observedAt when it has one, else at the receive time.
   */
  const plainInstances = (obj: Record<string, unknown>, device: DeviceMapping | undefined, mapper: TermMapper, nowMs: number):
    ObservedInstance[] | undefined => {
    const text = obj['observedAt'];
    let observedAt = nowMs;
    let observedAtText: string | undefined;
    if (text !== undefined) {
      if (typeof text !== 'string') return undefined;
      const at = parseDateTime(text);
      if (at === undefined) return undefined;
      observedAt = at;
      if (!isOutputForm(text)) observedAtText = text;
    }
    const renames = device === undefined || Object.keys(device.renames).length === 0 ? undefined : device.renames;
    const list: ObservedInstance[] = [];
    const names: string[] | undefined = renames === undefined ? undefined : [];
    for (const key in obj) {
      if (key === 'observedAt') continue;
      const raw = obj[key];
      if (typeof raw !== 'number' && typeof raw !== 'string' && typeof raw !== 'boolean') return undefined;
      if (typeof raw === 'number' && !Number.isFinite(raw)) return undefined;
      const name = renames?.[key] ?? key;
      if (ENTITY_CORE_MEMBERS.has(name) || name.startsWith('@') || nameProblem(name) !== undefined) return undefined;
      const attribute: Attribute & { observedAt: number } = { createdAt: nowMs, modifiedAt: nowMs, sub: {}, observedAt, kind: 'Property', value: raw };
      if (observedAtText !== undefined) attribute.observedAtText = observedAtText;
      const unitCode = device?.unitCodes[name];
      if (unitCode !== undefined) attribute.unitCode = unitCode;
      list.push({ attr: mapper.expandTerm(name), attribute });
      names?.push(name);
    }
    if (list.length === 0) return undefined;
    // NOTE: the keys of a JSON object are distinct, so only renames can give two members one name:
    // the later one wins, as in the generic path.
    return names === undefined ? list : lastOfEach(list, names);
  };

  const payloadObjects = (topic: MeasurementTopic, payload: Buffer, now: () => string): Array<Record<string, unknown>> => {
    if (topic.kind === 'status') {
      const text = payload.toString('utf8').trim();
      const value = text.startsWith('"') ? json(payload) : text;
      if (typeof value !== 'string' || !STATUS_VALUES.has(value)) throw new Dropped('shape', 'status must be online or offline');
      return [{ connectionStatus: { value, observedAt: now() } }];
    }
    const body = json(payload);
    if (topic.kind === 'attr') return [{ [topic.attr]: body }];
    if (isPlainObject(body)) return [body];
    const parsed = ATTRS_PAYLOAD.safeParse(body);
    if (!parsed.success) throw new Dropped('shape', 'expected a JSON object of attributes, or a non-empty array of them');
    return Array.isArray(parsed.data) ? parsed.data : [parsed.data];
  };

  const handle = async (actor: Principal | undefined, topic: MeasurementTopic, payload: Buffer): Promise<IngestOutcome> => {
    if (payload.length > deps.maxPayload) throw new Dropped('too-large', `${payload.length} bytes is over mqtt.max-payload (${deps.maxPayload})`);
    if (actor === undefined) throw new Dropped('forbidden', 'this client may not publish measurements of this device');
    const device = deps.device(topic.tenant, topic.deviceId);
    const nowMs = clock.now();
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
      entityId: device?.entityId ?? defaultEntityId(topic.deviceId), types: typesOf(mapper.expandTerm(device?.entityType ?? deps.defaultEntityType)),
      instances, received,
    };
    if (device !== undefined && Object.keys(device.staticAttributes).length > 0) {
      m.initial = instancesOf(Object.fromEntries(Object.entries(device.staticAttributes).map(([k, v]) => [k, { observedAt: now(), ...(v as object) }])), mapper, nowMs);
    }
    try {
      // A registered device's entity is created on first use; an unregistered one's only with autoprovisioning.
      const { created } = await deps.record(actor, m, { create: device !== undefined || deps.autoprovision });
      return { stored: true, created };
    } catch (err) {
      if (err instanceof InsufficientStorageError) throw new Dropped('disk-full', err.detail ?? err.message);
      if (err instanceof NgsiError && err.status === 404) throw new Dropped('unknown-device', `device ${topic.deviceId} is not registered and has no entity`);
      if (err instanceof NgsiError) throw new Dropped(err.status === 403 ? 'forbidden' : 'invalid', err.detail ?? err.message);
      throw err;
    }
  };

  return {
    async handle(actor, topic, payload) {
      received += 1;
      try {
        const outcome = await handle(actor, topic, payload);
        stored += 1;
        return outcome;
      } catch (err) {
        const reason: DropReason = err instanceof Dropped ? err.reason : 'failed';
        const detail = err instanceof Error ? err.message : String(err);
        dropped[reason] += 1;
        if (reason === 'failed') log.error('mqtt measurement not stored', { tenant: topic.tenant, deviceId: topic.deviceId, err });
        // NOTE: the store logs a full disk once; a line per measurement would only fill it faster.
        else if (reason === 'disk-full') log.debug('mqtt measurement dropped', { tenant: topic.tenant, deviceId: topic.deviceId, reason });
        else log.warn('mqtt measurement dropped', { tenant: topic.tenant, deviceId: topic.deviceId, reason, detail });
        return { stored: false, reason, detail };
      }
    },
    stats: () => ({ received, stored, dropped: { ...dropped } }),
  };
}
