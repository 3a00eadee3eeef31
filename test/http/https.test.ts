// HTTPS on server.port (server.tls-key / server.tls-cert): requests work for a client trusting the
// local CA, TLS 1.1 and plain HTTP get nothing, parser errors get ProblemDetails and idle keep-alive
// connections do not hold a close, as over HTTP; the redirect port answers 308 to the HTTPS URL; the
// dashboard's MQTT over WebSocket path works over wss; a new pair in the files is taken for new
// connections while keep-alive ones opened before go on; a pair that does not load leaves the old one.

import { Agent } from 'node:https';
import { connect as connectTcp } from 'node:net';
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { capturingLogger, waitUntil } from '../auth/support.js';
import { connectTls, httpsRequest, makeTestCerts, peerFingerprint, type TestCerts } from '../helpers/certs.js';
import { startTestBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { connectClient } from '../helpers/mqtt.js';
import { within } from '../helpers/process.js';

const dir = tempDir('edgeld-https-');
afterAll(() => dir.remove());

let certs: TestCerts;
let t: TestBroker;
let agents: Agent[];
let logged: ReturnType<typeof capturingLogger>;
let caseNo = 0;
let boundPort = 0;
const httpsPort = (): number => boundPort;

beforeEach(async () => {
  certs = makeTestCerts(`${dir.path}/case${caseNo++}`);
  logged = capturingLogger();
  agents = [];
  t = await startTestBroker({
    log: logged.log,
    config: { server: { tlsKey: certs.key, tlsCert: certs.cert, redirectPort: 0 }, dashboard: { enabled: true } },
  });
  boundPort = await t.broker.listen();
});
afterEach(async () => {
  for (const a of agents) a.destroy();
  await t.close();
});

function agent(): Agent {
  const a = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.ca });
  agents.push(a);
  return a;
}

/** The raw bytes the server sends back to `text` on a plain TCP connection, until it closes. */
function rawExchange(portNumber: number, text: string): Promise<Buffer> {
  return within(new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connectTcp(portNumber, '127.0.0.1', () => socket.write(text));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  }), 5_000, 'plain exchange');
}

function plainGet(portNumber: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; location: string | undefined }> {
  return within(new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: portNumber, path, method, headers }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, location: res.headers.location });
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  }), 5_000, `plain ${method} ${path}`);
}

describe('HTTPS on server.port', () => {
  it('serves the API to a client that trusts the CA, with TLS 1.2 or later', async () => {
    const res = await httpsRequest(agent(), httpsPort(), '/ngsi-ld/v1/types');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'EntityTypeList' });
    const tls12 = await connectTls(httpsPort(), certs.ca, { maxVersion: 'TLSv1.2' });
    expect(tls12.getProtocol()).toBe('TLSv1.2');
    tls12.destroy();
    // A client that does not trust the CA gets no answer.
    await expect(httpsRequest(new Agent({ keepAlive: false }), httpsPort(), '/ngsi-ld/v1/types')).rejects.toThrow(/self-signed|unable to verify|certificate/i);
  });

  it('refuses TLS 1.1', async () => {
    // NOTE: the client is allowed TLS 1.0/1.1 (OpenSSL's security level 0), so the refusal is the server's.
    const err = await connectTls(httpsPort(), certs.ca, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })
      .then(() => undefined, (e: Error & { code?: string }) => e);
    expect(err?.code).toMatch(/ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION|ERR_SSL_UNSUPPORTED_PROTOCOL/);
    expect(logged.lines.some((l) => l.includes('https handshake failed'))).toBe(true);
  });

  it('gives a plain HTTP request on the HTTPS port no HTTP answer and closes it', async () => {
    const answer = await rawExchange(httpsPort(), 'GET /ngsi-ld/v1/types HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(answer.toString('latin1')).not.toMatch(/HTTP\/1\.[01]|EntityTypeList/);
  });

  it('answers what the HTTP parser refuses over TLS with ProblemDetails, as over plain HTTP', async () => {
    const socket = await connectTls(httpsPort(), certs.ca);
    const answer = await within(new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (c: Buffer) => { text += c.toString('latin1'); });
      socket.on('close', () => resolve(text));
      socket.write('GET /ngsi-ld/v1/types HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n');
    }), 5_000, 'the parser error answer');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('Content-Type: application/json');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, title: 'Malformed HTTP request' });
  });

  it('closes with idle keep-alive TLS connections open without waiting for them', async () => {
    const keepAlive = agent();
    expect((await httpsRequest(keepAlive, httpsPort(), '/ngsi-ld/v1/types')).status).toBe(200);
    const started = Date.now();
    await t.close();
    // server.shutdown-timeout is 10 s: an idle connection is closed at once, not waited for.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('answers every request on the redirect port with 308 to the same host and path over HTTPS', async () => {
    const redirect = t.broker.redirectPort!;
    expect(redirect).toBeGreaterThan(0);
    expect(await plainGet(redirect, '/ngsi-ld/v1/entities?type=Room&limit=5', { host: 'gateway.local:8080' }))
      .toEqual({ status: 308, location: `https://gateway.local:${httpsPort()}/ngsi-ld/v1/entities?type=Room&limit=5` });
    expect(await plainGet(redirect, '/ngsi-ld/v1/entities', { host: '[fe80::1]:80' }, 'POST'))
      .toEqual({ status: 308, location: `https://[fe80::1]:${httpsPort()}/ngsi-ld/v1/entities` });
    // No Host (HTTP/1.0) or an odd one: the address the request came in on.
    const raw = (await rawExchange(redirect, 'GET /ui/ HTTP/1.0\r\n\r\n')).toString('latin1');
    expect(raw).toMatch(/^HTTP\/1\.1 308 /);
    expect(raw).toContain(`\r\nLocation: https://127.0.0.1:${httpsPort()}/ui/\r\n`);
    expect(await plainGet(redirect, '/x', { host: 'evil.example/@other' })).toEqual({ status: 308, location: `https://127.0.0.1:${httpsPort()}/x` });
  });

  it('serves the dashboard\'s MQTT over WebSocket path as wss', async () => {
    const client = await connectClient(`wss://localhost:${httpsPort()}/mqtt`, { ca: certs.ca, protocolVersion: 4 });
    expect(client.connected).toBe(true);
    await client.endAsync();
  });
});

describe('certificate reload on file change', () => {
  it('gives new connections the new certificate while a keep-alive connection opened before goes on', async () => {
    const keepAlive = agent();
    const before = await httpsRequest(keepAlive, httpsPort(), '/ngsi-ld/v1/types');
    const oldPrint = certs.fingerprint();
    expect(before.fingerprint).toBe(oldPrint);
    certs.renew();
    const newPrint = certs.fingerprint();
    expect(newPrint).not.toBe(oldPrint);
    await waitUntil(async () => (await peerFingerprint(httpsPort(), certs.ca)) === newPrint, 5_000, 'the new certificate on a new connection');
    const after = await httpsRequest(keepAlive, httpsPort(), '/ngsi-ld/v1/types');
    expect(after).toMatchObject({ status: 200, reusedSocket: true, fingerprint: oldPrint });
    expect((await httpsRequest(agent(), httpsPort(), '/ngsi-ld/v1/types')).fingerprint).toBe(newPrint);
    expect(logged.lines.some((l) => l.includes('"msg":"tls certificate reloaded"') && l.includes('"listener":"https"') && l.includes(newPrint))).toBe(true);
  });

  it('keeps the certificate in use when the new files do not load, and logs an error', async () => {
    const oldPrint = certs.fingerprint();
    certs.breakCert();
    await waitUntil(() => logged.lines.some((l) => l.includes('"level":"error"') && l.includes('tls certificate not reloaded')), 5_000, 'the error line');
    const line = logged.lines.find((l) => l.includes('tls certificate not reloaded'))!;
    expect(line).toContain('server.tls-key, server.tls-cert');
    expect(await peerFingerprint(httpsPort(), certs.ca)).toBe(oldPrint);
    expect((await httpsRequest(agent(), httpsPort(), '/ngsi-ld/v1/types')).status).toBe(200);
    // Fixed files are taken again.
    certs.renew();
    await waitUntil(async () => (await peerFingerprint(httpsPort(), certs.ca)) === certs.fingerprint(), 5_000, 'the renewed certificate');
  });

  it('reloads on request (SIGHUP) even when the files did not change', async () => {
    expect(t.broker.reloadTls()).toBe(true);
    expect(logged.lines.some((l) => l.includes('tls certificate reloaded') && l.includes('"cause":"signal"'))).toBe(true);
  });
});
