// Repeated failed logins on POST /auth/token: past the threshold of a user name or of an address,
// attempts get 429 with Retry-After before any credential is checked, the wait doubling at each
// further failure; other addresses and users still get tokens; a successful login resets the name.

import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { defaultConfig, type Config } from '../../src/config/index.js';
import { startTestBroker, type TestBroker, type TestResponse } from '../helpers/broker.js';
import { addUser, idpConfig } from '../helpers/identity.js';

type Lockout = Config['application']['lockout'];
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

let b: TestBroker | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

async function start(lockout: Partial<Lockout> = {}): Promise<TestBroker> {
  const base = idpConfig();
  // NOTE: answered at once unless a test says otherwise: the holds are real time, the test clock is not.
  const application = { ...defaultConfig().application, ...base.application, lockout: { ...defaultConfig().application.lockout, maxAnswerDelay: 0, ...lockout } };
  b = await startTestBroker({ config: { ...base, application } });
  addUser(b.broker, 'alice', 'correct horse');
  addUser(b.broker, 'bob', 'battery staple');
  return b;
}

/** POST /auth/token from a client address, as Node's server hands the request to the app. */
async function login(broker: TestBroker, address: string, username: string, password: string): Promise<TestResponse> {
  const res = await broker.broker.app.request('http://127.0.0.1/auth/token', {
    method: 'POST', headers: FORM, body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  }, { incoming: { socket: { remoteAddress: address } } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) };
}

describe('POST /auth/token lockout', () => {
  it('answers 429 with Retry-After after the threshold of 20 wrong passwords, while another address and user gets a token', async () => {
    const broker = await start();
    const statuses: number[] = [];
    let last: TestResponse | undefined;
    for (let i = 0; i < 20; i++) {
      last = await login(broker, '192.168.1.66', 'alice', `guess ${i}`);
      statuses.push(last.status);
    }
    // application.lockout.name-failures (5) refusals, then 429 without checking the password.
    expect(statuses).toEqual([...Array<number>(5).fill(400), ...Array<number>(15).fill(429)]);
    expect(last?.headers.get('retry-after')).toBe('1');
    expect(last?.headers.get('cache-control')).toBe('no-store');
    expect(last?.json).toMatchObject({ error: 'temporarily_unavailable' });
    // Another address and user: a token. alice from there: her name still waits, even with her password.
    expect((await login(broker, '192.168.1.20', 'bob', 'battery staple')).status).toBe(200);
    expect((await login(broker, '192.168.1.20', 'alice', 'correct horse')).status).toBe(429);
    const metrics = (await broker.request('GET', '/metrics')).text;
    expect(metrics).toMatch(/^edgeld_login_failures_total\{channel="http"\} 5$/m);
    expect(metrics).toMatch(/^edgeld_login_refusals_total\{channel="http"\} 16$/m);
  });

  it('counts an address over every user name it tries', async () => {
    const broker = await start({ addressFailures: 4 });
    for (let i = 0; i < 4; i++) expect((await login(broker, '10.9.9.9', `user${i}`, 'wrong')).status).toBe(400);
    expect((await login(broker, '10.9.9.9', 'bob', 'battery staple')).status).toBe(429);
    expect((await login(broker, '10.9.9.10', 'bob', 'battery staple')).status).toBe(200);
  });

  it('doubles the wait at each failure after one, and a successful login resets the name', async () => {
    const broker = await start({ nameFailures: 3, addressFailures: 100 });
    for (let i = 0; i < 2; i++) expect((await login(broker, '10.0.0.1', 'alice', 'wrong')).status).toBe(400);
    expect((await login(broker, '10.0.0.1', 'alice', 'correct horse')).status).toBe(200);
    // Counted afresh: two more failures stay under the threshold.
    for (let i = 0; i < 2; i++) expect((await login(broker, '10.0.0.1', 'alice', 'wrong')).status).toBe(400);
    expect((await login(broker, '10.0.0.1', 'alice', 'correct horse')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await login(broker, '10.0.0.1', 'alice', 'wrong')).status).toBe(400);
    expect((await login(broker, '10.0.0.1', 'alice', 'wrong')).headers.get('retry-after')).toBe('1');
    broker.clock.advance(1_000);
    expect((await login(broker, '10.0.0.1', 'alice', 'wrong')).status).toBe(400);
    const next = await login(broker, '10.0.0.1', 'alice', 'correct horse');
    expect(next.status).toBe(429);
    expect(next.headers.get('retry-after')).toBe('2');
  });

  it('tells addresses apart on a real connection', async () => {
    const broker = await start({ nameFailures: 100, addressFailures: 2 });
    const port = await broker.broker.listen();
    const post = (localAddress: string, username: string, password: string) => new Promise<number>((resolve, reject) => {
      const body = new URLSearchParams({ grant_type: 'password', username, password }).toString();
      const req = httpRequest({ host: '127.0.0.1', port, path: '/auth/token', method: 'POST', localAddress, headers: { ...FORM, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      });
      req.once('error', reject);
      req.end(body);
    });
    expect(await post('127.0.0.2', 'alice', 'wrong')).toBe(400);
    expect(await post('127.0.0.2', 'alice', 'wrong')).toBe(400);
    expect(await post('127.0.0.2', 'bob', 'battery staple')).toBe(429);
    expect(await post('127.0.0.3', 'bob', 'battery staple')).toBe(200);
  });

  it('answers 429 unchecked, held back for its retry time, when every password check is taken and the queue is full, and counts it', async () => {
    const broker = await start({ maxConcurrentChecks: 1, maxQueuedChecks: 1, maxAnswerDelay: 1_000 });
    // Six logins at once, each from its own address and for its own name: one is checked, one waits, four are refused.
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => login(broker, `10.1.0.${i + 1}`, `user${i}`, 'wrong')));
    // The refusals wait their Retry-After (1 s) before they go: a flood cannot come straight back.
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    const busy = answers.filter((a) => a.status === 429);
    expect(answers.map((a) => a.status).sort()).toEqual([400, 400, 429, 429, 429, 429]);
    for (const a of busy) {
      expect(a.headers.get('retry-after')).toBe('1');
      expect(a.json).toMatchObject({ error: 'temporarily_unavailable', error_description: 'Too many logins in progress; retry after 1 s' });
    }
    const metrics = (await broker.request('GET', '/metrics')).text;
    expect(metrics).toMatch(/^edgeld_password_checks_refused_total 4$/m);
    expect(metrics).toMatch(/^edgeld_password_checks_running 0$/m);
    // Refused unheard: not failed logins, and the slots are free again.
    expect(metrics).toMatch(/^edgeld_login_failures_total\{channel="http"\} 2$/m);
    expect((await login(broker, '10.1.0.9', 'alice', 'correct horse')).status).toBe(200);
  });

  it('holds a 429 back for the wait, at most application.lockout.max-answer-delay', async () => {
    const broker = await start({ nameFailures: 1, baseDelay: 60_000, maxDelay: 60_000, maxAnswerDelay: 300 });
    expect((await login(broker, '10.2.0.1', 'alice', 'wrong')).status).toBe(400);
    const started = performance.now();
    const held = await login(broker, '10.2.0.1', 'alice', 'wrong');
    expect(held.status).toBe(429);
    expect(held.headers.get('retry-after')).toBe('60');
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('lets every attempt through when application.lockout.enabled is off', async () => {
    const broker = await start({ enabled: false, nameFailures: 1 });
    for (let i = 0; i < 3; i++) expect((await login(broker, '10.0.0.1', 'alice', 'wrong')).status).toBe(400);
    expect((await login(broker, '10.0.0.1', 'alice', 'correct horse')).status).toBe(200);
  });
});
