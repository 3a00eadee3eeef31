// The downlink's connection out to the MQTT broker the cloud publishes on (edge spec §7): a
// persistent session (clean: false, a client id of its own) subscribed QoS 1 to the gateway's topic,
// so that notifications published while the gateway was away arrive when it is back. Each message is
// acknowledged (PUBACK) only once it was handled, so a crash in between has it sent again. A broker
// that is down or refuses is retried with backoff, logged and counted, never a crash.

import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { Logger } from '../lib/index.js';
import { backoffDelay } from './backoff.js';

export interface DownlinkLinkOptions {
  /** mqtt[s]://[user:pass@]host:port */
  url: string;
  username: string;
  password: string;
  topic: string;
  clientId: string;
  connectTimeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface DownlinkLinkStatus {
  /** Connected and subscribed to the topic. */
  connected: boolean;
  /** The broker's URL without credentials. */
  broker: string;
  /** Connection attempts that failed or connections lost. */
  failures: number;
  lastError: { at: number; message: string } | undefined;
}

export interface DownlinkLink {
  start(): void;
  status(): DownlinkLinkStatus;
  stop(): Promise<void>;
}

export interface DownlinkLinkDeps {
  options: DownlinkLinkOptions;
  /** Handles one message; resolves once it is done with it (then it is acknowledged). Never rejects. */
  handle(payload: Buffer): Promise<void>;
  now(): number;
  log: Logger;
  random?: () => number;
}

/** The URL without user name and password, for logs and the status. */
function displayUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}

export function createDownlinkLink(deps: DownlinkLinkDeps): DownlinkLink {
  const { options, log } = deps;
  const random = deps.random ?? Math.random;
  const broker = displayUrl(options.url);
  const given = new URL(options.url);
  const username = options.username || decodeURIComponent(given.username);
  const password = options.password || decodeURIComponent(given.password);
  let client: MqttClient | undefined;
  let connected = false;
  let attempts = 0;
  let failures = 0;
  let lastError: { at: number; message: string } | undefined;
  /** The message being handled: a stop waits for it (its write) before the connection ends. */
  let inflight: Promise<void> = Promise.resolve();

  const fail = (message: string): void => {
    failures += 1;
    lastError = { at: deps.now(), message: message.slice(0, 1_000) };
  };

  const clientOptions = (): IClientOptions => ({
    clientId: options.clientId, clean: false, protocolVersion: 4, connectTimeout: options.connectTimeoutMs, reconnectPeriod: options.retryBaseMs,
    ...(username !== '' ? { username } : {}), ...(password !== '' ? { password } : {}),
  });

  const wire = (c: MqttClient): void => {
    c.on('connect', (ack) => {
      attempts = 0;
      c.options.reconnectPeriod = options.retryBaseMs;
      c.subscribe(options.topic, { qos: 1 }, (err, granted) => {
        const refused = granted?.some((g) => g.qos === 128) === true;
        if (err || refused) {
          fail(`subscribe to ${options.topic}: ${err?.message ?? 'refused by the broker'}`);
          log.error('downlink could not subscribe on the MQTT broker', { broker, topic: options.topic, error: err?.message ?? 'refused' });
          return;
        }
        // Connected means subscribed: from now on every notification on the topic reaches the gateway.
        connected = true;
        log.info('downlink connected to the MQTT broker', { broker, topic: options.topic, sessionPresent: ack.sessionPresent });
      });
    });
    // NOTE: mqtt.js handles one message at a time through handleMessage and sends the PUBACK of a
    // QoS 1 message when its callback is called: only once the notification was applied or refused.
    c.handleMessage = (packet, callback) => {
      inflight = deps.handle(Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload)).then(() => callback(), () => callback());
    };
    c.on('error', (err) => {
      fail(err.message);
      log.warn('downlink MQTT broker connection failed; retrying', { broker, error: err.message, failures });
    });
    c.on('close', () => {
      if (connected) {
        fail('connection lost');
        log.warn('downlink lost its MQTT broker connection; reconnecting', { broker });
      }
      connected = false;
      attempts += 1;
      // Backoff: mqtt.js reads reconnectPeriod before each attempt.
      c.options.reconnectPeriod = backoffDelay(attempts, options.retryBaseMs, options.retryMaxMs, random);
    });
    c.on('offline', () => {
      connected = false;
    });
  };

  return {
    start() {
      client = connect(options.url, clientOptions());
      wire(client);
    },
    status: () => ({ connected, broker, failures, lastError }),
    async stop() {
      const c = client;
      client = undefined;
      if (c === undefined) return;
      await inflight;
      await c.endAsync(true).catch(() => undefined);
      connected = false;
    },
  };
}
