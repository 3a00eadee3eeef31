// Remote @contexts are fetched only from allowed hosts: a loopback URL (standing in for any host on
// the LAN) is refused on every path a client can name one, until contexts.allowed-hosts lists it;
// redirects are checked again; and the error is one detail whatever went wrong, so the broker
// cannot tell its caller which ports are open.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contextUnavailableDetail } from '../../../src/jsonld/fetch-context.js';
import {
  startContextServer, startTestBroker, USER_CONTEXT, type ContextServer, type TestBroker, type TestResponse,
} from '../../helpers/broker.js';
import { LD, minimalSubscription } from '../subscription/fixture.js';

const REL = 'http://www.w3.org/ns/json-ld#context';
const link = (url: string): string => `<${url}>; rel="${REL}"; type="application/ld+json"`;
const NOT_AVAILABLE = 'https://uri.etsi.org/ngsi-ld/errors/LdContextNotAvailable';

/** Every way a request names a context URL the broker then loads. */
const PATHS: Array<[string, (b: TestBroker, url: string) => Promise<TestResponse>]> = [
  ['a Link header', (b, url) => b.request('GET', '/ngsi-ld/v1/entities?type=Sensor', { headers: { Link: link(url) } })],
  ['an inline @context', (b, url) => b.request('POST', '/ngsi-ld/v1/entities', {
    body: { id: 'urn:ngsi-ld:Sensor:s1', type: 'Sensor', '@context': [url, { extra: 'https://example.org/extra' }] }, headers: LD,
  })],
  ['POST /jsonldContexts', (b, url) => b.request('POST', '/ngsi-ld/v1/jsonldContexts', { body: { '@context': url } })],
  ['a subscription jsonldContext', (b, url) => b.request('POST', '/ngsi-ld/v1/subscriptions', {
    body: { ...minimalSubscription(), jsonldContext: url }, headers: LD,
  })],
];

let ctxServer: ContextServer;
let b: TestBroker | undefined;

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // NOTE: a TCP listen gives AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The context server's port. */
const ctxPort = (): number => Number(new URL(ctxServer.url('/')).port);

function expectGenericRefusal(res: TestResponse, url: string): void {
  expect(res.status).toBe(503);
  expect(res.json).toMatchObject({ type: NOT_AVAILABLE, detail: contextUnavailableDetail(url) });
}

beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/ctx.jsonld', USER_CONTEXT);
  ctxServer.set('/gone.jsonld', { error: 'gone' }, 404);
  ctxServer.set('/plain.json', { not: 'a context' });
});
afterAll(() => ctxServer.close());
afterEach(async () => {
  await b?.close();
  b = undefined;
  ctxServer.hits.clear();
});

describe('a loopback context URL with no host listed', () => {
  it.each(PATHS)('is refused through %s: 503 with the generic detail, and nothing fetched', async (_what, send) => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: '' } } });
    const url = ctxServer.url('/ctx.jsonld');
    expectGenericRefusal(await send(b, url), url);
    expect(ctxServer.hits.size).toBe(0);
  });

  it('is refused by name too (localhost resolves to loopback)', async () => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: '' } } });
    const url = `http://localhost:${ctxPort()}/ctx.jsonld`;
    expectGenericRefusal(await PATHS[0]![1](b, url), url);
    expect(ctxServer.hits.size).toBe(0);
  });

  it('answers a closed port and an open one with the same detail', async () => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: '' } } });
    const closed = `http://127.0.0.1:${await closedPort()}/ctx.jsonld`;
    const open = ctxServer.url('/ctx.jsonld');
    const [onClosed, onOpen] = [await PATHS[0]![1](b, closed), await PATHS[0]![1](b, open)];
    expectGenericRefusal(onClosed, closed);
    expectGenericRefusal(onOpen, open);
  });
});

describe('a listed host', () => {
  it.each(PATHS)('is fetched through %s', async (_what, send) => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: `127.0.0.1:${ctxPort()}` } } });
    const res = await send(b, ctxServer.url('/ctx.jsonld'));
    expect(res.status).toBeLessThan(300);
    expect(ctxServer.hits.get('/ctx.jsonld')).toBe(1);
  });

  it('is fetched from with contexts.allow-remote off too', async () => {
    b = await startTestBroker({ config: { contexts: { allowRemote: false, allowedHosts: '127.0.0.0/8' } } });
    expect((await PATHS[0]![1](b, ctxServer.url('/ctx.jsonld'))).status).toBe(200);
  });

  it('gives the same detail for a closed port, an error status and a document that is no context', async () => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: '127.0.0.1' } } });
    const urls = [
      `http://127.0.0.1:${await closedPort()}/ctx.jsonld`, ctxServer.url('/gone.jsonld'), ctxServer.url('/plain.json'), ctxServer.url('/missing.jsonld'),
    ];
    for (const url of urls) expectGenericRefusal(await PATHS[0]![1](b, url), url);
  });
});

describe('redirects', () => {
  let redirector: Server;
  let redirectorOrigin: string;

  beforeAll(async () => {
    // Every path redirects to the context server: another port of the same address.
    redirector = createServer((_req, res) => res.writeHead(302, { location: ctxServer.url('/ctx.jsonld') }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectorOrigin = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`; // NOTE: a TCP listen gives AddressInfo
  });
  afterAll(() => new Promise<void>((resolve) => {
    redirector.closeAllConnections();
    redirector.close(() => resolve());
  }));

  it('from a listed host to one that is not (another port) are refused, and the target never asked', async () => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: new URL(redirectorOrigin).host } } });
    const url = `${redirectorOrigin}/elsewhere`;
    expectGenericRefusal(await PATHS[0]![1](b, url), url);
    expect(ctxServer.hits.size).toBe(0);
  });

  it('between listed hosts are followed', async () => {
    b = await startTestBroker({ config: { contexts: { allowedHosts: '127.0.0.1' } } });
    const res = await PATHS[0]![1](b, `${redirectorOrigin}/moved`);
    expect(res.status).toBe(200);
    expect(ctxServer.hits.get('/ctx.jsonld')).toBe(1);
  });
});
