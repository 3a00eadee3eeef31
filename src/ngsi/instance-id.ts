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
  const hex = at.toString(16).padStart(12, '0');
  const variant = '89ab'[parseInt(uuid[19] ?? '0', 16) & 3] ?? '8';
  return `${INSTANCE_PREFIX}${hex.slice(0, 8)}-${hex.slice(8)}-7${uuid.slice(15, 18)}-${variant}${uuid.slice(20)}`;
}

/** The instant an instance id made by instanceIdAt carries; undefined for any other id. */
export function instantOfInstanceId(instanceId: string): number | undefined {
  const m = TIMED.exec(instanceId);
  return m === null ? undefined : parseInt(`${m[1]}${m[2]}`, 16);
}
