// Shared subscriptions on the embedded broker (MQTT 5 §4.8.2), for MQTT 3.1.1 clients: each message
// matching `$share/<group>/<filter>` goes to exactly one member of each group (besides every
// ordinary subscriber), QoS 1 messages a member took without acknowledging go to another member when
// it drops, a bad share name is refused, and the last member leaving removes the group.

import { afterEach, describe, expect, it } from 'vitest';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { silentLogger } from '../../src/lib/index.js';
import { startMqttBroker, type MqttBroker } from '../../src/mqtt/index.js';
import { connectClient } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

let broker: MqttBroker | undefined;
const clients: MqttClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.end(true);
  await broker?.close();
  broker = undefined;
});

async function start(): Promise<{ b: MqttBroker; url: string }> {
  broker = await startMqttBroker({ port: 0, host: '127.0.0.1', log: silentLogger });
  return { b: broker, url: `mqtt://127.0.0.1:${broker.port}` };
}

interface Member {
  client: MqttClient;
  /** Payloads received, in order. */
  got: string[];
  /** Resolves once `n` messages have arrived (bounded). */
  until(n: number, what?: string): Promise<void>;
}

/**
 * A 3.1.1 client keeping what it receives. `isAcking: false`: it takes the first message and
 * acknowledges nothing (its handler never calls back, so no PUBACK goes out and it reads no further).
 */
async function member(url: string, opts: IClientOptions & { isAcking?: boolean } = {}): Promise<Member> {
  const { isAcking = true, ...rest } = opts;
  const client = await connectClient(url, { protocolVersion: 4, reconnectPeriod: 0, ...rest });
  clients.push(client);
  const got: string[] = [];
  const waiters: Array<() => void> = [];
  const take = (payload: Buffer): void => {
    got.push(payload.toString());
    for (const w of waiters.splice(0)) w();
  };
  if (isAcking) client.on('message', (_topic, payload) => take(payload));
  // NOTE: mqtt.js sends the PUBACK of a QoS 1 message once handleMessage calls back.
  else client.handleMessage = (packet) => take(Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload));
  const until = (n: number, what = `${n} messages`): Promise<void> => within(new Promise<void>((resolve) => {
    const check = (): void => (got.length >= n ? resolve() : void waiters.push(check));
    check();
  }), 5_000, what);
  return { client, got, until };
}

async function subscribeTo(m: Member, filter: string, qos: 0 | 1 = 1): Promise<number> {
  const granted = await within(m.client.subscribeAsync(filter, { qos }), 5_000, `SUBACK for ${filter}`);
  return granted[0]!.qos;
}

/** Resolves once `cond` holds (checked every few milliseconds, bounded). */
function eventually(cond: () => boolean, what: string): Promise<void> {
  return within(new Promise<void>((resolve) => {
    const check = (): void => void (cond() ? resolve() : setTimeout(check, 5));
    check();
  }), 5_000, what);
}

const ids = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

async function publishAll(pub: MqttClient, topic: string, payloads: readonly string[], qos: 0 | 1 = 1): Promise<void> {
  for (const p of payloads) await pub.publishAsync(topic, p, { qos });
}

describe('shared subscriptions ($share/<group>/<filter>) for MQTT 3.1.1 clients', () => {
  it('spreads a stream of QoS 1 messages over the members of a group: each gets part, together exactly all', async () => {
    const { b, url } = await start();
    const [m1, m2] = [await member(url), await member(url)];
    expect(await subscribeTo(m1!, '$share/workers/jobs/+')).toBe(1);
    expect(await subscribeTo(m2!, '$share/workers/jobs/+')).toBe(1);
    expect(b.sharedStats()).toEqual({ groups: 1, members: 2, dropped: 0 });
    const pub = await connectClient(url);
    clients.push(pub);
    const all = ids(1, 40);
    await publishAll(pub, 'jobs/a', all);
    await within(Promise.all([m1!.until(1), m2!.until(1)]), 5_000, 'both members served');
    await eventually(() => m1!.got.length + m2!.got.length >= all.length, 'the whole stream');
    expect(m1!.got.length).toBeGreaterThan(0);
    expect(m2!.got.length).toBeGreaterThan(0);
    expect([...m1!.got, ...m2!.got].sort((x, y) => Number(x) - Number(y))).toEqual(all);
  });

  it('sends the messages a member took without acknowledging to another member when it drops: nothing lost', async () => {
    const { b, url } = await start();
    const steady = await member(url);
    const dropping = await member(url, { isAcking: false });
    await subscribeTo(steady, '$share/g/stream');
    await subscribeTo(dropping, '$share/g/stream');
    const pub = await connectClient(url);
    clients.push(pub);
    await publishAll(pub, 'stream', ids(1, 10));
    await dropping.until(1, 'the dropping member took a message');
    dropping.client.stream.destroy();
    await publishAll(pub, 'stream', ids(11, 20));
    await eventually(() => new Set(steady.got).size >= 20, 'every message at the remaining member');
    expect([...new Set(steady.got)].sort((x, y) => Number(x) - Number(y))).toEqual(ids(1, 20));
    expect(b.sharedStats().dropped).toBe(0);
  });

  it('gives each group the whole stream, and every ordinary subscriber too', async () => {
    const { url } = await start();
    const [a1, a2, b1, plain] = [await member(url), await member(url), await member(url), await member(url)];
    await subscribeTo(a1!, '$share/a/t/#');
    await subscribeTo(a2!, '$share/a/t/#');
    await subscribeTo(b1!, '$share/b/t/#');
    await subscribeTo(plain!, 't/#');
    const pub = await connectClient(url);
    clients.push(pub);
    const all = ids(1, 12);
    await publishAll(pub, 't/x', all);
    await b1!.until(12);
    await plain!.until(12);
    expect(b1!.got).toEqual(all);
    expect(plain!.got).toEqual(all);
    await eventually(() => a1!.got.length + a2!.got.length >= 12, 'group a served');
    expect([...a1!.got, ...a2!.got].sort((x, y) => Number(x) - Number(y))).toEqual(all);
  });

  it('delivers the gateway\'s in-process publishes to one member, at the lower of the granted and published QoS', async () => {
    const { b, url } = await start();
    const m = await member(url);
    expect(await subscribeTo(m, '$share/g/edgeld/notify/#', 0)).toBe(0);
    const qos: number[] = [];
    m.client.on('message', (_t, _p, packet) => qos.push(packet.qos));
    await b.publish('edgeld/notify/x', 'n1', 1);
    await m.until(1);
    expect(m.got).toEqual(['n1']);
    expect(qos).toEqual([0]);
  });

  it('refuses a bad share name (SUBACK 0x80), grants the good filters of the same SUBSCRIBE, a shared one at most at QoS 1', async () => {
    const { b, url } = await start();
    const m = await member(url);
    // NOTE: mqtt.js rejects a SUBACK holding a refusal, with the SUBACK on the error.
    const suback = await within(m.client.subscribeAsync({ '$share//t': { qos: 1 }, '$share/+/t': { qos: 1 }, '$share/g': { qos: 1 }, '$share/g/t': { qos: 2 }, t: { qos: 0 } })
      .then(() => undefined, (err: unknown) => (err as { packet?: { granted?: number[] } }).packet), 5_000, 'SUBACK');
    expect(suback?.granted).toEqual([128, 128, 128, 1, 0]);
    expect(b.sharedStats()).toMatchObject({ groups: 1, members: 1 });
  });

  it('delivers nothing published on the name Aedes keeps a shared filter under', async () => {
    const { url } = await start();
    const m = await member(url);
    await subscribeTo(m, '$share/g/t');
    const pub = await connectClient(url);
    clients.push(pub);
    await pub.publishAsync('$edgeld/share/g/t', 'forged', { qos: 1 });
    await pub.publishAsync('t', 'marker', { qos: 1 });
    await m.until(1);
    expect(m.got).toEqual(['marker']);
  });

  it('UNSUBSCRIBE leaves the group; the last member leaving removes it; a clean session leaves at disconnect', async () => {
    const { b, url } = await start();
    const [m1, m2] = [await member(url), await member(url)];
    await subscribeTo(m1!, '$share/g/u');
    await subscribeTo(m2!, '$share/g/u');
    await within(m1!.client.unsubscribeAsync('$share/g/u'), 5_000, 'UNSUBACK');
    expect(b.sharedStats()).toEqual({ groups: 1, members: 1, dropped: 0 });
    const pub = await connectClient(url);
    clients.push(pub);
    await publishAll(pub, 'u', ids(1, 3));
    await m2!.until(3);
    expect(m2!.got).toEqual(ids(1, 3));
    await within(m2!.client.endAsync(), 5_000, 'DISCONNECT');
    await eventually(() => b.sharedStats().groups === 0, 'the group removed');
    expect(b.sharedStats()).toEqual({ groups: 0, members: 0, dropped: 0 });
    expect(m1!.got).toEqual([]);
  });

  it('serves the FIWARE IoT Agent pattern: agents sharing `$share/ulgroup//+/+/attrs` get each measurement once', async () => {
    const { url } = await start();
    const agents = [await member(url), await member(url)];
    for (const a of agents) {
      await subscribeTo(a, '$share/ulgroup//+/+/attrs');
      await subscribeTo(a, '$share/ulgroup//+/+/attrs/+');
    }
    const device = await connectClient(url, { protocolVersion: 4 });
    clients.push(device);
    await device.publishAsync('/key1/dev1/attrs', 't|20', { qos: 1 });
    await device.publishAsync('/key1/dev1/attrs/h', '40', { qos: 1 });
    await device.publishAsync('/key1/dev2/attrs', 't|21', { qos: 1 });
    await eventually(() => agents[0]!.got.length + agents[1]!.got.length >= 3, 'three measurements');
    expect([...agents[0]!.got, ...agents[1]!.got].sort()).toEqual(['40', 't|20', 't|21']);
  });

  it('keeps messages for a group while no member is connected, until one connects', async () => {
    const { b, url } = await start();
    const away = await member(url, { clientId: 'keeper', clean: false });
    await subscribeTo(away, '$share/g/k');
    await within(away.client.endAsync(), 5_000, 'DISCONNECT');
    await b.publish('k', 'kept', 1);
    expect(b.sharedStats()).toMatchObject({ groups: 1, members: 1, dropped: 0 });
    const back = connect(url, { clientId: 'keeper', clean: false, protocolVersion: 4, reconnectPeriod: 0 });
    clients.push(back);
    const got = await within(new Promise<string>((resolve) => back.on('message', (_t, p) => resolve(p.toString()))), 5_000, 'the kept message');
    expect(got).toBe('kept');
  });

  it('ends the memberships of a persistent session when its client comes back with a clean one', async () => {
    const { b, url } = await start();
    const away = await member(url, { clientId: 'agent-9', clean: false });
    await subscribeTo(away, '$share/g/c');
    await within(away.client.endAsync(), 5_000, 'DISCONNECT');
    expect(b.sharedStats()).toMatchObject({ groups: 1, members: 1 });
    await member(url, { clientId: 'agent-9', clean: true });
    expect(b.sharedStats()).toEqual({ groups: 0, members: 0, dropped: 0 });
  });
});
