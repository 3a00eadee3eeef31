// The outbound client of broker-initiated fetches: which addresses are not public, the allow-list
// forms, refusals checked on the resolved address, redirects checked again at every hop, bodies and
// headers as fetch sends them. Local servers on 127.0.0.1 stand in for hosts on the LAN.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createHostAllowList, createOutboundFetch, isNonPublicAddress, OutboundRefusedError, parseHostAllowList,
} from '../../src/lib/index.js';

interface Local {
  port: number;
  origin: string;
  requests: Array<{ url: string; method: string; headers: IncomingMessage['headers']; body: string }>;
}

const servers: Server[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Local> {
  const requests: Local['requests'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      requests.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo; // NOTE: a TCP listen gives AddressInfo
  return { port, origin: `http://127.0.0.1:${port}`, requests };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  })));
});

const ok = (_req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
};

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0',
    '100.64.0.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::5', '::ffff:127.0.0.1', '::ffff:7f00:1',
    '::ffff:10.0.0.1', '64:ff9b::7f00:1', 'ff02::1', 'not-an-address',
  ])('refuses %s', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '172.32.0.1', '172.15.255.255', '192.169.0.1', '1.1.1.1', '2001:4860:4860::8888', '2a00:1450::1'])('lets %s through', (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});

describe('host allow-list', () => {
  it('takes hosts, host:port, addresses, [v6]:port and CIDR ranges', () => {
    expect(parseHostAllowList(' ctx.lan, ctx.lan:8080 ,127.0.0.1,127.0.0.1:81,[::1]:82,::1,192.168.1.0/24,fd00::/8,,'))
      .toEqual(['ctx.lan', 'ctx.lan:8080', '127.0.0.1', '127.0.0.1:81', '[::1]:82', '::1', '192.168.1.0/24', 'fd00::/8']);
  });

  it.each(['a b', 'host/8', '10.0.0.0/33', 'h:0', 'h:70000', '[ctx.lan]:80', 'http://ctx.lan/'])('refuses the entry %s', (entry) => {
    expect(() => parseHostAllowList(entry)).toThrow();
  });

  it('matches names on the URL host, addresses and ranges on the resolved address, and ports when named', () => {
    const list = createHostAllowList(['ctx.lan', '127.0.0.1:81', '192.168.1.0/24'], false);
    expect(list.allows('ctx.lan', 9, '10.0.0.1')).toBe(true);
    expect(list.allows('CTX.lan', 9, '10.0.0.1')).toBe(true);
    expect(list.allows('localhost', 81, '127.0.0.1')).toBe(true);
    expect(list.allows('localhost', 82, '127.0.0.1')).toBe(false);
    expect(list.allows('printer', 631, '192.168.1.7')).toBe(true);
    expect(list.allows('nas', 80, '192.168.2.7')).toBe(false);
    expect(list.allows('example.org', 443, '93.184.215.14')).toBe(false);
    expect(createHostAllowList([], true).allows('example.org', 443, '93.184.215.14')).toBe(true);
    expect(createHostAllowList([], true).allows('evil.example', 80, '127.0.0.1')).toBe(false);
    expect(createHostAllowList([], false).isClosed).toBe(true);
  });
});

describe('outbound fetch', () => {
  it('refuses a loopback address that is not listed, without connecting', async () => {
    const target = await serve(ok);
    const fetchOut = createOutboundFetch(createHostAllowList([], true));
    await expect(fetchOut(`${target.origin}/ctx.jsonld`)).rejects.toBeInstanceOf(OutboundRefusedError);
    expect(target.requests).toEqual([]);
  });

  it('checks the address a name resolves to: localhost is loopback', async () => {
    const target = await serve(ok);
    const fetchOut = createOutboundFetch(createHostAllowList([], true));
    await expect(fetchOut(`http://localhost:${target.port}/ctx.jsonld`)).rejects.toBeInstanceOf(OutboundRefusedError);
    expect(target.requests).toEqual([]);
  });

  it('fetches from a listed address, sending the headers given', async () => {
    const target = await serve(ok);
    const fetchOut = createOutboundFetch(createHostAllowList([`127.0.0.1:${target.port}`], false));
    const res = await fetchOut(`${target.origin}/ctx.jsonld?x=1`, { headers: { accept: 'application/ld+json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ ok: true });
    expect(target.requests[0]).toMatchObject({ url: '/ctx.jsonld?x=1', method: 'GET', headers: { accept: 'application/ld+json', host: `127.0.0.1:${target.port}` } });
  });

  it('follows a redirect to a listed host', async () => {
    const target = await serve(ok);
    const hop = await serve((_req, res) => res.writeHead(301, { location: `${target.origin}/moved.jsonld` }).end());
    const fetchOut = createOutboundFetch(createHostAllowList(['127.0.0.1'], false));
    const res = await fetchOut(`${hop.origin}/ctx.jsonld`);
    expect(res.status).toBe(200);
    expect(target.requests.map((r) => r.url)).toEqual(['/moved.jsonld']);
  });

  it('refuses a redirect from a listed host to one that is not (another port), without connecting to it', async () => {
    const target = await serve(ok);
    const hop = await serve((_req, res) => res.writeHead(302, { location: `${target.origin}/ctx.jsonld` }).end());
    const fetchOut = createOutboundFetch(createHostAllowList([`127.0.0.1:${hop.port}`], true));
    await expect(fetchOut(`${hop.origin}/ctx.jsonld`)).rejects.toBeInstanceOf(OutboundRefusedError);
    expect(hop.requests).toHaveLength(1);
    expect(target.requests).toEqual([]);
  });

  it('gives a redirect back as is with redirect manual, and refuses it with redirect error', async () => {
    const hop = await serve((_req, res) => res.writeHead(307, { location: '/elsewhere' }).end());
    const fetchOut = createOutboundFetch(createHostAllowList(['127.0.0.1'], false));
    const manual = await fetchOut(`${hop.origin}/x`, { redirect: 'manual' });
    expect(manual.status).toBe(307);
    expect(manual.headers.get('location')).toBe('/elsewhere');
    await expect(fetchOut(`${hop.origin}/x`, { redirect: 'error' })).rejects.toThrow(/redirect/);
  });

  it('stops after 5 redirects', async () => {
    const loop = await serve((req, res) => res.writeHead(302, { location: `/${Number(req.url?.slice(1) ?? 0) + 1}` }).end());
    const fetchOut = createOutboundFetch(createHostAllowList(['127.0.0.1'], false));
    await expect(fetchOut(`${loop.origin}/0`)).rejects.toThrow(/more than 5 redirects/);
    expect(loop.requests).toHaveLength(6);
  });

  it('sends form bodies, and does not carry Authorization to another origin', async () => {
    const target = await serve(ok);
    const hop = await serve((_req, res) => res.writeHead(307, { location: `http://localhost:${target.port}/token` }).end());
    const fetchOut = createOutboundFetch(createHostAllowList(['127.0.0.1'], false));
    const res = await fetchOut(`${hop.origin}/token`, {
      method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }), headers: { authorization: 'Basic c2VjcmV0' },
    });
    expect(res.status).toBe(200);
    expect(hop.requests[0]).toMatchObject({ method: 'POST', body: 'grant_type=client_credentials', headers: { authorization: 'Basic c2VjcmV0' } });
    expect(hop.requests[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(target.requests[0]).toMatchObject({ method: 'POST', body: 'grant_type=client_credentials' });
    expect(target.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('refuses other schemes and URLs with credentials', async () => {
    const fetchOut = createOutboundFetch(createHostAllowList(['127.0.0.1'], true));
    await expect(fetchOut('file:///etc/passwd')).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(fetchOut('http://user:pw@127.0.0.1:9/')).rejects.toBeInstanceOf(OutboundRefusedError);
  });

  it('aborts on its signal while waiting for an answer', async () => {
    await serve(() => undefined);
    const silent = servers[0]?.address() as AddressInfo; // NOTE: a TCP listen gives AddressInfo
    const fetchOut = createOutboundFetch(createHostAllowList(['127.0.0.1'], false));
    await expect(fetchOut(`http://127.0.0.1:${silent.port}/`, { signal: AbortSignal.timeout(50) })).rejects.toThrow();
  });
});
