// Instance ids of attribute history (NGSI-LD §4.5.7 instanceId): a URN around a UUID whose first 48
// bits carry the instant the instance is stored under (its observedAt, else its modifiedAt), laid out
// as a version-7 UUID. The store then finds an instance by id with one index seek instead of a scan.

export const INSTANCE_PREFIX = 'urn:ngsi-ld:Instance:';

const MAX_48_BITS = 2 ** 48;
const TIMED = /^urn:ngsi-ld:Instance:([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * An instance id for an instance stored at `at` (epoch ms), from a random canonical UUID: its first
 * 48 bits are replaced by the instant, its version nibble by 7 and its variant by RFC 9562's. An
 * instant outside 0..2^48 keeps the random UUID as it is.
 */
export function instanceIdAt(at: number, uuid: string): string {
  if (!Number.isSafeInteger(at) || at < 0 || at >= MAX_48_BITS || uuid.length !== 36) return INSTANCE_PREFIX + uuid;
  // NOTE: written character by character into one buffer and read back as one flat string: one id is
  // made per history row, and the template string of slices it replaces allocated about 300 bytes.
  const out = ID_BUFFER;
  const p = INSTANCE_PREFIX.length;
  let t = at;
  for (let i = 12; i >= 0; i--) {
    if (i === 8) continue; // the dash
    out[p + i] = HEX_DIGIT[t % 16]!;
    t = Math.floor(t / 16);
  }
  let code = 0;
  for (let i = 15; i < 36; i++) {
    if (i === 18 || i === 19) continue;
    code |= out[p + i] = uuid.charCodeAt(i);
  }
  // A character beyond ASCII (never in a uuid) does not fit a byte: the template string keeps it.
  if (code > 127) return viaTemplate(at, uuid);
  out[p + 14] = SEVEN;
  out[p + 19] = VARIANT[(HEX_VALUE[uuid.charCodeAt(19)] ?? 0) & 3]!;
  return out.toString('latin1');
}

function viaTemplate(at: number, uuid: string): string {
  const hex = at.toString(16).padStart(12, '0');
  const variant = '89ab'[parseInt(uuid[19] ?? '0', 16) & 3] ?? '8';
  return `${INSTANCE_PREFIX}${hex.slice(0, 8)}-${hex.slice(8)}-7${uuid.slice(15, 18)}-${variant}${uuid.slice(20)}`;
}

const HEX_DIGIT = Buffer.from('0123456789abcdef', 'latin1');
const SEVEN = 0x37;
const VARIANT = Buffer.from('89ab', 'latin1');
/** Value of a hex digit by character code (either case); 0 for anything else, as parseInt's NaN & 3 is. */
const HEX_VALUE = Uint8Array.from({ length: 128 }, (_, c) =>
  (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : 0));
/** The prefix, then a uuid's 36 characters (dashes in place); rewritten by every call. */
const ID_BUFFER = Buffer.from(`${INSTANCE_PREFIX}00000000-0000-0000-0000-000000000000`, 'latin1');

/** The instant an instance id made by instanceIdAt carries; undefined for any other id. */
export function instantOfInstanceId(instanceId: string): number | undefined {
  const m = TIMED.exec(instanceId);
  return m === null ? undefined : parseInt(`${m[1]}${m[2]}`, 16);
}
