// User @contexts: fetched once from a (local) remote server, persisted, served after a restart
// with the server gone; unreachable contexts give 503; the jsonldContexts resource.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import {
  startContextServer, startTestBroker, tempDir, USER_CONTEXT, type ContextServer,
} from '../../helpers/broker.js';

const REL = 'http://www.w3.org/ns/json-ld#context';
const link = (url: string): string => `<${url}>; rel="${REL}"; type="application/ld+json"`;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';

let ctxServer: ContextServer;
const dir = tempDir();

beforeAll(async () => {
  ctxServer = await startContextServer();
  ctxServer.set('/remote.jsonld', USER_CONTEXT);
});
afterAll(async () => {
  await ctxServer.close();
  dir.remove();
});

describe('remote contexts', () => {
  it('fetches once, then serves from the persisted cache after a restart with the server stopped', async () => {
    const dbPath = join(dir.path, 'edgeld.db');
    const url = ctxServer.url('/remote.jsonld');
    const first = await startTestBroker({ dbPath });
    const created = await first.request('POST', '/ngsi-ld/v1/entities', {
      body: { id: 'urn:ngsi-ld:Sensor:r1', type: 'Sensor', temperature: { type: 'Property', value: 1 } },
      headers: { Link: link(url) },
    });
    expect(created.status).toBe(201);
    const again = await first.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:r1', { headers: { Link: link(url) } });
    expect(again.json.type).toBe('Sensor');
    expect(ctxServer.hits.get('/remote.jsonld')).toBe(1);
    const listed = await first.request('GET', '/ngsi-ld/v1/jsonldContexts');
    expect(listed.json).toContain(url);
    await first.close();
    await ctxServer.close();

    const second = await startTestBroker({ dbPath });
    const res = await second.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:r1', { headers: { Link: link(url) } });
    expect(res.status).toBe(200);
    expect(res.json.type).toBe('Sensor');
    expect(res.json.temperature.value).toBe(1);
    await second.close();
    ctxServer = await startContextServer();
  });

  it('503 LdContextNotAvailable for an unreachable context', async () => {
    const b = await startTestBroker();
    const res = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:r1', { headers: { Link: link('http://127.0.0.1:9/none.jsonld') } });
    expect(res.status).toBe(503);
    expect(res.json.type).toBe(`${ERR}LdContextNotAvailable`);
    const missing = await b.request('POST', '/ngsi-ld/v1/entities', {
      body: { id: 'urn:ngsi-ld:Sensor:x', type: 'Sensor' }, headers: { Link: link(ctxServer.url('/missing.jsonld')) },
    });
    expect(missing.status).toBe(503);
    await b.close();
  });

  it('503 when remote contexts are switched off', async () => {
    const b = await startTestBroker({ config: { contexts: { allowRemote: false, allowedHosts: '' } } });
    const res = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:r1', { headers: { Link: link(ctxServer.url('/remote.jsonld')) } });
    expect(res.status).toBe(503);
    await b.close();
  });
});

describe('jsonldContexts resource', () => {
  it('hosts an inline context, links to it, serves it, and evicts it', async () => {
    const b = await startTestBroker();
    const created = await b.request('POST', '/ngsi-ld/v1/entities', {
      body: { id: 'urn:ngsi-ld:Sensor:i1', type: 'Sensor', '@context': USER_CONTEXT['@context'] },
      headers: { 'Content-Type': 'application/ld+json' },
    });
    expect(created.status).toBe(201);
    const listed = await b.request('GET', '/ngsi-ld/v1/jsonldContexts?details=true&kind=ImplicitlyCreated');
    expect(listed.status).toBe(200);
    expect(listed.json).toHaveLength(1);
    const id: string = listed.json[0].localId;
    const served = await b.request('GET', `/ngsi-ld/v1/jsonldContexts/${id}`);
    expect(served.status).toBe(200);
    // The hosted document is the whole context the request used: the inline part, then core.
    expect(served.json['@context']).toEqual([USER_CONTEXT['@context'], 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld']);
    // A client can use the hosted URL as its context: it resolves locally.
    const hostedUrl = `http://127.0.0.1/ngsi-ld/v1/jsonldContexts/${id}`;
    const read = await b.request('GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Sensor:i1', { headers: { Link: link(hostedUrl) } });
    expect(read.json.type).toBe('Sensor');
    expect(read.headers.get('link')).toBe(link(hostedUrl));
    expect((await b.request('DELETE', `/ngsi-ld/v1/jsonldContexts/${id}`)).status).toBe(204);
    expect((await b.request('GET', `/ngsi-ld/v1/jsonldContexts/${id}`)).status).toBe(404);
    expect((await b.request('DELETE', `/ngsi-ld/v1/jsonldContexts/${id}`)).status).toBe(404);
    await b.close();
  });

  it('lists the core context and refuses to delete it', async () => {
    const b = await startTestBroker();
    const listed = await b.request('GET', '/ngsi-ld/v1/jsonldContexts');
    const core = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';
    expect(listed.json).toContain(core);
    const res = await b.request('DELETE', `/ngsi-ld/v1/jsonldContexts/${encodeURIComponent(core)}`);
    expect(res.status).toBe(400);
    await b.close();
  });
});
