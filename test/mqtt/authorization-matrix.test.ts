// The MQTT authorization matrix (authentication on): every topic class × {publish, subscribe,
// delivery} × every kind of party, one test per cell, each checked on the real embedded broker.
//
// Parties: the owner device (dev1, whose ngsi/ topics they are), another device (dev2), the subject
// (alice: owner of the notification and dashboard topics; no permission on dev1's entity), another
// subject (bob), an administrator (root) and an anonymous client (no credentials: refused at CONNECT).
//
// publish   the party publishes (QoS 1, retained); yes: it was relayed (an administrator subscribing
//           afterwards receives it as the topic's retained message)
// subscribe the party subscribes to the topic itself ($SYS/# for system); yes: SUBACK grants it
// delivery the broker publishes on the topic; yes: the party receives it through any filter it was
//           granted (the subjects subscribed theirs before any subscription notified there)
//
// A new topic class or party is a new row or column here, or this table is incomplete.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { connectInbox, trySubscribe, type Inbox } from '../helpers/mqtt-inbox.js';
import { refusedWith } from '../helpers/mqtt.js';
import type { IClientOptions } from 'mqtt';

type Party = 'owner device' | 'other device' | 'subject' | 'other subject' | 'admin' | 'anonymous';
type Action = 'publish' | 'subscribe' | 'delivery';
type Outcome = 'yes' | 'no';
const PARTIES: readonly Party[] = ['owner device', 'other device', 'subject', 'other subject', 'admin', 'anonymous'];

interface TopicClassRow {
  topic: string;
  /** What a publish carries (a measurement must be one). */
  payload: (n: number) => string;
  /** The filter a subscribe cell asks for (the topic itself unless given). */
  filter?: string;
  /** Outcomes per action, in the order of PARTIES. */
  publish: Outcome[];
  subscribe: Outcome[];
  delivery: Outcome[];
}

const y = 'yes';
const n = 'no';
//                                              owner dev  other dev  subject  other subj  admin  anonymous
const MATRIX: Record<string, TopicClassRow> = {
  measurement: {
    topic: 'ngsi/default/dev1/attrs', payload: (i) => `{"temperature":${i}}`,
    publish: /*                                 */[y, n, n, n, y, n],
    subscribe: /*                               */[y, n, n, n, y, n],
    delivery: /*                                */[y, n, n, n, y, n],
  },
  status: {
    topic: 'ngsi/default/dev1/status', payload: (i) => `online${' '.repeat(i)}`, // trimmed: a valid status, told apart by its length
    publish: /*                                 */[y, n, n, n, y, n],
    subscribe: /*                               */[y, n, n, n, y, n],
    delivery: /*                                */[y, n, n, n, y, n],
  },
  command: {
    topic: 'ngsi/default/dev1/cmd', payload: (i) => `{"switch":${i}}`,
    publish: /*                                 */[n, n, n, n, n, n],
    subscribe: /*                               */[y, n, n, n, y, n],
    delivery: /*                                */[y, n, n, n, y, n],
  },
  'command answer': {
    topic: 'ngsi/default/dev1/cmdexe', payload: (i) => `{"switch":"done ${i}"}`,
    publish: /*                                 */[y, n, n, n, y, n],
    subscribe: /*                               */[y, n, n, n, y, n],
    delivery: /*                                */[y, n, n, n, y, n],
  },
  notification: {
    topic: 'edgeld/notify/alice/alerts', payload: (i) => `{"n":${i}}`,
    publish: /*                                 */[n, n, n, n, n, n],
    subscribe: /*                               */[n, n, y, n, y, n],
    delivery: /*                                */[n, n, y, n, y, n],
  },
  dashboard: {
    topic: 'edgeld/dashboard/alice-view', payload: (i) => `{"d":${i}}`,
    publish: /*                                 */[n, n, n, n, n, n],
    subscribe: /*                               */[n, n, y, n, y, n],
    delivery: /*                                */[n, n, y, n, y, n],
  },
  system: {
    topic: '$SYS/matrix/probe', filter: '$SYS/#', payload: (i) => `sys ${i}`,
    publish: /*                                 */[n, n, n, n, n, n],
    subscribe: /*                               */[n, n, n, n, y, n],
    delivery: /*                                */[n, n, n, n, y, n],
  },
  free: {
    topic: 'plant/room1', payload: (i) => `free ${i}`,
    publish: /*                                 */[y, y, y, y, y, n],
    subscribe: /*                               */[y, y, y, y, y, n],
    delivery: /*                                */[y, y, y, y, y, n],
  },
};

/** The filters a delivery cell's party asks for (each granted or not): whatever could match a topic of any class. */
const BROAD_FILTERS = [
  '#', '+/#', 'ngsi/#', 'ngsi/default/#', 'ngsi/default/dev1/#', 'edgeld/#', 'edgeld/notify/#', 'edgeld/notify/alice/#',
  'edgeld/dashboard/#', '$SYS/#', 'plant/#', ...Object.values(MATRIX).map((r) => r.topic), 'marker/#',
];

describe('MQTT authorization matrix', () => {
  let b: AuthBroker;
  let url: string;
  const secrets: Record<string, string> = {};
  const delivery = new Map<Party, Inbox>();
  let counter = 0;

  const optionsOf = async (party: Party): Promise<IClientOptions | undefined> => {
    switch (party) {
      case 'owner device': return { clientId: 'default/dev1', username: 'default/dev1', password: secrets['dev1']! };
      case 'other device': return { clientId: 'default/dev2', username: 'default/dev2', password: secrets['dev2']! };
      case 'subject': return { username: 'alice', password: await b.token('alice') };
      case 'other subject': return { username: 'bob', password: await b.token('bob') };
      case 'admin': return { username: 'root', password: await b.token('root', { roles: [ADMIN_ROLE] }) };
      case 'anonymous': return undefined;
    }
  };
  /** A connection of `party`; anonymous: checks that CONNECT is refused (CONNACK 4) and returns undefined. */
  const connectAs = async (party: Party): Promise<Inbox | undefined> => {
    const opts = await optionsOf(party);
    if (opts === undefined) {
      await expect(connectInbox(url, {}, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
      return undefined;
    }
    return connectInbox(url, opts);
  };
  const subscribeBroadly = async (inbox: Inbox): Promise<void> => {
    for (const filter of BROAD_FILTERS) await trySubscribe(inbox.client, filter);
  };

  beforeAll(async () => {
    // NOTE: the matrix's refused anonymous CONNECTs are login failures from one address: with the
    // lockout on, the next connections from 127.0.0.1 would wait (test/mqtt/connect-lockout.test.ts).
    b = await startAuthBroker({ config: { application: { lockout: { ...defaultConfig().application.lockout, enabled: false } } } });
    await b.broker.listen();
    url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    for (const deviceId of ['dev1', 'dev2']) {
      const reg = await b.as('root', 'POST', '/edgeld/v1/devices', { body: { deviceId }, claims: { roles: [ADMIN_ROLE] } });
      expect(reg.status, reg.text).toBe(201);
      secrets[deviceId] = reg.json.secret;
    }
    // The subjects' delivery connections subscribe before any subscription notifies anywhere: what
    // they were granted then is still checked at each delivery.
    for (const party of ['subject', 'other subject', 'admin'] as const) {
      const inbox = (await connectAs(party))!;
      await subscribeBroadly(inbox);
      delivery.set(party, inbox);
    }
    for (const topic of [MATRIX['notification']!.topic, MATRIX['dashboard']!.topic]) {
      const res = await b.as('alice', 'POST', '/ngsi-ld/v1/subscriptions', {
        body: { type: 'Subscription', entities: [{ type: 'NeverWritten' }], notification: { endpoint: { uri: `${url}/${topic}` } } },
      });
      expect(res.status, res.text).toBe(201);
    }
  });
  afterAll(async () => {
    for (const inbox of delivery.values()) inbox.client.end(true);
    await b.close();
  });

  const cells = (action: Action): Array<[string, Party, Outcome]> =>
    Object.entries(MATRIX).flatMap(([name, row]) => PARTIES.map((party, i): [string, Party, Outcome] => [name, party, row[action][i]!]));

  describe('publish', () => {
    it.each(cells('publish'))('%s × %s → %s', async (name, party, expected) => {
      const row = MATRIX[name]!;
      const inbox = await connectAs(party);
      if (inbox === undefined) {
        expect(expected).toBe('no');
        return;
      }
      const payload = row.payload(++counter);
      try {
        // PUBACK, or the end of a connection that forged a topic of the broker's.
        const closed = new Promise<void>((resolve) => inbox.client.once('close', () => resolve()));
        await Promise.race([inbox.client.publishAsync(row.topic, payload, { qos: 1, retain: true }).catch(() => undefined), closed]);
      } finally {
        inbox.client.end(true);
      }
      // NOTE: retained, so that whether it was relayed is read from a later subscriber: its retained
      // message comes before anything published after it subscribed.
      const later = (await connectAs('admin'))!;
      try {
        expect(await trySubscribe(later.client, row.topic)).toBe(true);
        const marker = `marker ${counter}`;
        await b.broker.publishLocal(row.topic, marker, 0);
        const seen = (await later.before(row.topic, marker)).filter((m) => m.payload === payload);
        expect(seen.length > 0 ? 'yes' : 'no').toBe(expected);
      } finally {
        later.client.end(true);
      }
    });
  });

  describe('subscribe', () => {
    it.each(cells('subscribe'))('%s × %s → %s', async (name, party, expected) => {
      const row = MATRIX[name]!;
      const inbox = await connectAs(party);
      if (inbox === undefined) {
        expect(expected).toBe('no');
        return;
      }
      try {
        expect((await trySubscribe(inbox.client, row.filter ?? row.topic)) ? 'yes' : 'no').toBe(expected);
      } finally {
        inbox.client.end(true);
      }
    });
  });

  describe('delivery', () => {
    beforeAll(async () => {
      // Devices take their own client ids: connected once the publish and subscribe cells are done.
      for (const party of ['owner device', 'other device'] as const) {
        const inbox = (await connectAs(party))!;
        await subscribeBroadly(inbox);
        delivery.set(party, inbox);
      }
    });

    it.each(cells('delivery'))('%s × %s → %s', async (name, party, expected) => {
      const row = MATRIX[name]!;
      const inbox = delivery.get(party);
      if (inbox === undefined) {
        await connectAs(party); // anonymous: refused at CONNECT
        expect(expected).toBe('no');
        return;
      }
      const payload = `delivery ${++counter}`;
      await b.broker.publishLocal(row.topic, payload, 0);
      const markerTopic = 'marker/matrix';
      const marker = `marker ${counter}`;
      await b.broker.publishLocal(markerTopic, marker, 0);
      const seen = (await inbox.before(markerTopic, marker)).filter((m) => m.topic === row.topic && m.payload === payload);
      expect(seen.length > 0 ? 'yes' : 'no').toBe(expected);
    });
  });
});
