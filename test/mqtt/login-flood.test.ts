// Failed logins from many addresses: 1,000 loopback addresses each failing an MQTT CONNECT leave the
// lockout's table within application.lockout.max-entries, and a legitimate user from another address
// still gets a token; device secret checks beyond the global bound are refused with CONNACK 3 at once.

import { createConnection } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src/config/index.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { addUser, idpConfig } from '../helpers/identity.js';
import { parseExposition } from '../helpers/metrics.js';
import { within } from '../helpers/process.js';

type Lockout = Config['application']['lockout'];

let b: TestBroker | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

/** A broker with authentication on, its own identity provider trusted, and the lockout options given. */
async function start(lockout: Partial<Lockout>): Promise<{ broker: TestBroker; httpPort: number }> {
  const base = idpConfig();
  const defaults = defaultConfig().application;
  const application = {
    ...defaults, ...base.application,
    authentication: { ...defaults.authentication, enabled: true },
    lockout: { ...defaults.lockout, ...lockout },
  };
  b = await startTestBroker({ config: { ...base, application } });
  addUser(b.broker, 'alice', 'correct horse');
  return { broker: b, httpPort: await b.broker.listen() };
}

/** An MQTT 3.1.1 CONNECT with a user name and a password (clean session, keep-alive 60 s). */
function connectPacket(clientId: string, username: string, password: string): Buffer {
  const str = (s: string): Buffer => {
    const bytes = Buffer.from(s);
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, 0xc2, 0, 60]), str(clientId), str(username), str(password)]);
  return Buffer.concat([Buffer.from([0x10, body.length]), body]); // NOTE: bodies here are under 128 bytes: a one-byte remaining length
}

/** Sends a CONNECT from `localAddress` over a raw TCP connection; resolves with the CONNACK return code. */
function connackFrom(port: number, localAddress: string, packet: Buffer): Promise<number> {
  return within(new Promise<number>((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1', localAddress });
    let got = Buffer.alloc(0);
    socket.once('connect', () => socket.write(packet));
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 4) return;
      socket.destroy();
      resolve(got[3]!); // NOTE: CONNACK is 4 bytes, the return code last
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before CONNACK (from ${localAddress})`)));
  }), 10_000, `CONNACK for ${localAddress}`);
}

/** 127.0.<i / 250 + 10>.<i % 250 + 1>: a loopback address of its own per i. */
const addressOf = (i: number): string => `127.0.${Math.floor(i / 250) + 10}.${(i % 250) + 1}`;

async function token(port: number, username: string, password: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/auth/token`, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('failed logins from many addresses', () => {
  it('keeps the lockout table within its bound after 1,000 addresses fail, and a user from another address still gets a token', async () => {
    const { broker, httpPort } = await start({ maxEntries: 256 });
    const port = broker.broker.mqttPort!; // NOTE: listening above
    const codes: number[] = [];
    const ADDRESSES = 1_000;
    for (let at = 0; at < ADDRESSES; at += 25) {
      // A user name of its own each (not a device's: '@'), a password that is no token: refused without a hash check.
      const batch = Array.from({ length: 25 }, (_, j) => at + j).map((i) => connackFrom(port, addressOf(i), connectPacket(`c${i}`, `user@${i}`, 'guess')));
      codes.push(...await Promise.all(batch));
    }
    expect(codes.filter((c) => c === 4)).toHaveLength(ADDRESSES);
    const m = parseExposition((await broker.request('GET', '/metrics')).text);
    expect(m.value('edgeld_login_failures_total', { channel: 'mqtt' })).toBe(ADDRESSES);
    // Two keys per failure (address and name), 2,000 in all, kept within max-entries.
    expect(m.value('edgeld_login_limiter_entries')).toBeLessThanOrEqual(256);
    expect(m.value('edgeld_login_limiter_entries')).toBeGreaterThan(0);
    expect(await token(httpPort, 'alice', 'correct horse')).toBe(200);
  });

  it('refuses device CONNECTs beyond the bound on password checks with CONNACK 3, at once, and counts them', async () => {
    const { broker } = await start({ maxConcurrentChecks: 1, maxQueuedChecks: 0 });
    const port = broker.broker.mqttPort!; // NOTE: listening above
    // Six CONNECTs at once naming devices (none registered: each is checked against a decoy hash).
    const codes = await Promise.all(Array.from({ length: 6 }, (_, i) => connackFrom(port, addressOf(i), connectPacket(`dev${i}`, `dev${i}`, 'guess'))));
    expect(codes.filter((c) => c === 3).length).toBeGreaterThanOrEqual(1);
    expect(codes.every((c) => c === 3 || c === 4)).toBe(true);
    const m = parseExposition((await broker.request('GET', '/metrics')).text);
    const busy = codes.filter((c) => c === 3).length;
    expect(m.value('edgeld_mqtt_connects_busy_total')).toBe(busy);
    expect(m.value('edgeld_password_checks_refused_total')).toBe(busy);
    // Refused unheard: not failed logins.
    expect(m.value('edgeld_login_failures_total', { channel: 'mqtt' })).toBe(6 - busy);
  });
});
