// MQTT 5 Session Expiry kept in storage. Aedes ends a disconnected client's session after its Session
// Expiry Interval with a timer of its own, which a restart forgets; so each such session's interval is
// stored when its client connects, the end of the session when it disconnects (a restart counts the
// clients connected before it as disconnected at start), and a timer set to the earliest end removes
// the sessions due, across restarts too. MQTT 3.1.1 sessions, and MQTT 5 ones of interval 0xFFFFFFFF,
// never expire: nothing is stored for them.

import type { Aedes, Client } from 'aedes';
import type { Clock, Logger, MqttSessionStore } from '../lib/index.js';
import type { SqlitePersistence } from './persistence.js';

/** [MQTT-3.1.2-11] 0xFFFFFFFF: the session does not expire. */
const NEVER_EXPIRES = 0xFFFF_FFFF;
const PAGE = 256;
/** setTimeout's longest delay; a later end is looked at again then. */
const MAX_DELAY_MS = 2_147_483_647;
/** How soon a sweep that failed is tried again. */
const RETRY_MS = 5_000;

export interface SessionExpiry {
  /** Stops the timer (the stored ends stay for the next start). */
  close(): void;
}

/** The client's Session Expiry Interval in seconds when it is a finite, non-zero one (MQTT 5); else undefined. */
function expiringInterval(client: Client): number | undefined {
  if (client.version !== 5) return undefined;
  const interval = client.sessionExpiryInterval;
  return interval > 0 && interval < NEVER_EXPIRES ? interval : undefined;
}

/** Follows the clients' Session Expiry in storage and removes the sessions due; call before any client connects. */
export async function followSessionExpiry(aedes: Aedes, persistence: SqlitePersistence, store: MqttSessionStore, clock: Clock, log: Logger): Promise<SessionExpiry> {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // NOTE: Aedes keeps its connected clients by id in `clients`; its types omit it.
  const clients = (): Record<string, Client> => Reflect.get(aedes, 'clients') as Record<string, Client>;
  const isConnected = (id: string): boolean => Object.hasOwn(clients(), id);
  const arm = (): void => {
    if (closed) return;
    const next = store.nextSessionExpiry();
    if (timer !== undefined) clearTimeout(timer);
    timer = next === undefined ? undefined : setTimeout(() => void sweep(), Math.min(Math.max(next - clock.now(), 0), MAX_DELAY_MS)).unref();
  };
  const sweep = async (): Promise<void> => {
    timer = undefined;
    try {
      for (let due = store.expiredSessions(clock.now(), PAGE); due.length > 0 && !closed; due = store.expiredSessions(clock.now(), PAGE)) {
        for (const id of due) {
          // NOTE: a client connected again has its end removed at CONNECT; this one is only in a race with it.
          if (isConnected(id)) store.deleteSessionExpiry(id);
          else await persistence.endSession(id);
        }
        log.debug('mqtt sessions expired', { clients: due.length });
      }
    } catch (err) {
      // A store that fails (disk full, busy) leaves the sessions due stored: they are removed on a later try.
      log.warn('mqtt sessions past their expiry not removed; tried again', { err, retryMs: RETRY_MS });
      if (!closed) timer = setTimeout(() => void sweep(), RETRY_MS).unref();
      return;
    }
    arm();
  };
  aedes.on('client', (client) => {
    const interval = expiringInterval(client);
    if (interval === undefined) store.deleteSessionExpiry(client.id);
    else store.putSessionExpiry(client.id, interval, undefined);
  });
  aedes.on('clientDisconnect', (client) => {
    // A session taken over by a new connection of the same client id is that connection's.
    const current = clients()[client.id];
    if (current !== undefined && current !== client) return;
    const interval = expiringInterval(client);
    if (interval === undefined) {
      if (client.version === 5) store.deleteSessionExpiry(client.id);
      return;
    }
    store.putSessionExpiry(client.id, interval, clock.now() + interval * 1000);
    arm();
  });
  store.startSessionExpiries(clock.now());
  await sweep();
  return {
    close: () => {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
