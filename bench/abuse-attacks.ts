// The attacks of the abuse lane, each from raw sockets bound to loopback addresses of their own (on
// Linux every 127.x.y.z is loopback, and the broker sees each as a client address): a PUBLISH
// announcing 200 MB before any CONNECT, failed logins on POST /auth/token, failed MQTT CONNECTs.

import { request } from 'node:http';
import { createConnection, type Socket } from 'node:net';

const MB = 1_048_576;
/** Longest an attempt is waited for: the lockout answers MQTT refusals late on purpose, the attacker gives up. */
const HTTP_TIMEOUT_MS = 10_000;

/** What the attackers got, by outcome (`400`, `429`, `connack 4`, `no answer in time`, `error`, ...). */
export type Outcomes = Record<string, number>;

export interface AttackResult {
  readonly outcomes: Outcomes;
  readonly durationMs: number;
}

/** 127.<i / 62,500 + 2>.<…>.<…>: the i-th attacker address, never 127.0.0.1 (the steady client's). */
export function attackerAddress(i: number): string {
  return `127.${Math.floor(i / 62_500) + 2}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;
}

/** A fixed header: the first byte and the remaining length as a variable byte integer [MQTT-2.2.3]. */
function fixedHeader(firstByte: number, remainingLength: number): Buffer {
  const bytes = [firstByte];
  let n = remainingLength;
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    bytes.push(b);
  } while (n > 0);
  return Buffer.from(bytes);
}

/**
 * One raw TCP connection to the MQTT port: a PUBLISH fixed header announcing 200 MB, no CONNECT,
 * then zeros in 1 MiB chunks for as long as the broker takes them; how much was written before it closed.
 */
export async function oversizedPublish(mqttPort: number): Promise<AttackResult & { written: number }> {
  const started = performance.now();
  const socket = createConnection({ port: mqttPort, host: '127.0.0.1', localAddress: attackerAddress(0) });
  socket.on('error', () => undefined);
  let isClosed = false;
  socket.once('close', () => {
    isClosed = true;
  });
  await new Promise<void>((resolve) => {
    socket.once('connect', () => resolve());
    socket.once('close', () => resolve());
  });
  const total = 200 * MB;
  const chunk = Buffer.alloc(MB);
  let written = 0;
  if (!isClosed) socket.write(fixedHeader(0x30, total));
  while (!isClosed && written < total) {
    const fits = socket.write(chunk);
    written += chunk.length;
    if (!fits) await drainedOrClosed(socket);
  }
  socket.destroy();
  const outcome = written < total ? 'closed by the broker' : 'all 200 MB accepted';
  return { outcomes: { [outcome]: 1 }, durationMs: performance.now() - started, written };
}

function drainedOrClosed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const go = (): void => {
      socket.off('drain', go);
      socket.off('close', go);
      resolve();
    };
    socket.once('drain', go);
    socket.once('close', go);
  });
}

/** Runs `attempt(i)` for i in [0, count) with `concurrency` in flight; counts the outcomes. */
async function attack(count: number, concurrency: number, attempt: (i: number) => Promise<string>): Promise<AttackResult> {
  const started = performance.now();
  const outcomes: Outcomes = {};
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const outcome = await attempt(i).catch((err: unknown) => `error ${err instanceof Error ? err.message : String(err)}`.slice(0, 60));
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { outcomes, durationMs: performance.now() - started };
}

/**
 * One password grant from `localAddress` on a connection of its own; resolves with the status, or
 * `no answer in time` when unanswered within `holdMs` (the attacker gives up and asks again).
 */
function tokenRequest(port: number, localAddress: string, username: string, holdMs: number): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'password', username, password: 'not the password' }).toString();
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port, path: '/auth/token', method: 'POST', localAddress, agent: false, timeout: HTTP_TIMEOUT_MS,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), connection: 'close' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      // A 429 says why: the lockout of its address or name, or every password check taken.
      res.once('end', () => resolve(res.statusCode === 429 ? `429 ${/in progress/.test(text) ? 'checks busy' : 'locked out'}` : String(res.statusCode)));
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve('no answer in time');
    }, holdMs);
    req.once('close', () => clearTimeout(timer));
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', reject);
    req.end(body);
  });
}

export interface LoginFlood {
  readonly count: number;
  readonly concurrency: number;
  /** Source addresses the attempts rotate through. */
  readonly addresses: number;
  /** How long an attempt waits for an answer the lockout holds back before giving up. */
  readonly holdMs: number;
}

/** Failed password grants on POST /auth/token, each for a user name of its own (so that the name lockout never stops it). */
export function httpLoginFlood(port: number, flood: LoginFlood): Promise<AttackResult> {
  return attack(flood.count, flood.concurrency, (i) => tokenRequest(port, attackerAddress(i % flood.addresses), `guess-${i}`, flood.holdMs));
}

/** An MQTT 3.1.1 CONNECT with a user name and a password (clean session, keep-alive 60 s); bodies under 128 bytes. */
function connectPacket(clientId: string, username: string, password: string): Buffer {
  const str = (s: string): Buffer => {
    const bytes = Buffer.from(s);
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, 0xc2, 0, 60]), str(clientId), str(username), str(password)]);
  return Buffer.concat([Buffer.from([0x10, body.length]), body]);
}

/** One CONNECT from `localAddress`: `connack <code>`, `closed`, or `no answer in time` when unanswered within `holdMs`. */
function mqttConnect(port: number, localAddress: string, packet: Buffer, holdMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1', localAddress });
    let got = Buffer.alloc(0);
    const end = (outcome: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => end('no answer in time'), holdMs);
    socket.once('connect', () => socket.write(packet));
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 4) end(`connack ${got[3]}`);
    });
    socket.once('error', () => end('error'));
    socket.once('close', () => end('closed'));
  });
}

/**
 * Failed MQTT CONNECTs, each naming a device of its own (none registered: each is checked against the
 * registry's decoy hash, as a real device's would be). An answer the lockout holds back longer than
 * `holdMs` is given up (counted as `no answer in time`): the attacker does not wait for it.
 */
export function mqttLoginFlood(mqttPort: number, flood: LoginFlood): Promise<AttackResult> {
  return attack(flood.count, flood.concurrency, (i) =>
    mqttConnect(mqttPort, attackerAddress(i % flood.addresses), connectPacket(`dev-${i}`, `dev-${i}`, 'not the secret'), flood.holdMs));
}
