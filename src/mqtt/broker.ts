// The embedded MQTT broker: Aedes 2 (MQTT 3.1.1 and MQTT 5) behind a TCP listener, an optional
// WebSocket listener and WebSocket upgrades handed over by the HTTP listener, every connection bounded
// before it is authenticated (connection-gate.ts), MQTT 5 session expiry kept in storage
// (session-expiry.ts), an in-process publish for notifications and commands (with MQTT 5 properties),
// and a stop that leaves no socket open.

import type { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Aedes, type Client } from 'aedes';
import { systemClock, type Clock, type Logger, type MqttSessionStore, type TlsPair } from '../lib/index.js';
import type { MqttQos } from '../subscriptions/index.js';
import { createConnectionGate, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits, type ConnectionStats } from './connection-gate.js';
import { createAnonymousHooks, type MqttAccessHooks } from './hooks.js';
import {
  acceptWebSocketUpgrades, listenTcp, listenTls, listenWebSocket, type Listener, type SecureListener, type UpgradeAcceptor,
} from './listeners.js';
import { MemorySessionPersistence, SqlitePersistence } from './persistence.js';
import type { SharedGroups, SharedStats } from './shared-groups.js';
import { filterOf } from './share-name.js';
import { renameSharedFiltersOf, startSharedGroups, withSharedSubscriptions } from './shared-subscriptions.js';
import { createCommandDelivery, type CommandPort, type MqttPublishProperties } from './commands.js';
import { publishStaleWills } from './wills.js';
import { followSessionExpiry, type SessionExpiry } from './session-expiry.js';


/** How the gateway publishes a message: retained or not, and its MQTT 5 properties. */
export interface MqttPublishOptions {
  retain?: boolean;
  properties?: MqttPublishProperties;
}

export interface MqttBrokerOptions {
  /** TCP port; 0 picks a free one. */
  port: number;
  host: string;
  /** WebSocket port; undefined leaves WebSocket off, 0 picks a free one. */
  wsPort?: number | undefined;
  log: Logger;
  /** Access decisions; anonymous access when absent. */
  hooks?: MqttAccessHooks;
  /**
   * PEM key and certificate: MQTT over TLS on `port` (0 picks a free one; absent: no TLS listener), and
   * the WebSocket port serves wss. Absent: no TLS anywhere.
   */
  tls?: (TlsPair & { port?: number | undefined }) | undefined;
  /**
   * Durable storage of retained messages, persistent sessions (QoS 1/2) and wills, so that they
   * survive a restart; Aedes keeps them in memory only when absent.
   */
  persistence?: MqttSessionStore;
  /** What a connection may cost before it is authenticated; DEFAULT_CONNECTION_LIMITS for those absent. */
  limits?: Partial<ConnectionLimits>;
  /** Times the refusal log lines; the system clock when absent. */
  clock?: Clock;
  /** The command dispatcher: command messages are followed to the device's PUBACK (edge.md §6). */
  commands?: CommandPort;
}

export interface MqttBroker {
  /** The bound TCP port. */
  readonly port: number;
  /** The bound WebSocket port, or undefined when WebSocket is off. */
  readonly wsPort: number | undefined;
  /** The bound TLS port, or undefined when TLS is off. */
  readonly tlsPort: number | undefined;
  /** Clients connected now, over every listener. */
  readonly connectedClients: number;
  /** Connections open now (CONNECT pending included) and those refused or closed by a limit. */
  connectionStats(): ConnectionStats;
  /**
   * MQTT over WebSocket on an upgrade request another server received (the HTTP listener's /mqtt, for
   * the dashboard): completes the handshake and serves the connection like the broker's own.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** New TLS and wss connections get this key and certificate; open ones keep theirs. No-op without TLS. */
  setTlsPair(pair: TlsPair): void;
  /**
   * Publishes on behalf of the gateway; resolves once Aedes has taken the packet (stored for QoS 1/2,
   * and retained when asked). `properties` reach MQTT 5 subscribers (3.1.1 ones get the message without
   * them); a Message Expiry Interval also ends the message queued for an offline session once it has passed.
   */
  publish(topic: string, payload: Buffer | string, qos: MqttQos, options?: MqttPublishOptions): Promise<void>;
  /** The groups of shared subscriptions (`$share/<group>/<filter>`) now, and the messages they dropped. */
  sharedStats(): SharedStats;
  /** Closes the connections of the clients authenticated as `subject` (deleted); returns how many. */
  closeClientsOf(subject: string): number;
  /** Stops accepting, disconnects every client, closes the listeners; resolves when no socket is left. */
  close(): Promise<void>;
}

/** A topic name a publish may use: not empty, no wildcard, no NUL [MQTT-4.7.3-1] [MQTT-3.3.2-2]. */
export function isPublishTopic(topic: string): boolean {
  return topic.length > 0 && !/[+#\u0000]/.test(topic) && Buffer.byteLength(topic) <= 65_535;
}

type Forward = MqttAccessHooks['authorizeForward'];

/** The broker's authorizeForward: a message queued for a session goes to it once, however Aedes reaches it (persistence.ts). */
function deliverOnce(persistence: SqlitePersistence | undefined, inner: Forward): Forward {
  if (persistence === undefined) return inner;
  return (client, packet) => (persistence.mayDeliver(client, packet) ? inner(client, packet) : null);
}

function watchClients(aedes: Aedes, log: Logger): void {
  const who = (client: Client | null): Record<string, unknown> => ({ clientId: client?.id });
  aedes.on('client', (client) => log.debug('mqtt client connected', who(client)));
  aedes.on('clientDisconnect', (client) => log.debug('mqtt client disconnected', who(client)));
  // A malformed packet or a broken socket ends that client only; Aedes reports it here.
  aedes.on('clientError', (client, err) => log.debug('mqtt client error', { ...who(client), err: err.message }));
  aedes.on('connectionError', (_client, err) => log.debug('mqtt connection error before CONNECT', { err: err.message }));
  aedes.on('keepaliveTimeout', (client) => log.debug('mqtt client keepalive timeout', who(client)));
  // NOTE: Aedes emits 'error' for persistence failures; without a listener that would throw.
  const emitter: EventEmitter = aedes; // NOTE: Aedes' typed overloads omit 'error', which it does emit
  emitter.on('error', (err: unknown) => log.warn('mqtt broker error', { err }));
}

/** Closes the connections of the clients authenticated as `subject`; how many. */
function closeClientsOf(aedes: Aedes, hooks: MqttAccessHooks, subject: string, log: Logger): number {
  if (hooks.subjectOf === undefined) return 0;
  // NOTE: Aedes keeps its connected clients by id in `clients`; its types omit it.
  const clients: unknown = Reflect.get(aedes, 'clients');
  if (typeof clients !== 'object' || clients === null) return 0;
  let closed = 0;
  for (const client of Object.values(clients as Record<string, Client>)) {
    if (hooks.subjectOf(client) !== subject) continue;
    client.close();
    closed += 1;
  }
  if (closed > 0) log.info('mqtt clients of a deleted subject disconnected', { subject, clients: closed });
  return closed;
}

/** Publishes on behalf of the gateway on a running broker; resolves once Aedes has taken the packet. */
function publishAsGateway(aedes: Aedes, topic: string, payload: Buffer | string, qos: MqttQos, options: MqttPublishOptions | undefined): Promise<void> {
  if (!isPublishTopic(topic)) return Promise.reject(new Error(`not a topic name to publish on: '${topic}'`));
  const packet = {
    cmd: 'publish' as const, topic, payload: typeof payload === 'string' ? Buffer.from(payload) : payload, qos, retain: options?.retain ?? false, dup: false,
    ...(options?.properties ? { properties: options.properties } : {}),
  };
  return new Promise<void>((resolve, reject) => {
    aedes.publish(packet, (err) => (err ? reject(new Error(`the embedded MQTT broker refused the publish: ${err.message}`, { cause: err })) : resolve()));
  });
}

/** Starts Aedes and its listeners; rejects with `MqttListenError` when a port cannot be opened. */
export async function startMqttBroker(opts: MqttBrokerOptions): Promise<MqttBroker> {
  const { log } = opts;
  let groups: SharedGroups | undefined;
  const accessHooks = opts.hooks ?? createAnonymousHooks(log);
  const hooks = withSharedSubscriptions(accessHooks, () => groups, log);
  const sessionEnded = (clientId: string): void => groups?.forget(clientId);
  const persistence = opts.persistence && new SqlitePersistence(opts.persistence, sessionEnded);
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...opts.limits };
  const clock = opts.clock ?? systemClock;
  const gate = createConnectionGate({ limits, log, clock });
  const delivery = opts.commands && createCommandDelivery(opts.commands, (client, tenant, deviceId) => hooks.isDeviceClient?.(client, tenant, deviceId) ?? true, log);
  const aedes = await Aedes.createBroker({
    // NOTE: the gate's deadline (from the TCP accept) ends such a connection first; Aedes' own (30 s
    // by default, from the stream it gets) is kept in line so that it never ends one sooner.
    connectTimeout: limits.connectTimeout,
    authenticate: hooks.authenticate,
    authorizePublish: hooks.authorizePublish,
    authorizeSubscribe: hooks.authorizeSubscribe,
    authorizeForward: deliverOnce(persistence, delivery ? delivery.forward(hooks.authorizeForward) : hooks.authorizeForward),
    persistence: persistence ?? new MemorySessionPersistence(sessionEnded),
  });
  watchClients(aedes, log);
  if (persistence) {
    aedes.on('clientReady', (client) => persistence.resumed(client.id));
    aedes.on('clientDisconnect', (client) => persistence.resumed(client.id));
  }
  groups = startSharedGroups(aedes, accessHooks, opts.persistence, log);
  if (delivery) {
    aedes.on('client', (client) => delivery.connected(client));
    // NOTE: a refused filter is granted 128 (MQTT 3.1.1) or a reason code of 0x80 or more (MQTT 5) as
    // its qos here, outside Aedes' QoS type. A device may take its commands through a shared subscription too.
    aedes.on('subscribe', (subscriptions) => delivery.subscribed(subscriptions.filter((s) => (s.qos as number) < 128).map((s) => filterOf(s.topic))));
  }
  // Before any client connects: a session past its expiry is not found, a client of the earlier run
  // does not find its old will pending.
  let expiry: SessionExpiry | undefined;
  if (persistence && opts.persistence) {
    expiry = await followSessionExpiry(aedes, persistence, opts.persistence, clock, log);
    await publishStaleWills(aedes, persistence, hooks, log)
      .catch((err: unknown) => log.warn('mqtt wills of an earlier run not published', { err }));
  }
  const handle = (stream: Parameters<Aedes['handle']>[0], req?: Parameters<Aedes['handle']>[1]): void => {
    renameSharedFiltersOf(aedes.handle(stream, req), log);
  };
  const listeners: Listener[] = [];
  let tlsListener: SecureListener | undefined;
  let wsListener: SecureListener | undefined;
  // Made on the first upgrade: a broker no browser connects to through the HTTP port holds none.
  let upgrades: UpgradeAcceptor | undefined;
  const closeAll = async (): Promise<void> => {
    const all = [...listeners, ...(wsListener ? [wsListener] : []), ...(tlsListener ? [tlsListener] : []), ...(upgrades ? [upgrades] : [])];
    const closing = all.map((l) => l.close());
    groups?.close();
    expiry?.close();
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    for (const l of all) l.destroySockets();
    await Promise.all(closing);
  };
  try {
    listeners.push(await listenTcp({ port: opts.port, host: opts.host, handle, gate, log }));
    const { tls } = opts;
    if (opts.wsPort !== undefined) wsListener = await listenWebSocket({ port: opts.wsPort, host: opts.host, handle, gate, log, tls });
    if (tls?.port !== undefined) tlsListener = await listenTls({ port: tls.port, tls, host: opts.host, handle, gate, log });
  } catch (err) {
    await closeAll();
    throw err;
  }
  const [tcp] = listeners;
  let closed: Promise<void> | undefined;
  // NOTE: after the return below, when publish works: persistent sessions queue what is pending.
  if (opts.commands) setImmediate(() => opts.commands?.brokerStarted());
  return {
    port: tcp!.port, // NOTE: pushed first above, or startMqttBroker threw
    wsPort: wsListener?.port,
    tlsPort: tlsListener?.port,
    get connectedClients() {
      return aedes.connectedClients;
    },
    connectionStats: () => gate.stats(),
    setTlsPair: (pair) => {
      if (opts.tls === undefined) return;
      tlsListener?.setTlsPair(pair);
      wsListener?.setTlsPair(pair);
    },
    handleUpgrade: (req, socket, head) => {
      if (closed || aedes.closed) {
        socket.destroy();
        return;
      }
      (upgrades ??= acceptWebSocketUpgrades({ handle, gate, log })).handleUpgrade(req, socket, head);
    },
    publish: (topic, payload, qos, options) => (closed || aedes.closed ? Promise.reject(new Error('the embedded MQTT broker is stopped')) : publishAsGateway(aedes, topic, payload, qos, options)),
    sharedStats: () => groups?.stats() ?? { groups: 0, members: 0, dropped: 0 },
    closeClientsOf: (subject) => closeClientsOf(aedes, hooks, subject, log),
    close: () => (closed ??= closeAll()),
  };
}
