// Measurement payloads (edge.md §2): the JSON of a message → the payload objects of its topic →
// observed NGSI-LD attribute instances, each with its observedAt. Pure apart from the term mapper;
// a bad payload throws `Dropped` with the reason it is counted under.

import type { DeviceMapping } from '../devices/index.js';
import { z } from 'zod';
import {
  ENTITY_CORE_MEMBERS, NgsiError, isDeletion, isOutputForm, isPlainObject, nameProblem, parseAttributes, parseDateTime,
  type Attribute, type Iri, type ObservedInstance, type TermMapper,
} from '../ngsi/index.js';

export type MeasurementTopic =
  | { readonly kind: 'attrs'; readonly tenant: string; readonly deviceId: string }
  | { readonly kind: 'attr'; readonly tenant: string; readonly deviceId: string; readonly attr: string }
  | { readonly kind: 'status'; readonly tenant: string; readonly deviceId: string };

/** Why a message was dropped (the counters' keys). */
export type DropReason = typeof DROP_REASONS[number];
export const DROP_REASONS = ['topic', 'too-large', 'not-json', 'shape', 'observed-at', 'invalid', 'unknown-device', 'forbidden', 'disk-full', 'failed'] as const;

const GEOMETRY_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);
const STATUS_VALUES = new Set(['online', 'offline']);

/** A message that is not stored, and why (its reason is the counter's key). */
export class Dropped extends Error {
  override name = 'Dropped';
  constructor(readonly reason: DropReason, detail: string) {
    super(detail);
  }
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
  return { type: 'Property', value: raw as never, observedAt }; // NOTE: any JSON value is a Property value
}

function json(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    throw new Dropped('not-json', 'the payload is not JSON');
  }
}

/**
 * The compact attributes of one payload object, each with its observedAt (the attribute's, else the
 * payload's, else the receive time), split by whether the device gave the time.
 */
export function compactOf(obj: Record<string, unknown>, device: DeviceMapping | undefined, now: string): CompactSplit {
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
}

/** Observed instances of compact attributes (names checked and expanded with the device's context). */
export function instancesOf(compact: Record<string, unknown>, mapper: TermMapper, now: number): ObservedInstance[] {
  if (Object.keys(compact).length === 0) return [];
  let inputs;
  try {
    inputs = parseAttributes(compact, mapper, { now, allowNull: false });
  } catch (err) {
    if (err instanceof NgsiError) throw new Dropped('invalid', err.detail ?? err.message);
    throw err;
  }
  const out: ObservedInstance[] = [];
  // NOTE: entries of the parsed attributes are keyed by expanded IRIs
  for (const [attr, list] of Object.entries(inputs) as Array<[Iri, typeof inputs[string]]>) {
    for (const a of list ?? []) {
      if (isDeletion(a) || a.observedAt === undefined) throw new Dropped('invalid', `${mapper.compactIri(attr)}: no value`);
      out.push({ attr, attribute: { ...a, observedAt: a.observedAt } });
    }
  }
  return out;
}

/**
 * The instances of a payload object whose every member is a plain number, string or boolean under a
 * valid name, built directly: what the generic path (compactOf, then instancesOf) makes of it, without
 * its JSON-LD-shaped detour. Undefined for any other object: the generic path takes it, and its errors.
 * They were observed at the payload's observedAt when it has one, else at the receive time.
 */
export function plainInstances(obj: Record<string, unknown>, device: DeviceMapping | undefined, mapper: TermMapper, nowMs: number):
  ObservedInstance[] | undefined {
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
}

/** The payload objects of a message on `topic` (a status becomes the connectionStatus Property). */
export function payloadObjects(topic: MeasurementTopic, payload: Buffer, now: () => string): Array<Record<string, unknown>> {
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
}
