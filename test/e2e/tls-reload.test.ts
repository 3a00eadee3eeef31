// End-to-end, the real process with HTTPS and MQTT over wss: SIGHUP (systemctl reload) loads a
// renewed certificate without stopping the process; a keep-alive connection opened before goes on with
// the old certificate while new connections get the new one, on the HTTPS port and on the MQTT pair's.

import { Agent } from 'node:https';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../auth/support.js';
import { httpsRequest, makeTestCerts, peerFingerprint } from '../helpers/certs.js';
import { tempDir } from '../helpers/broker.js';
import { killedAfterEach, startBrokerProcess, within } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-tls-');
afterAll(() => dir.remove());
const running = killedAfterEach();

describe('certificate reload of the running process', () => {
  it('takes a renewed certificate on SIGHUP and keeps serving, keep-alive connections included', async () => {
    const certs = makeTestCerts(`${dir.path}/certs`);
    const p = await startBrokerProcess({
      STORAGE_DIR: `${dir.path}/data`,
      SERVER_TLS_KEY: certs.key, SERVER_TLS_CERT: certs.cert,
      MQTT_TLS_KEY: certs.key, MQTT_TLS_CERT: certs.cert, MQTT_WS_PORT: '0',
    });
    running.add(p);
    const wsPort = Number(/"mqttWs":"[^"]*:(\d+)"/.exec(p.stderr())?.[1]);
    expect(p.stderr()).toContain('"https":true');
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.ca });
    try {
      const oldPrint = certs.fingerprint();
      expect((await httpsRequest(keepAlive, p.port, '/ngsi-ld/v1/types')).fingerprint).toBe(oldPrint);
      certs.renew();
      const newPrint = certs.fingerprint();
      p.child.kill('SIGHUP');
      // NOTE: the watch of the files may reload first; the signal reloads whatever the files hold.
      const signalled = (listener: string) => p.stderr().split('\n').some((l) => l.includes('"msg":"tls certificate reloaded"')
        && l.includes(`"listener":"${listener}"`) && l.includes('"cause":"signal"') && l.includes(newPrint));
      await waitUntil(() => signalled('https') && signalled('mqtt'), 5_000, 'the reload lines of SIGHUP');
      expect(await peerFingerprint(p.port, certs.ca)).toBe(newPrint);
      expect(await peerFingerprint(wsPort, certs.ca)).toBe(newPrint);
      const again = await httpsRequest(keepAlive, p.port, '/ngsi-ld/v1/types');
      expect(again).toMatchObject({ status: 200, reusedSocket: true, fingerprint: oldPrint });
      expect(p.child.exitCode).toBeNull();
    } finally {
      keepAlive.destroy();
    }
    p.child.kill('SIGTERM');
    expect(await within(p.exited, 10_000, 'SIGTERM')).toBe(0);
    running.delete(p);
  });

  it('says there is nothing to reload on SIGHUP without TLS, and keeps running', async () => {
    const p = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/plain` });
    running.add(p);
    p.child.kill('SIGHUP');
    await waitUntil(() => p.stderr().includes('SIGHUP: no TLS certificate to reload'), 5_000, 'the SIGHUP line');
    const res = await fetch(`${p.base}/ngsi-ld/v1/types`);
    expect(res.status).toBe(200);
  });
});
