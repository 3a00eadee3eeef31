// Repeated failed MQTT logins: past the threshold of a user name, CONNECTs are refused unheard
// with CONNACK 3 (server unavailable), answered late; others still connect, and the failures and
// refusals are counted in the metrics.

import { afterEach, describe, expect, it } from 'vitest';
import { startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { connectClient, refusedWith } from '../helpers/mqtt.js';
import { defaultConfig } from '../../src/config/index.js';

// NOTE: only the lockout group: startAuthBroker fills in the authentication group.
const lockout = (over: Partial<ReturnType<typeof defaultConfig>['application']['lockout']>) => ({
  application: { lockout: { ...defaultConfig().application.lockout, ...over } },
});

describe('MQTT CONNECT lockout', () => {
  let b: AuthBroker | undefined;
  afterEach(async () => {
    await b?.close();
    b = undefined;
  });

  it('refuses a user name past its failures with CONNACK 3 after a delay, while another client connects', async () => {
    b = await startAuthBroker({ config: { ...lockout({ nameFailures: 2, addressFailures: 100, baseDelay: 150, maxDelay: 150 }) } });
    await b.broker.listen();
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    const bad = { username: 'dashboard', password: 'not a token' };
    await expect(connectClient(url, bad, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
    await expect(connectClient(url, bad, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
    // Now the name must wait: even a valid token is not looked at, and the answer comes late.
    const started = performance.now();
    await expect(connectClient(url, { username: 'dashboard', password: await b.token('alice') }, 3_000)).rejects.toMatchObject({ code: refusedWith(3) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(120);
    const other = await connectClient(url, { username: 'alice', password: await b.token('alice') });
    expect(other.connected).toBe(true);
    await other.endAsync();
    const metrics = (await b.request('GET', '/metrics')).text;
    expect(metrics).toMatch(/^edgeld_login_failures_total\{channel="mqtt"\} 2$/m);
    expect(metrics).toMatch(/^edgeld_login_refusals_total\{channel="mqtt"\} 1$/m);
  });

  it('does not hold back CONNECTs when application.lockout.enabled is off', async () => {
    b = await startAuthBroker({ config: { ...lockout({ enabled: false, nameFailures: 1 }) } });
    await b.broker.listen();
    const url = `mqtt://127.0.0.1:${b.broker.mqttPort}`;
    for (let i = 0; i < 3; i++) await expect(connectClient(url, { username: 'dashboard', password: 'nope' }, 3_000)).rejects.toMatchObject({ code: refusedWith(4) });
    const ok = await connectClient(url, { username: 'dashboard', password: await b.token('alice') });
    await ok.endAsync();
  });
});
