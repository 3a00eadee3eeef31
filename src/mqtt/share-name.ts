// Shared subscription filters (MQTT 5 §4.8.2): `$share/<group>/<filter>`, for MQTT 3.1.1 clients too.
//
// Aedes never sees `$share/`: each SUBSCRIBE and UNSUBSCRIBE names it, as the client's parser emits
// the packet, under the broker's own prefix `$edgeld/share/` (Aedes 2 refuses `$share/` from MQTT 5
// clients before any hook), which Aedes grants, stores with a persistent session and restores like
// any filter, and which no publish ever matches. shared-groups.ts keeps the groups.

/** The prefix a client names a shared subscription with [MQTT-4.8.2]. */
const SHARE_PREFIX = '$share/';
/** The prefix Aedes grants, stores and restores a shared subscription under. */
export const STORED_SHARE_PREFIX = '$edgeld/share/';

/** A shared subscription: its group and the filter its members' messages match. */
export interface ShareName {
  group: string;
  filter: string;
}

/** The `$edgeld/share/` form of a `$share/` filter; any other filter as it is. */
function storedShareFilter(filter: string): string {
  return filter.startsWith(SHARE_PREFIX) ? STORED_SHARE_PREFIX + filter.slice(SHARE_PREFIX.length) : filter;
}

/** The filter whose messages a subscription receives: a shared one's filter, any other as it is. */
export function filterOf(stored: string): string {
  const name = parseShareName(stored);
  return typeof name === 'object' ? name.filter : stored;
}

/** The filter as the client named it (`$share/…`), for the log. */
export function clientShareFilter(stored: string): string {
  return stored.startsWith(STORED_SHARE_PREFIX) ? SHARE_PREFIX + stored.slice(STORED_SHARE_PREFIX.length) : stored;
}

/**
 * The group and filter of a stored shared filter; 'invalid' for a share name that is empty or holds
 * `+`, `#` or `/`, or without a filter [MQTT-4.8.2-1] [MQTT-4.8.2-2]; undefined for a filter that is not shared.
 */
export function parseShareName(stored: string): ShareName | 'invalid' | undefined {
  if (!stored.startsWith(STORED_SHARE_PREFIX)) return undefined;
  const rest = stored.slice(STORED_SHARE_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return 'invalid';
  const group = rest.slice(0, slash);
  const filter = rest.slice(slash + 1);
  if (/[+#]/.test(group) || filter === '') return 'invalid';
  return { group, filter };
}

/** The packets of a client as its parser emits them: SUBSCRIBE and UNSUBSCRIBE carry filters. */
interface FilterPacket {
  cmd: string;
  subscriptions?: Array<{ topic: string; qos: number }>;
  unsubscriptions?: string[];
}

/**
 * Renames the `$share/` filters of a SUBSCRIBE or UNSUBSCRIBE to their stored form, in place; a shared
 * subscription asks for QoS 1 at most (its group follows each message to a PUBACK, shared-groups.ts).
 */
export function renameSharedFilters(packet: FilterPacket): void {
  if (packet.cmd === 'subscribe' && packet.subscriptions !== undefined) {
    for (const sub of packet.subscriptions) {
      if (!sub.topic.startsWith(SHARE_PREFIX)) continue;
      sub.topic = storedShareFilter(sub.topic);
      if (sub.qos > 1) sub.qos = 1;
    }
  } else if (packet.cmd === 'unsubscribe' && packet.unsubscriptions !== undefined) {
    const u = packet.unsubscriptions;
    for (let i = 0; i < u.length; i++) if (u[i]!.startsWith(SHARE_PREFIX)) u[i] = storedShareFilter(u[i]!); // NOTE: i < length
  }
}
