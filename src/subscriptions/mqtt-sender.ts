// Sends notifications to MQTT endpoints (behaviour §7): `mqtt[s]://[user:pass@]host[:port]/topic`.
// The gateway's own broker is published to in-process; any other broker through a pooled mqtt.js client.

import { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { IClientOptions, IClientPublishOptions, MqttClient } from 'mqtt';
import type { Logger } from '../lib/index.js';

export type MqttQos = 0 | 1 | 2;
export type MqttVersion = 'mqtt3.1.1' | 'mqtt5.0';

/** What goes on the wire: `{"metadata": {...headers...}, "body": <Notification>}`. */
export interface MqttNotificationMessage {
  metadata: Record<string, string>;
  body: unknown;
  /** The body as JSON text already (then `body` is not used): spliced in, not parsed again. */
  bodyJson?: string;
}

export interface MqttSendOptions {
  qos: MqttQos;
  version: MqttVersion;
  /** Bound on the whole send: connecting (when needed), publishing and the broker's acknowledgement. */
  timeoutMs: number;
}

export interface MqttEndpoint {
  /** The parsed URI; credentials included. */
  url: URL;
  scheme: 'mqtt' | 'mqtts';
  /** Host without IPv6 brackets. */
  host: string;
  port: number;
  username: string | undefined;
  password: string | undefined;
  topic: string;
  /** The URI without its password, for logs and error messages. */
  display: string;
}

export interface MqttSenderDeps {
  /** True when the endpoint names the gateway's own embedded broker. */
  isLocal(url: URL): boolean;
  publishLocal(topic: string, payload: Buffer, qos: MqttQos): Promise<void>;
  /** Bound on one connection attempt (TCP + CONNACK) to an outside broker. */
  connectTimeoutMs: number;
  log: Logger;
  /** Pause between reconnection attempts of a pooled client; default 1000 ms. */
  reconnectPeriodMs?: number;
  /** A pooled client unused for this long is closed; default 5 minutes. */
  idleTimeoutMs?: number;
}

export interface MqttSender {
  /** Publishes `message` as JSON on the endpoint's topic; rejects (never throws) on any failure. */
  send(uri: string, message: MqttNotificationMessage, opts: MqttSendOptions): Promise<void>;
  /** Ends every pooled client and fails the sends still in progress. */
  close(): Promise<void>;
}

/** An endpoint URI that cannot be used for MQTT. */
export class MqttEndpointError extends Error {
  override name = 'MqttEndpointError';
}

/** A send that failed: timeout, refused or lost connection, or a broker's refusal. */
export class MqttSendError extends Error {
  override name = 'MqttSendError';
}

const DEFAULT_PORT = { mqtt: 1883, mqtts: 8883 } as const;

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch (err) {
    throw new MqttEndpointError(`invalid percent-encoding in the MQTT endpoint's ${what}`, { cause: err });
  }
}

/** Parses `mqtt[s]://[user:pass@]host[:port]/topic`; the topic is the percent-decoded path. */
export function parseMqttEndpoint(uri: string): MqttEndpoint {
  let url: URL;
  try {
    url = new URL(uri);
  } catch (err) {
    throw new MqttEndpointError(`not a URI: '${uri}'`, { cause: err });
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'mqtt' && scheme !== 'mqtts') throw new MqttEndpointError(`not an mqtt:// or mqtts:// URI: '${uri}'`);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') throw new MqttEndpointError(`the MQTT endpoint has no host: '${uri}'`);
  const username = url.username === '' ? undefined : decode(url.username, 'user name');
  const password = url.password === '' ? undefined : decode(url.password, 'password');
  const shown = new URL(url.href);
  shown.password = '';
  const display = shown.href;
  // A raw '#' starts a fragment and a raw '?' a query: both would silently cut the topic short.
  if (url.hash !== '' || uri.includes('#')) throw new MqttEndpointError(`an MQTT topic to publish on must not hold wildcards: '${display}'`);
  if (url.search !== '') throw new MqttEndpointError(`the MQTT endpoint has a query; percent-encode '?' in a topic: '${display}'`);
  const topic = decode(url.pathname.slice(1), 'topic');
  if (topic === '') throw new MqttEndpointError(`the MQTT endpoint names no topic: '${display}'`);
  // [MQTT-3.3.2-2] The Topic Name in a PUBLISH packet must not contain wildcard characters.
  if (/[+#]/.test(topic)) throw new MqttEndpointError(`an MQTT topic to publish on must not hold wildcards: '${display}'`);
  // [MQTT-4.7.3-2] Topic names must not include the null character.
  if (topic.includes('\u0000')) throw new MqttEndpointError(`an MQTT topic must not hold U+0000: '${display}'`);
  if (Buffer.byteLength(topic) > 65_535) throw new MqttEndpointError('the MQTT topic is longer than 65535 bytes');
  const port = url.port === '' ? DEFAULT_PORT[scheme] : Number(url.port);
  return { url, scheme, host, port, username, password, topic, display };
}

/** One pooled connection to an outside broker, shared by every send with the same key. */
interface Pooled {
  readonly key: string;
  readonly client: MqttClient;
  readonly display: string;
  /** Sends waiting for CONNACK. */
  readonly waiting: Set<(err?: Error) => void>;
  /** Every send in progress on this client, failed all at once on close. */
  readonly inProgress: Set<(err: Error) => void>;
  idleTimer: NodeJS.Timeout | undefined;
  /** The connection was up and went down: the client waits for its next reconnection attempt. */
  lost: boolean;
}

function poolKey(e: MqttEndpoint, version: MqttVersion): string {
  const user = e.username === undefined ? '' : encodeURIComponent(e.username);
  const pass = e.password === undefined ? '' : encodeURIComponent(e.password);
  return `${e.scheme}://${user}:${pass}@[${e.host}]:${e.port}|${version}`;
}

function brokerDisplay(e: MqttEndpoint): string {
  return `${e.scheme}://${e.username === undefined ? '' : `${e.username}@`}${e.url.host}`;
}

/** A short random client id: MQTT 3.1.1 servers must accept ids of up to 23 characters [MQTT-3.1.3-5]. */
function newClientId(): string {
  return `edgeld-${randomBytes(6).toString('hex')}`;
}

function endClient(client: MqttClient, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.stream?.destroy();
      resolve();
    }, timeoutMs);
    timer.unref();
    // A connected client without messages in flight says DISCONNECT; any other is cut off.
    const force = !client.connected || Object.keys(client.outgoing).length > 0;
    client.end(force, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

type MqttConnect = (options: IClientOptions) => MqttClient;

/**
 * The mqtt client library, loaded on the first notification to an outside broker: a gateway that
 * only notifies its own embedded broker (or over HTTP) never pays its memory (about 15 MiB of RSS).
 */
let client: Promise<MqttConnect> | undefined;
const loadClient = (): Promise<MqttConnect> => (client ??= import('mqtt').then((m) => m.connect));

/** Endpoints parsed once per URI; beyond this many, the cache starts over. */
const MAX_ENDPOINTS = 1_000;
const endpoints = new Map<string, MqttEndpoint>();

function endpointOf(uri: string): MqttEndpoint {
  let endpoint = endpoints.get(uri);
  if (endpoint === undefined) {
    endpoint = parseMqttEndpoint(uri);
    if (endpoints.size >= MAX_ENDPOINTS) endpoints.clear();
    endpoints.set(uri, endpoint);
  }
  return endpoint;
}

/** Rejects a QoS or version the notifierInfo named wrong. */
function checkSendOptions(opts: MqttSendOptions): void {
  if (![0, 1, 2].includes(opts.qos)) throw new MqttEndpointError(`MQTT-QoS must be 0, 1 or 2, not ${String(opts.qos)}`);
  if (opts.version !== 'mqtt3.1.1' && opts.version !== 'mqtt5.0') {
    throw new MqttEndpointError(`MQTT-Version must be mqtt3.1.1 or mqtt5.0, not ${String(opts.version)}`);
  }
}

/** The published JSON: the metadata and the body (given as JSON text when already serialised). */
function payloadOf(message: MqttNotificationMessage): Buffer {
  return Buffer.from(message.bodyJson === undefined
    ? JSON.stringify({ metadata: message.metadata, body: message.body })
    : `{"metadata":${JSON.stringify(message.metadata)},"body":${message.bodyJson}}`);
}

/** The options of a new client for an endpoint. */
function clientOptions(e: MqttEndpoint, version: MqttVersion, reconnectPeriod: number, connectTimeoutMs: number): IClientOptions {
  return {
    protocol: e.scheme, host: e.host, port: e.port, protocolVersion: version === 'mqtt5.0' ? 5 : 4,
    clientId: newClientId(), clean: true, reconnectPeriod, connectTimeout: connectTimeoutMs,
    // NOTE: a QoS 0 publish while offline fails instead of waiting in a queue past its send's timeout.
    queueQoSZero: false, resubscribe: false,
    ...(e.username === undefined ? {} : { username: e.username }),
    ...(e.password === undefined ? {} : { password: e.password }),
  };
}

/** Follows a pooled client's connection: sends waiting for CONNACK go on, or fail at once on an error. */
function watchClient(entry: Pooled, log: Logger): void {
  const { client } = entry;
  client.on('connect', () => {
    entry.lost = false;
    // NOTE: notifications are small packets sent one by one; Nagle's algorithm would hold them back.
    const stream: unknown = client.stream;
    if (stream instanceof Socket) stream.setNoDelay(true);
    log.debug('mqtt connection up', { broker: entry.display });
    for (const w of entry.waiting) w();
  });
  // NOTE: mqtt.js throws an 'error' nobody listens to; this listener also fails the sends waiting
  // for CONNACK at once (refused connection, bad credentials) rather than at their timeout.
  client.on('error', (err) => {
    log.debug('mqtt connection error', { broker: entry.display, err: err.message });
    const failure = new MqttSendError(`cannot connect to MQTT broker ${entry.display}: ${err.message}`, { cause: err });
    for (const w of entry.waiting) w(failure);
  });
  client.on('close', () => {
    if (client.connected === false && entry.waiting.size === 0) entry.lost = true;
    log.debug('mqtt connection closed', { broker: entry.display });
  });
}

/** Publishes on the embedded broker in-process, within the send's timeout. */
function publishInProcess(publishLocal: MqttSenderDeps['publishLocal'], e: MqttEndpoint, payload: Buffer, opts: MqttSendOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new MqttSendError(`MQTT in-process publish to ${e.topic} timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    Promise.resolve().then(() => publishLocal(e.topic, payload, opts.qos)).then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(new MqttSendError(`MQTT in-process publish to ${e.topic} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      },
    );
  });
}

export function createMqttSender(deps: MqttSenderDeps): MqttSender {
  const { log } = deps;
  const reconnectPeriod = deps.reconnectPeriodMs ?? 1_000;
  const idleTimeoutMs = deps.idleTimeoutMs ?? 300_000;
  const pool = new Map<string, Pooled>();
  let closed = false;

  const evict = (entry: Pooled): Promise<void> => {
    pool.delete(entry.key);
    clearTimeout(entry.idleTimer);
    return endClient(entry.client, deps.connectTimeoutMs);
  };

  const touch = (entry: Pooled): void => {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.inProgress.size > 0) touch(entry);
      else {
        log.debug('closing idle mqtt connection', { broker: entry.display });
        void evict(entry);
      }
    }, idleTimeoutMs);
    entry.idleTimer.unref();
  };

  const pooled = (connect: MqttConnect, e: MqttEndpoint, version: MqttVersion): Pooled => {
    const key = poolKey(e, version);
    const found = pool.get(key);
    // NOTE: a client whose connection was lost waits up to a reconnect period before it tries again;
    // a send does not wait for that: the lost client goes, and a new one connects at once.
    if (found && !found.lost) return found;
    if (found) void evict(found);
    const client = connect(clientOptions(e, version, reconnectPeriod, deps.connectTimeoutMs));
    const entry: Pooled = {
      key, client, display: brokerDisplay(e), waiting: new Set(), inProgress: new Set(), idleTimer: undefined, lost: false,
    };
    watchClient(entry, log);
    pool.set(key, entry);
    return entry;
  };

  const sendOutside = (connect: MqttConnect, e: MqttEndpoint, payload: Buffer, opts: MqttSendOptions): Promise<void> => new Promise((resolve, reject) => {
    const entry = pooled(connect, e, opts.version);
    touch(entry);
    let timer: NodeJS.Timeout | undefined;
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      entry.waiting.delete(onConnected);
      entry.inProgress.delete(finish);
      if (err) reject(err);
      else resolve();
    };
    const publish = (): void => {
      const publishOpts: IClientPublishOptions = { qos: opts.qos, retain: false };
      if (opts.version === 'mqtt5.0') publishOpts.properties = { contentType: 'application/json', payloadFormatIndicator: true };
      entry.client.publish(e.topic, payload, publishOpts, (err) => {
        finish(err ? new MqttSendError(`MQTT broker ${entry.display} did not take the publish: ${err.message}`, { cause: err }) : undefined);
      });
    };
    function onConnected(err?: Error): void {
      entry.waiting.delete(onConnected);
      if (err) finish(err);
      else publish();
    }
    entry.inProgress.add(finish);
    timer = setTimeout(() => {
      const what = entry.waiting.has(onConnected) ? 'no connection' : 'no acknowledgement';
      // NOTE: a QoS 1/2 message already handed to the client may still be delivered after this.
      finish(new MqttSendError(`MQTT send to ${e.display} timed out after ${opts.timeoutMs} ms: ${what}`));
    }, opts.timeoutMs);
    if (entry.client.connected) publish();
    else entry.waiting.add(onConnected);
  });

  return {
    send: async (uri, message, opts) => {
      if (closed) throw new MqttSendError('the MQTT sender is closed');
      checkSendOptions(opts);
      const endpoint = endpointOf(uri);
      const payload = payloadOf(message);
      if (deps.isLocal(endpoint.url)) return publishInProcess(deps.publishLocal, endpoint, payload, opts);
      const connect = await loadClient();
      // The sender may have been closed while the library loaded.
      if (closed) throw new MqttSendError('the MQTT sender is closing');
      return sendOutside(connect, endpoint, payload, opts);
    },
    close: async () => {
      closed = true;
      const entries = [...pool.values()];
      const closing = new MqttSendError('the MQTT sender is closing');
      for (const entry of entries) for (const fail of [...entry.inProgress]) fail(closing);
      await Promise.all(entries.map(evict));
    },
  };
}
