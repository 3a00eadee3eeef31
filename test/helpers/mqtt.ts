// MQTT test tools: a client that waits for CONNACK, a bounded wait for the next message on a topic,
// and a throwaway mosquitto on 127.0.0.1 with its own temp config (never a system service). Clients
// speak the protocol version of the run (mqttVersion: MQTT 3.1.1 unless EDGELD_TEST_MQTT_VERSION=5,
// as the mqtt-v5 project of vitest.config.ts sets it), unless a test names one.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { connect, type IClientOptions, type IConnackPacket, type MqttClient } from 'mqtt';
import { within } from './process.js';

/**
 * Resolves with the CONNACK of a client just made; rejects on its first error (ending it) or after
 * `timeoutMs`. Later errors are ignored.
 */
export async function awaitConnack(client: MqttClient, url: string, timeoutMs: number): Promise<IConnackPacket> {
  let ack: IConnackPacket;
  try {
    ack = await within(new Promise<IConnackPacket>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('error', reject);
    }), timeoutMs, `connect to ${url}`);
  } catch (err) {
    client.end(true);
    throw err;
  }
  client.on('error', () => undefined);
  return ack;
}

/** The MQTT protocol version of this run: 4 (3.1.1), or 5 when EDGELD_TEST_MQTT_VERSION=5. */
export function mqttVersion(): 4 | 5 {
  return process.env['EDGELD_TEST_MQTT_VERSION'] === '5' ? 5 : 4;
}

/**
 * Client options in the version of the run unless `opts` names one. At MQTT 5, a session that is not
 * clean is given a Session Expiry Interval of 0xFFFFFFFF (it never expires), as in 3.1.1 [MQTT-3.1.2-11].
 */
export function withVersion(opts: IClientOptions): IClientOptions {
  const protocolVersion = opts.protocolVersion ?? mqttVersion();
  if (protocolVersion !== 5 || opts.clean !== false || opts.properties?.sessionExpiryInterval !== undefined) return { ...opts, protocolVersion };
  return { ...opts, protocolVersion, properties: { ...opts.properties, sessionExpiryInterval: 0xFFFF_FFFF } };
}

/** CONNACK refusal codes of MQTT 3.1.1 (§3.2.2.3) and the MQTT 5 reason codes Aedes answers them with. */
const CONNACK_V5: Readonly<Record<number, number>> = { 2: 0x85, 3: 0x88, 4: 0x86, 5: 0x87 };

/** The CONNACK code a refusal has in the version of the run, given its MQTT 3.1.1 return code. */
export function refusedWith(code311: 2 | 3 | 4 | 5): number {
  return mqttVersion() === 5 ? CONNACK_V5[code311]! : code311;
}

/**
 * Publishes and resolves with the acknowledgement's reason code: 0 when accepted (and always at
 * MQTT 3.1.1, which has no negative acknowledgement; at QoS 0, nothing is acknowledged). Never rejects
 * on a refusal, so that a test of a refused publish reads the same at both versions.
 */
export function publishAcked(client: MqttClient, topic: string, payload: string | Buffer, opts: { qos?: 0 | 1 | 2; retain?: boolean } = {}): Promise<number> {
  return within(new Promise<number>((resolve, reject) => {
    client.publish(topic, payload, { qos: opts.qos ?? 0, retain: opts.retain ?? false }, (err) => {
      if (err === undefined || err === null) resolve(0);
      else if ('code' in err && typeof err.code === 'number') resolve(err.code);
      else reject(err);
    });
  }), 5_000, `the acknowledgement of a publish on ${topic}`);
}

/** Connects and resolves after CONNACK; rejects on the first error or after `timeoutMs`. */
export async function connectClient(url: string, opts: IClientOptions = {}, timeoutMs = 5_000): Promise<MqttClient> {
  const client = connect(url, withVersion({ reconnectPeriod: 0, connectTimeout: timeoutMs, ...opts }));
  await awaitConnack(client, url, timeoutMs);
  return client;
}

export interface Received {
  topic: string;
  payload: Buffer;
  qos: number;
}

/** Subscribes and returns a function awaiting the next message on `topic` (bounded). */
export async function subscribe(client: MqttClient, topic: string, qos: 0 | 1 | 2 = 0): Promise<(timeoutMs?: number) => Promise<Received>> {
  const queue: Received[] = [];
  const waiters: Array<(m: Received) => void> = [];
  client.on('message', (t, payload, packet) => {
    if (t !== topic) return;
    const m = { topic: t, payload, qos: packet.qos };
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  await client.subscribeAsync(topic, { qos });
  return (timeoutMs = 5_000) => {
    const m = queue.shift();
    if (m) return Promise.resolve(m);
    return within(new Promise<Received>((resolve) => waiters.push(resolve)), timeoutMs, `a message on ${topic}`);
  };
}

export async function endClient(client: MqttClient): Promise<void> {
  await within(client.endAsync(), 5_000, 'client end');
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // NOTE: a listening TCP server's address is an object
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Mosquitto {
  port: number;
  url: string;
  /** Stops the process; resolves once it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port and config. */
  start(): Promise<void>;
  /** Stops it and removes its temp directory. */
  remove(): Promise<void>;
}


/** The mosquitto and mosquitto_passwd binaries: on PATH, else where Debian installs them. */
function binary(name: string, debianDir: string): string {
  if (spawnSync(name, ['-h']).error === undefined) return name;
  const path = join(debianDir, name);
  if (spawnSync(path, ['-h']).error === undefined) return path;
  throw new Error(`${name} is not installed (Debian: apt-get install mosquitto)`);
}

/** Starts mosquitto on a free port of 127.0.0.1; with `users`, anonymous access is off. */
export async function startMosquitto(opts: { users?: Record<string, string>; port?: number } = {}): Promise<Mosquitto> {
  const mosquitto = binary('mosquitto', '/usr/sbin');
  const dir = mkdtempSync(join(tmpdir(), 'edgeld-mosquitto-'));
  const port = opts.port ?? await freePort();
  const lines = [
    // NOTE: run as root, mosquitto drops to user `mosquitto`, which cannot read this 0700 directory.
    `user ${userInfo().username}`,
    `listener ${port} 127.0.0.1`,
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
  ];
  if (opts.users) {
    const pw = join(dir, 'passwd');
    writeFileSync(pw, '', { mode: 0o600 });
    for (const [user, pass] of Object.entries(opts.users)) {
      const r = spawnSync(binary('mosquitto_passwd', '/usr/bin'), ['-b', pw, user, pass], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
    }
    lines.push('allow_anonymous false', `password_file ${pw}`);
  } else {
    lines.push('allow_anonymous true');
  }
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, lines.join('\n') + '\n');

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async (): Promise<void> => {
    const proc = spawn(mosquitto, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    let err = '';
    await within(new Promise<void>((resolve, reject) => {
      proc.stderr!.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        if (/ running\b/.test(err)) resolve();
      });
      void exited.then(() => reject(new Error(`mosquitto exited at start:\n${err}`)));
    }), 10_000, `mosquitto to start:\n${err}`);
  };
  const stop = async (): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await within(exited, 10_000, 'mosquitto to stop');
  };
  await start();
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    stop,
    start,
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
