// Live updates without polling: for what a view shows, the page creates an NGSI-LD subscription
// whose endpoint is an mqtt:// topic of the embedded broker, and receives its notifications over
// MQTT over WebSocket on the page's own origin (/mqtt). Each subscription expires unless renewed,
// and is deleted when the view changes or the page goes away, so none pile up.

import mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import { segment, type Api } from './api.js';
import { entitiesOfMessage, type Entity } from './format.js';
import type { Session } from './session.js';

export type LiveState = 'off' | 'connecting' | 'live' | 'unavailable';

/** What /ui/config.json tells the page about the embedded broker. */
export interface LiveConfig { websocketPath: string; notificationUri: string }

export interface Live {
  /**
   * Subscribes to changes of the entities `selector` names; resolves once notifications can arrive,
   * with the function that ends the watch. Rejects with the API's error (e.g. 403).
   */
  watch(selector: { type: string; id?: string }, onEntity: (entity: Entity) => void): Promise<() => void>;
  state(): LiveState;
  /** How many watches are established (their notifications can arrive). */
  watching(): number;
  /** Called when the state or the number of watches changes. */
  onState(cb: (state: LiveState) => void): void;
  /** Reconnects with the current token (after a sign-in). */
  restart(): void;
}

/** A subscription lives this long unless renewed; renewed at half of it. */
const LIFETIME_MS = 10 * 60_000;
const TOPIC_PREFIX = 'edgeld/dashboard/';

interface Watch { id: string; topic: string; onEntity: (e: Entity) => void; renew: ReturnType<typeof setInterval> }

/** How long a subscribe may wait for its SUBACK (the connection may still be coming up). */
const SUBSCRIBE_TIMEOUT_MS = 10_000;

/** Subscribes to `topic`; rejects when the broker refuses (SUBACK 0x80) or does not answer in time. */
async function subscribeWithin(client: MqttClient, topic: string, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the MQTT broker did not confirm the subscription')), ms);
  });
  try {
    const granted = await Promise.race([client.subscribeAsync(topic, { qos: 0 }), timeout]);
    if (granted.some((g) => g.qos === 128)) throw new Error('the MQTT broker refused the subscription');
  } finally {
    clearTimeout(timer);
  }
}

const randomId = (): string => Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
const expiresAt = (): string => new Date(Date.now() + LIFETIME_MS).toISOString();

export function createLive(api: Api, session: Session, config: LiveConfig | null): Live {
  let client: MqttClient | undefined;
  let state: LiveState = config ? 'off' : 'unavailable';
  const stateListeners: Array<(s: LiveState) => void> = [];
  const watches = new Map<string, Watch>();
  const setState = (s: LiveState): void => {
    state = s;
    for (const l of stateListeners) l(s);
  };

  const connect = (cfg: LiveConfig): MqttClient => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const token = session.token();
    setState('connecting');
    const c = mqtt.connect(`${scheme}://${location.host}${cfg.websocketPath}`, {
      protocolVersion: 4, clean: true, reconnectPeriod: 3000, connectTimeout: 10_000, keepalive: 30,
      clientId: `edgeld-dashboard-${randomId()}`,
      // With authentication on, a token is the password (any user name).
      ...(token !== undefined ? { username: 'edgeld-dashboard', password: token } : {}),
    });
    c.on('connect', () => setState('live'));
    c.on('reconnect', () => setState('connecting'));
    c.on('offline', () => setState('connecting'));
    c.on('error', () => setState('connecting'));
    c.on('message', (topic, payload) => {
      const w = [...watches.values()].find((x) => x.topic === topic);
      if (!w) return;
      for (const e of entitiesOfMessage(new TextDecoder().decode(payload))) w.onEntity(e);
    });
    return c;
  };

  const established = new Set<string>();
  const unwatch = (w: Watch, opts: { keepalive?: boolean } = {}): void => {
    clearInterval(w.renew);
    watches.delete(w.id);
    if (established.delete(w.id)) setState(state);
    client?.unsubscribe(w.topic);
    void api.send('DELETE', `/subscriptions/${segment(w.id)}`, undefined, opts).catch(() => undefined);
  };

  // Leaving the page deletes its subscriptions; expiresAt removes them if this never runs.
  addEventListener('pagehide', () => {
    for (const w of [...watches.values()]) unwatch(w, { keepalive: true });
  });

  return {
    async watch(selector, onEntity) {
      if (!config) throw new Error('live updates are not available: the embedded MQTT broker is not running');
      const topic = `${TOPIC_PREFIX}${randomId()}`;
      const created = await api.send('POST', '/subscriptions', {
        type: 'Subscription',
        subscriptionName: 'edgeld dashboard',
        description: 'Live view of the built-in dashboard; expires unless the page renews it',
        entities: [selector],
        expiresAt: expiresAt(),
        notification: { format: 'normalized', endpoint: { uri: `${config.notificationUri}/${topic}`, accept: 'application/json' } },
      });
      const location = created.headers.get('Location') ?? '';
      const id = decodeURIComponent(location.slice(location.lastIndexOf('/') + 1));
      const renew = setInterval(() => {
        void api.send('PATCH', `/subscriptions/${segment(id)}`, { expiresAt: expiresAt() }).catch(() => undefined);
      }, LIFETIME_MS / 2);
      const w: Watch = { id, topic, onEntity, renew };
      watches.set(id, w);
      client ??= connect(config);
      try {
        await subscribeWithin(client, topic, SUBSCRIBE_TIMEOUT_MS);
      } catch (err) {
        unwatch(w);
        throw err;
      }
      established.add(id);
      setState(state);
      return () => unwatch(w);
    },
    state: () => state,
    watching: () => established.size,
    onState: (cb) => {
      stateListeners.push(cb);
    },
    restart() {
      if (!client || !config) return;
      client.end(true);
      client = connect(config);
      for (const w of watches.values()) client.subscribe(w.topic);
    },
  };
}
