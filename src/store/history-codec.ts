// Encoding of one history instance into a bucket row and back, lossless and small: members with a
// column are left out of the JSON, a plain numeric Property stores no JSON at all, and the
// instance id is 16 raw bytes.

import type { Attribute, Json } from '../ngsi/index.js';
import type { HistoryRow } from './buckets.js';
import type { HistoryInstance } from './types.js';

const INSTANCE_PREFIX = 'urn:ngsi-ld:Instance:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Attribute members that default to the instance's columns (null in the JSON = absent). */
const COLUMN_MEMBERS = ['observedAt', 'createdAt', 'modifiedAt', 'datasetId'] as const;
const IS_COLUMN_MEMBER: ReadonlySet<string> = new Set(COLUMN_MEMBERS);

export function encodeInstanceId(instanceId: string): Buffer | string {
  const uuid = instanceId.slice(INSTANCE_PREFIX.length);
  if (instanceId.startsWith(INSTANCE_PREFIX) && UUID.test(uuid)) return Buffer.from(uuid.replaceAll('-', ''), 'hex');
  // Not a canonical instance URN: keep it verbatim (a TEXT value in the same column).
  return instanceId;
}

export function decodeInstanceId(stored: Buffer | string): string {
  if (typeof stored === 'string') return stored;
  const h = stored.toString('hex');
  return `${INSTANCE_PREFIX}${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** value/num columns for an attribute instance; both null when there is no attribute (deletion). */
function encodeAttribute(attr: Attribute | undefined, inst: HistoryInstance): { value: string | null; num: number | null } {
  if (!attr) return { value: null, num: null };
  const { kind, sub, ...rest } = attr;
  const out: Record<string, unknown> = { ...rest };
  for (const m of COLUMN_MEMBERS) {
    // Usually equal to the instance's own column: then the column carries it.
    if (attr[m] === inst[m]) delete out[m];
    else out[m] = attr[m] ?? null;
  }
  if (kind !== 'Property') out['kind'] = kind;
  if (Object.keys(sub).length > 0) out['sub'] = sub;
  let num: number | null = null;
  if (attr.kind === 'Property') {
    if (typeof attr.value === 'number') {
      num = attr.value;
      delete out['value'];
    } else if (typeof attr.value === 'boolean') {
      // NOTE: the value stays in the JSON: num alone cannot tell true from 1.
      num = attr.value ? 1 : 0;
    }
  }
  return { value: Object.keys(out).length === 0 ? null : JSON.stringify(out), num };
}

function decodeAttribute(row: HistoryRow, inst: HistoryInstance): Attribute | undefined {
  if (row.value === null && row.num === null) return undefined;
  // Written by encodeAttribute: an object of Attribute members.
  const stored = (row.value === null ? {} : JSON.parse(row.value)) as Record<string, Json>;
  const attr: Record<string, unknown> = { kind: 'Property', sub: {} };
  for (const m of COLUMN_MEMBERS) if (inst[m] !== undefined) attr[m] = inst[m];
  for (const [k, v] of Object.entries(stored)) {
    if (v === null && IS_COLUMN_MEMBER.has(k)) delete attr[k];
    else attr[k] = v;
  }
  if (attr['kind'] === 'Property' && !('value' in stored) && row.num !== null) attr['value'] = row.num;
  // Rebuilt member by member from what encodeAttribute took apart, so it is that Attribute again.
  return attr as unknown as Attribute;
}

export function encodeInstance(series: number, inst: HistoryInstance): HistoryRow {
  return {
    series,
    // The instant of this write when nothing was observed: modifiedAt (an attribute keeps its
    // createdAt across updates, so bucketing on it would file new writes under old buckets).
    t: inst.observedAt ?? inst.modifiedAt,
    observed_at: inst.observedAt ?? null,
    created_at: inst.createdAt,
    modified_at: inst.modifiedAt,
    deleted_at: inst.deletedAt ?? null,
    instance_id: encodeInstanceId(inst.instanceId),
    ...encodeAttribute(inst.attribute, inst),
    sub: inst.subject ?? null,
  };
}

export function decodeInstance(row: HistoryRow, key: Pick<HistoryInstance, 'entityId' | 'attr' | 'datasetId'>): HistoryInstance {
  const inst: HistoryInstance = {
    entityId: key.entityId,
    attr: key.attr,
    instanceId: decodeInstanceId(row.instance_id),
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
  if (key.datasetId !== undefined) inst.datasetId = key.datasetId;
  if (row.observed_at !== null) inst.observedAt = row.observed_at;
  if (row.deleted_at !== null) inst.deletedAt = row.deleted_at;
  const attribute = decodeAttribute(row, inst);
  if (attribute) inst.attribute = attribute;
  if (row.sub !== null) inst.subject = row.sub;
  return inst;
}
