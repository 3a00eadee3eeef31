// MQTT over TLS and over wss (mqtt.tls-key / mqtt.tls-cert): the WebSocket port serves wss when the
// pair is set; both refuse TLS 1.1; a new pair in the files is taken for new connections (TLS port and wss) while clients
// connected before stay connected and keep publishing; a pair that does not load leaves the old one.

import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { capturingLogger, waitUntil } from '../auth/support.js';
import { connectTls, makeTestCerts, peerFingerprint, type TestCerts } from '../helpers/certs.js';
import { startTestBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { connectClient } from '../helpers/mqtt.js';

const dir = tempDir('edgeld-mqtt-tls-');
afterAll(() => dir.remove());

let certs: TestCerts;
let t: TestBroker;
let logged: ReturnType<typeof capturingLogger>;
let clients: MqttClient[];
let caseNo = 0;

beforeEach(async () => {
  certs = makeTestCerts(`${dir.path}/case${caseNo++}`);
  logged = capturingLogger();
  clients = [];
  t = await startTestBroker({ log: logged.log, config: { mqtt: { tlsPort: 0, wsPort: 0, tlsKey: certs.key, tlsCert: certs.cert } } });
  await t.broker.listen();
});
afterEach(async () => {
  for (const c of clients) c.end(true);
  await t.close();
});

async function client(url: string): Promise<MqttClient> {
  const c = await connectClient(url, { ca: certs.ca, rejectUnauthorized: true, servername: 'localhost' }, 5_000);
  clients.push(c);
  return c;
}

const tlsUrl = (): string => `mqtts://127.0.0.1:${t.broker.mqttTlsPort}`;
const wssUrl = (): string => `wss://localhost:${t.broker.mqttWsPort}/`;

describe('MQTT over wss on mqtt.ws-port', () => {
  it('serves wss with the MQTT pair, and refuses plain ws there', async () => {
    const secure = await client(wssUrl());
    await secure.publishAsync('ngsi/default/wss1/attrs', JSON.stringify({ temperature: 3 }), { qos: 1 });
    const res = await t.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent('urn:ngsi-ld:Device:wss1')}`);
    expect(res.json.temperature.value).toBe(3);
    await expect(connectClient(`ws://127.0.0.1:${t.broker.mqttWsPort}/`, {}, 2_000)).rejects.toThrow();
  });
});

describe('TLS versions of the MQTT listeners', () => {
  it('refuses TLS 1.1 on the TLS port and on wss', async () => {
    for (const port of [t.broker.mqttTlsPort!, t.broker.mqttWsPort!]) {
      // NOTE: the client is allowed TLS 1.0/1.1 (OpenSSL's security level 0), so the refusal is the server's.
      const err = await connectTls(port, certs.ca, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })
        .then(() => undefined, (e: Error & { code?: string }) => e);
      expect(err?.code, String(port)).toMatch(/ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION|ERR_SSL_UNSUPPORTED_PROTOCOL/);
    }
    const tls12 = await connectTls(t.broker.mqttTlsPort!, certs.ca, { maxVersion: 'TLSv1.2' });
    expect(tls12.getProtocol()).toBe('TLSv1.2');
    tls12.destroy();
  });
});

describe('MQTT certificate reload on file change', () => {
  it('gives new TLS and wss connections the new certificate; clients connected before keep publishing', async () => {
    const before = await client(tlsUrl());
    const beforeWs = await client(wssUrl());
    const oldPrint = certs.fingerprint();
    expect(await peerFingerprint(t.broker.mqttTlsPort!, certs.ca)).toBe(oldPrint);
    certs.renew();
    const newPrint = certs.fingerprint();
    await waitUntil(async () => (await peerFingerprint(t.broker.mqttTlsPort!, certs.ca)) === newPrint, 5_000, 'the new certificate on the TLS port');
    expect(await peerFingerprint(t.broker.mqttWsPort!, certs.ca)).toBe(newPrint);
    // Connected before the reload: still connected, publishes still taken.
    expect(before.connected && beforeWs.connected).toBe(true);
    await before.publishAsync('ngsi/default/tls2/attrs', JSON.stringify({ temperature: 5 }), { qos: 1 });
    await beforeWs.publishAsync('ngsi/default/tls3/attrs', JSON.stringify({ temperature: 6 }), { qos: 1 });
    const after = await client(tlsUrl());
    await after.publishAsync('ngsi/default/tls4/attrs', JSON.stringify({ temperature: 7 }), { qos: 1 });
    for (const [dev, value] of [['tls2', 5], ['tls3', 6], ['tls4', 7]] as const) {
      const res = await t.request('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(`urn:ngsi-ld:Device:${dev}`)}`);
      expect(res.json.temperature.value, dev).toBe(value);
    }
    expect(logged.lines.some((l) => l.includes('tls certificate reloaded') && l.includes('"listener":"mqtt"') && l.includes(newPrint))).toBe(true);
  });

  it('keeps the certificate in use when the new files do not load, and logs an error naming the options', async () => {
    const oldPrint = certs.fingerprint();
    certs.breakCert();
    await waitUntil(() => logged.lines.some((l) => l.includes('"level":"error"') && l.includes('mqtt.tls-key, mqtt.tls-cert')), 5_000, 'the error line');
    expect(await peerFingerprint(t.broker.mqttTlsPort!, certs.ca)).toBe(oldPrint);
    expect(await peerFingerprint(t.broker.mqttWsPort!, certs.ca)).toBe(oldPrint);
    const c = await client(tlsUrl());
    expect(c.connected).toBe(true);
  });
});
