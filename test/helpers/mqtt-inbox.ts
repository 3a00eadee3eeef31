// An MQTT client that keeps every message it receives from the moment it connects (queued and
// retained ones included) and tells its CONNACK's sessionPresent; and the way to show a message was
// NOT delivered without sleeping: a later marker arrives first.

import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { awaitConnack, withVersion } from './mqtt.js';
import { within } from './process.js';

export interface InboxMessage {
  topic: string;
  payload: string;
}

export interface Inbox {
  client: MqttClient;
  sessionPresent: boolean;
  messages: InboxMessage[];
  /** Resolves with the first message (already received or to come) on `topic` with `payload`; bounded. */
  waitFor(topic: string, payload: string, timeoutMs?: number): Promise<InboxMessage>;
  /** The messages received before the first one on `topic` with `payload` (waits for it, bounded). */
  before(topic: string, payload: string, timeoutMs?: number): Promise<InboxMessage[]>;
  end(): Promise<void>;
}

/** Connects and resolves after CONNACK; rejects with the client's error (its `code` is the CONNACK code) or after `timeoutMs`. */
export async function connectInbox(url: string, opts: IClientOptions = {}, timeoutMs = 5_000): Promise<Inbox> {
  const client = connect(url, withVersion({ reconnectPeriod: 0, connectTimeout: timeoutMs, ...opts }));
  const messages: InboxMessage[] = [];
  const waiters: Array<() => void> = [];
  client.on('message', (topic, payload) => {
    messages.push({ topic, payload: payload.toString('utf8') });
    for (const w of waiters.splice(0)) w();
  });
  const { sessionPresent } = await awaitConnack(client, url, timeoutMs);
  const indexOf = (topic: string, payload: string): number => messages.findIndex((m) => m.topic === topic && m.payload === payload);
  const arrived = async (topic: string, payload: string, timeoutMs: number): Promise<number> => {
    const found = (): Promise<number> => new Promise((resolve) => {
      const check = (): void => {
        const i = indexOf(topic, payload);
        if (i >= 0) resolve(i);
        else waiters.push(check);
      };
      check();
    });
    return within(found(), timeoutMs, `message ${payload} on ${topic}`);
  };
  return {
    client,
    sessionPresent,
    messages,
    waitFor: async (topic, payload, ms = 5_000) => messages[await arrived(topic, payload, ms)]!,
    before: async (topic, payload, ms = 5_000) => messages.slice(0, await arrived(topic, payload, ms)),
    end: () => within(client.endAsync(), 5_000, 'client end'),
  };
}

/** Subscribes to `filter`; true when granted, false when refused (SUBACK 0x80, or a reason code of 0x80 or more at MQTT 5). */
export async function trySubscribe(client: MqttClient, filter: string, qos: 0 | 1 = 0): Promise<boolean> {
  try {
    const granted = await within(client.subscribeAsync(filter, { qos }), 5_000, `SUBACK for ${filter}`);
    return granted.every((g) => g.qos < 128);
  } catch (err) {
    if (err instanceof Error && /Subscribe error/.test(err.message)) return false;
    throw err;
  }
}
