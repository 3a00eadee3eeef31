// Serving the dashboard (src/http/routes/dashboard.ts): redirects, caching headers, gzip, 304,
// 404 for anything else under /ui/ and no way out of the asset directory, the option that turns it
// off, nothing read before the first request; and MQTT over WebSocket at /mqtt on the HTTP port.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildUi } from '../../scripts/build-ui.mjs';
import { acceptsGzip } from '../../src/http/routes/dashboard.js';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import { createBroker, type Broker } from '../../src/server.js';
import { T0, testConfig, type ConfigPatch } from '../helpers/broker.js';
import { connectClient, endClient, subscribe } from '../helpers/mqtt.js';
import { startUiBroker, useUiHarness } from './support.js';

const NOT_FOUND = 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound';
const ui = useUiHarness();
const { cleanups } = ui;

/** The app in-process (no listener), over an in-memory database. */
function app(opts: { dir?: string; config?: ConfigPatch } = {}): Broker {
  const config = testConfig({ ...opts.config, log: { level: 'silent' } });
  const broker = createBroker({ config, log: silentLogger, clock: createFixedClock(T0), dbPath: ':memory:', dashboardDir: opts.dir ?? ui.dir });
  cleanups.push(() => broker.close());
  return broker;
}

async function get(b: Broker, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  return b.app.request(`http://127.0.0.1${path}`, { method, headers });
}

const assetsOf = (html: string): string[] => [...html.matchAll(/(?:src|href)="assets\/([^"]+)"/g)].map((m) => m[1] ?? '');

describe('GET / and /ui/', () => {
  it('redirects / and /ui to /ui/', async () => {
    const b = app();
    for (const path of ['/', '/ui']) {
      const res = await get(b, path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location'), path).toBe('/ui/');
    }
  });

  it('serves index.html revalidated on every load, with an ETag, a content security policy, and 304 when unchanged', async () => {
    const b = app();
    const res = await get(b, '/ui/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const html = await res.text();
    expect(html).toBe(readFileSync(join(ui.dir, 'index.html'), 'utf8'));
    expect(assetsOf(html)).toHaveLength(2);
    const again = await get(b, '/ui/', { 'If-None-Match': etag ?? '' });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('sends the gzip copy to clients that take gzip, and never to those that refuse it', async () => {
    const b = app();
    const plain = await (await get(b, '/ui/')).text();
    const zipped = await get(b, '/ui/', { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('Accept-Encoding');
    expect(gunzipSync(Buffer.from(await zipped.arrayBuffer())).toString('utf8')).toBe(plain);
    const refused = await get(b, '/ui/', { 'Accept-Encoding': 'gzip;q=0, identity' });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });
});

describe('acceptsGzip', () => {
  it('reads Accept-Encoding with its weights and the wildcard', () => {
    for (const yes of ['gzip', 'GZIP, br', 'br;q=1, gzip;q=0.5', '*', 'x-gzip', 'identity, *;q=0.1']) expect(acceptsGzip(yes), yes).toBe(true);
    for (const no of [undefined, '', 'br', 'identity', 'gzip;q=0', 'gzip;q=0, *', '*;q=0', 'gzip;q=zero']) expect(acceptsGzip(no), String(no)).toBe(false);
  });
});

describe('GET /ui/assets/{file}', () => {
  it('serves each content-hashed asset for a year, immutable, with its media type', async () => {
    const b = app();
    const names = assetsOf(await (await get(b, '/ui/')).text());
    for (const name of names) {
      expect(name).toMatch(/^main-[A-Z0-9]{8}\.(js|css)$/);
      const res = await get(b, `/ui/assets/${name}`, { 'Accept-Encoding': 'gzip' });
      expect(res.status, name).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).toBe(name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      const body = gunzipSync(Buffer.from(await res.arrayBuffer()));
      expect(body.equals(readFileSync(join(ui.dir, 'assets', name)))).toBe(true);
    }
  });

  it('answers 404 ProblemDetails for any other path under /ui/, and never a file outside the asset directory', async () => {
    const b = app();
    const paths = [
      '/ui/nope', '/ui/index.htm', '/ui/assets', '/ui/assets/', '/ui/assets/nope.js', '/ui/assets/main.js.gz', '/ui/assets/index.html',
      '/ui/assets/..%2Findex.html', '/ui/assets/..%2F..%2F..%2Fpackage.json', '/ui/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/ui/assets/..%5C..%5Cpackage.json', '/ui/..%2F..%2Fpackage.json', '/ui/%2e%2e/%2e%2e/package.json', '/ui/assets/%00',
      '/ui/assets/%E0%A4%A', `/ui/assets/${'a'.repeat(5000)}.js`,
    ];
    for (const path of paths) {
      const res = await get(b, path);
      expect(res.status, path).toBe(404);
      const body = await res.json() as { type: string };
      expect(body.type, path).toBe(NOT_FOUND);
    }
  });

  it('answers 405 to other methods and 400 to unknown parameters of config.json, never 500', async () => {
    const b = app();
    expect((await get(b, '/ui/', {}, 'POST')).status).toBe(405);
    expect((await get(b, '/ui/assets/x.js', {}, 'DELETE')).status).toBe(405);
    expect((await get(b, '/ui/config.json?x=1')).status).toBe(400);
  });
});

/** One raw HTTP/1.1 request over a socket, the target sent exactly as given (no URL normalisation). */
function rawGet(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
  });
}

/** A raw HTTP/1.1 request written as given; the answer once the server closes the connection. */
function rawRequest(port: number, request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
  });
}

/** The status of a WebSocket upgrade request (subprotocol mqtt) to `path`; the socket is closed once it is known. */
function upgradeStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n`
      + 'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n'));
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      if (status !== undefined) {
        socket.destroy();
        resolve(Number(status));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed without a status: ${text}`)));
  });
}

describe('path traversal over a real socket', () => {
  it('never serves a file outside the asset directory, whatever the request target', async () => {
    const b = await ui.broker();
    const port = Number(new URL(b.base).port);
    const secret = readFileSync(new URL('../../package.json', import.meta.url), 'utf8').slice(0, 40);
    for (const target of [
      '/ui/assets/../../../package.json', '/ui/../package.json', '/ui/assets/..%2f..%2f..%2fpackage.json', '/ui/assets/%2e%2e/%2e%2e/index.html',
      '/ui/assets/..\\..\\package.json', '/ui/assets//etc/passwd', '/ui/assets/%2fetc%2fpasswd',
    ]) {
      const res = await rawGet(port, target);
      expect([400, 404], target).toContain(res.status);
      expect(res.body, target).not.toContain(secret);
      expect(res.body, target).not.toContain('root:');
    }
  });
});

describe('dashboard.enabled', () => {
  it('when false, answers / and everything under /ui/ with 404 like any unknown path', async () => {
    const b = app({ config: { dashboard: { enabled: false } } });
    const unknown = await (await get(b, '/no-such-path')).json() as { type: string };
    for (const path of ['/', '/ui', '/ui/', '/ui/config.json', '/ui/assets/main-AAAAAAAA.js']) {
      const res = await get(b, path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { type: string }).type).toBe(unknown.type);
    }
  });
});

describe('lazy loading', () => {
  it('reads nothing at start: a page built after the broker started is served, and a missing one is a 404 that says so', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'edgeld-ui-late-')), 'ui');
    cleanups.push(() => rmSync(dirname(dir), { recursive: true, force: true }));
    const b = app({ dir });
    const missing = await get(b, '/ui/');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { title: string }).title).toBe('The dashboard is not built');
    await buildUi({ outDir: dir });
    expect((await get(b, '/ui/')).status).toBe(200);
  });
});

describe('/ui/config.json and MQTT over WebSocket on the HTTP port', () => {
  it('tells the page where notifications arrive, and takes MQTT over WebSocket at /mqtt only', async () => {
    const b = await ui.broker();
    const config = await b.call('GET', '/ui/config.json');
    expect(config.headers.get('cache-control')).toBe('no-store');
    expect(config.json).toEqual({ mqtt: { websocketPath: '/mqtt', notificationUri: `mqtt://127.0.0.1:${b.mqttPort}` } });

    const ws = b.base.replace('http:', 'ws:');
    const subscriber = await connectClient(`${ws}/mqtt`);
    cleanups.push(() => endClient(subscriber));
    const next = await subscribe(subscriber, 'edgeld/test');
    const publisher = await connectClient(`mqtt://127.0.0.1:${b.mqttPort}`);
    cleanups.push(() => endClient(publisher));
    await publisher.publishAsync('edgeld/test', 'over tcp, received over websocket', { qos: 1 });
    expect((await next()).payload.toString()).toBe('over tcp, received over websocket');

    expect(await upgradeStatus(Number(new URL(b.base).port), '/mqtt')).toBe(101);
    expect(await upgradeStatus(Number(new URL(b.base).port), '/other')).toBe(404);
  });

  it('serves a request asking for another protocol (Upgrade: h2c, as curl --http2 sends) as plain HTTP, body included', async () => {
    const b = await ui.broker();
    const port = Number(new URL(b.base).port);
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
    const entity = (id: string, pad: number): string =>
      JSON.stringify({ id, type: 'Room', note: { type: 'Property', value: 'x'.repeat(pad) } });
    const post = (body: string): string =>
      `POST /ngsi-ld/v1/entities HTTP/1.1\r\nHost: 127.0.0.1\r\n${h2c}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

    expect((await rawRequest(port, post(entity('urn:ngsi-ld:Room:small', 10)))).status).toBe(201);
    // A body far beyond the first packet: the rest is read from the socket up to its Content-Length.
    expect((await rawRequest(port, post(entity('urn:ngsi-ld:Room:large', 300_000)))).status).toBe(201);
    const listed = await rawRequest(port, `GET /ngsi-ld/v1/entities?type=Room&pick=id HTTP/1.1\r\nHost: 127.0.0.1\r\n${h2c}\r\n`);
    expect(listed.status).toBe(200);
    expect(listed.body).toContain('urn:ngsi-ld:Room:small');
    expect(listed.body).toContain('urn:ngsi-ld:Room:large');
    const large = await b.call('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:large');
    expect((large.json as { note: { value: string } }).note.value).toHaveLength(300_000);
    // A chunked body cannot be read once Node has let go of the connection: refused, nothing written.
    const chunked = await rawRequest(port, `POST /ngsi-ld/v1/entities HTTP/1.1\r\nHost: 127.0.0.1\r\n${h2c}Content-Type: application/json\r\n`
      + `Transfer-Encoding: chunked\r\n\r\n${(entity('urn:ngsi-ld:Room:chunked', 1).length).toString(16)}\r\n${entity('urn:ngsi-ld:Room:chunked', 1)}\r\n0\r\n\r\n`);
    expect(chunked.status).toBe(501);
    expect(JSON.parse(chunked.body)).toMatchObject({ type: 'https://uri.etsi.org/ngsi-ld/errors/NotImplemented' });
    expect((await b.call('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Room:chunked')).status).toBe(404);
  });

  it('stops promptly with a WebSocket client connected (upgraded sockets do not hold the HTTP drain)', async () => {
    const b = await startUiBroker({ uiDir: ui.dir });
    const client = await connectClient(`${b.base.replace('http:', 'ws:')}/mqtt`);
    cleanups.push(() => {
      client.end(true);
    });
    const started = Date.now();
    await b.close();
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses WebSocket upgrades when the dashboard is off', async () => {
    const b = await ui.broker({ dashboard: { enabled: false } });
    expect(await upgradeStatus(Number(new URL(b.base).port), '/mqtt')).toBe(404);
  });
});
