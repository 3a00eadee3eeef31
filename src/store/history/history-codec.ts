// Encoding of one history instance into a bucket row and back, lossless and small: members with a
// column are left out of the JSON, a plain numeric Property stores no JSON at all, and the
// instance id is 16 raw bytes (read back as hex by temporal reads, see READ_INSTANCE_ID).

import type { Attribute, Json } from '../../ngsi/index.js';
import type { HistoryInstance } from '../types.js';
import { INSTANCE_PREFIX } from '../../ngsi/index.js';


/** A history instance as a bucket table's row. */
export interface HistoryRow {
  series: number;
  t: number;
  observed_at: number | null;
  created_at: number;
  modified_at: number;
  deleted_at: number | null;
  instance_id: Buffer | string;
  value: string | null;
  num: number | null;
  sub: string | null;
}

/** Attribute members that default to the instance's columns (null in the JSON = absent). */
const COLUMN_MEMBERS = ['observedAt', 'createdAt', 'modifiedAt', 'datasetId'] as const;
const IS_COLUMN_MEMBER: ReadonlySet<string> = new Set(COLUMN_MEMBERS);

const UUID_LENGTH = 36;
const DASH = 45;

/** Value of each lowercase hex digit by character code; -1 for anything else. */
const HEX_VALUE = Int8Array.from({ length: 128 }, (_, code) =>
  (code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1));
/** Offsets of the dashes in a canonical uuid. */
const isDashAt = (i: number): boolean => i === 8 || i === 13 || i === 18 || i === 23;

/**
 * Whether an instance id is `urn:ngsi-ld:Instance:<uuid>` with a lowercase canonical uuid: the ids
 * stored as their 16 bytes. NOTE: checked character by character: a pattern test costs several
 * times more, on every history row written.
 */
export function isCanonicalInstanceId(instanceId: string): boolean {
  const p = INSTANCE_PREFIX.length;
  if (instanceId.length !== p + UUID_LENGTH || !instanceId.startsWith(INSTANCE_PREFIX)) return false;
  for (let i = 0; i < UUID_LENGTH; i++) {
    const code = instanceId.charCodeAt(p + i);
    if (isDashAt(i) ? code !== DASH : code >= 128 || HEX_VALUE[code]! < 0) return false;
  }
  return true;
}

/** The 16 bytes of a canonical instance id (isCanonicalInstanceId), else the id verbatim. */
export function encodeInstanceId(instanceId: string): Buffer | string {
  if (!isCanonicalInstanceId(instanceId)) return instanceId;
  const p = INSTANCE_PREFIX.length;
  const bytes = Buffer.allocUnsafe(16);
  let n = 0;
  for (let i = 0; i < UUID_LENGTH; i += isDashAt(i) ? 1 : 2) {
    if (isDashAt(i)) continue;
    bytes[n++] = HEX_VALUE[instanceId.charCodeAt(p + i)]! * 16 + HEX_VALUE[instanceId.charCodeAt(p + i + 1)]!;
  }
  return bytes;
}

function decodeInstanceId(stored: Buffer | string): string {
  if (typeof stored === 'string') return stored;
  return instanceIdOfHex(stored.toString('hex'));
}

/** Marks an instance id read verbatim: hex digits never start with it. */
const TEXT_ID_MARK = '~';

/**
 * The instance id column as temporal reads select it: a canonical id as the 32 lowercase hex digits
 * of its bytes (a string is cheaper to fetch than a Buffer), any other id verbatim behind TEXT_ID_MARK.
 */
const READ_INSTANCE_ID =
  `CASE typeof(instance_id) WHEN 'blob' THEN lower(hex(instance_id)) ELSE '${TEXT_ID_MARK}' || instance_id END`;

/**
 * `urn:ngsi-ld:Instance:<uuid>` from the 32 hex digits of the uuid. NOTE: from character codes:
 * slicing the digits into five parts and joining them costs about twice as much per instance,
 * mostly when the answer is serialised.
 */
function instanceIdOfHex(hex: string): string {
  const c = (i: number): number => hex.charCodeAt(i);
  return INSTANCE_PREFIX + String.fromCharCode(
    c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), DASH, c(8), c(9), c(10), c(11), DASH, c(12), c(13), c(14), c(15), DASH,
    c(16), c(17), c(18), c(19), DASH, c(20), c(21), c(22), c(23), c(24), c(25), c(26), c(27), c(28), c(29), c(30), c(31),
  );
}

/** The instance id from READ_INSTANCE_ID. */
function decodeReadInstanceId(stored: string): string {
  return stored.startsWith(TEXT_ID_MARK) ? stored.slice(1) : instanceIdOfHex(stored);
}

/** The num column of an attribute instance: a number, or a boolean as 1 or 0; null for anything else. */
function numOf(attr: Attribute | undefined): number | null {
  if (attr?.kind !== 'Property') return null;
  const { value } = attr;
  return typeof value === 'number' ? value : typeof value === 'boolean' ? (value ? 1 : 0) : null;
}

/** Whether an object has an own enumerable member (no array of keys made). */
function hasMembers(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * Whether a numeric Property has nothing but what the columns hold (its value in num, its times and
 * datasetId equal to the instance's): then it is stored with no JSON. NOTE: the common case of every
 * measurement, checked without building the JSON object encodeValue would build and throw away.
 */
function isPlainNumber(attr: Attribute, inst: HistoryInstance): boolean {
  if (attr.kind !== 'Property' || typeof attr.value !== 'number' || hasMembers(attr.sub)) return false;
  for (const key in attr) {
    if (key !== 'kind' && key !== 'value' && key !== 'sub' && !IS_COLUMN_MEMBER.has(key)) return false;
  }
  return columnsCarry(attr, inst);
}

/**
 * Whether the attribute's times and datasetId equal the instance's columns. NOTE: each member named:
 * a member read by a computed key (attr[m]) makes a new heap number of each time it reads.
 */
const columnsCarry = (attr: Attribute, inst: HistoryInstance): boolean =>
  attr.observedAt === inst.observedAt && attr.createdAt === inst.createdAt && attr.modifiedAt === inst.modifiedAt
  && attr.datasetId === inst.datasetId;

/**
 * The value column of an attribute instance: the JSON of what num and the instance's columns do not
 * carry; null when that is nothing, or when there is no attribute (deletion).
 * NOTE: the JSON object is built by adding members, never by deleting them from a copy: a deleted
 * property turns an object into a slow dictionary, on the path of every write.
 */
function encodeValue(attr: Attribute | undefined, inst: HistoryInstance): string | null {
  if (!attr || isPlainNumber(attr, inst)) return null;
  const { kind, sub } = attr;
  // NOTE: a boolean's value stays in the JSON: num alone cannot tell true from 1.
  const valueInJson = !(kind === 'Property' && typeof attr.value === 'number');
  const out: Record<string, unknown> = {};
  let members = 0;
  const fields = attr as unknown as Record<string, unknown>;
  for (const key of Object.keys(attr)) {
    if (key === 'kind' || key === 'sub' || IS_COLUMN_MEMBER.has(key) || (key === 'value' && !valueInJson)) continue;
    out[key] = fields[key];
    members += 1;
  }
  for (const m of COLUMN_MEMBERS) {
    // Usually equal to the instance's own column: then the column carries it.
    if (attr[m] !== inst[m]) {
      out[m] = attr[m] ?? null;
      members += 1;
    }
  }
  if (kind !== 'Property') {
    out['kind'] = kind;
    members += 1;
  }
  if (hasMembers(sub)) {
    out['sub'] = sub;
    members += 1;
  }
  return members === 0 ? null : JSON.stringify(out);
}

function decodeAttribute(value: string | null, num: number | null, inst: HistoryInstance): Attribute | undefined {
  if (value === null) return num === null ? undefined : plainProperty(num, inst);
  // Written by encodeAttribute: an object of Attribute members.
  const stored = JSON.parse(value) as Record<string, Json>;
  const attr: Record<string, unknown> = { kind: 'Property', sub: {} };
  for (const m of COLUMN_MEMBERS) if (inst[m] !== undefined) attr[m] = inst[m];
  for (const [k, v] of Object.entries(stored)) {
    if (v === null && IS_COLUMN_MEMBER.has(k)) delete attr[k];
    else attr[k] = v;
  }
  if (attr['kind'] === 'Property' && !('value' in stored) && num !== null) attr['value'] = num;
  // Rebuilt member by member from what encodeAttribute took apart, so it is that Attribute again.
  return attr as unknown as Attribute;
}

/**
 * A numeric Property stored without JSON: every member but its value is the instance's column
 * (encodeAttribute left nothing else), so no JSON to parse.
 */
function plainProperty(num: number, inst: HistoryInstance): Attribute {
  const attr: Attribute = { kind: 'Property', value: num, sub: {}, createdAt: inst.createdAt, modifiedAt: inst.modifiedAt };
  if (inst.observedAt !== undefined) attr.observedAt = inst.observedAt;
  if (inst.datasetId !== undefined) attr.datasetId = inst.datasetId;
  return attr;
}

export function encodeInstance(series: number, inst: HistoryInstance): HistoryRow {
  return {
    series,
    t: instantOf(inst),
    observed_at: inst.observedAt ?? null,
    created_at: inst.createdAt,
    modified_at: inst.modifiedAt,
    deleted_at: inst.deletedAt ?? null,
    instance_id: encodeInstanceId(inst.instanceId),
    value: encodeValue(inst.attribute, inst),
    num: numOf(inst.attribute),
    sub: inst.subject ?? null,
  };
}

/**
 * The instant an instance is stored under: its observedAt, else the instant of its write, modifiedAt
 * (an attribute keeps its createdAt across updates, so bucketing on it would file new writes under old
 * buckets).
 */
export const instantOf = (inst: HistoryInstance): number => inst.observedAt ?? inst.modifiedAt;

/** Values of a row in flat columns (encodeInstanceColumns, BucketTable.insertMany). */
export const ROW_COLUMNS = 10;

/**
 * `n`, or the element at `i` when it is the same number. NOTE: an instant (beyond the small integers)
 * becomes a new heap number each time it is put into an array; the element already there is put in
 * as it is. The rows of a bulk write share their createdAt and modifiedAt, and a row's observed_at is
 * its t: three heap numbers fewer per row.
 */
const sameNumber = (values: readonly unknown[], i: number, n: number): unknown => (i >= 0 && values[i] === n ? values[i] : n);

/**
 * The row of an instance as flat columns written into `values` from index `at` (ROW_COLUMNS of them,
 * in the order of INSERT_COLUMNS), the instance id as its text (BucketTable.insertMany encodes it).
 * NOTE: for bulk writes: no row object per instance.
 */
export function encodeInstanceColumns(values: unknown[], at: number, series: number, inst: HistoryInstance): void {
  const before = at - ROW_COLUMNS;
  values[at] = series;
  values[at + 1] = instantOf(inst);
  values[at + 2] = inst.observedAt === undefined ? null : values[at + 1];
  values[at + 3] = sameNumber(values, before + 3, inst.createdAt);
  values[at + 4] = values[at + 3] === inst.modifiedAt ? values[at + 3] : sameNumber(values, before + 4, inst.modifiedAt);
  values[at + 5] = inst.deletedAt ?? null;
  values[at + 6] = inst.instanceId;
  values[at + 7] = encodeValue(inst.attribute, inst);
  values[at + 8] = numOf(inst.attribute);
  values[at + 9] = inst.subject ?? null;
}

type SeriesKey = Pick<HistoryInstance, 'entityId' | 'attr' | 'datasetId'>;

export function decodeInstance(row: HistoryRow, key: SeriesKey): HistoryInstance {
  return decodeColumns(key, decodeInstanceId(row.instance_id), row.observed_at, row.created_at, row.modified_at, row.deleted_at,
    row.value, row.num, row.sub);
}

/**
 * A row as temporal reads select it, as an array (no object per row), in the order of readColumns:
 * its insertion order in its bucket, the value of the read's time property, its series, then the
 * instance's columns.
 */
export type ReadRow = [
  rid: number, time: number, series: number, observedAt: number | null, createdAt: number, modifiedAt: number,
  deletedAt: number | null, instanceId: string, value: string | null, num: number | null, sub: string | null,
];

/** The columns of a ReadRow, with `time` the column of the read's time property. */
export const readColumns = (time: string): string =>
  `rowid, ${time}, series, observed_at, created_at, modified_at, deleted_at, ${READ_INSTANCE_ID}, value, num, sub`;

export function decodeReadRow(row: ReadRow, key: SeriesKey): HistoryInstance {
  return decodeColumns(key, decodeReadInstanceId(row[7]), row[3], row[4], row[5], row[6], row[8], row[9], row[10]);
}

function decodeColumns(
  key: SeriesKey, instanceId: string, observedAt: number | null, createdAt: number, modifiedAt: number, deletedAt: number | null,
  value: string | null, num: number | null, subject: string | null,
): HistoryInstance {
  const inst: HistoryInstance = { entityId: key.entityId, attr: key.attr, instanceId, createdAt, modifiedAt };
  if (key.datasetId !== undefined) inst.datasetId = key.datasetId;
  if (observedAt !== null) inst.observedAt = observedAt;
  if (deletedAt !== null) inst.deletedAt = deletedAt;
  const attribute = decodeAttribute(value, num, inst);
  if (attribute) inst.attribute = attribute;
  if (subject !== null) inst.subject = subject;
  return inst;
}
