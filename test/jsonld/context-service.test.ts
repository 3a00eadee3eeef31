// The context service: what a resolved context says about its body/Link context, ImplicitlyCreated
// contexts, and listing, serving and deleting contexts (NGSI-LD §5.13).

import { afterEach, describe, expect, it } from 'vitest';
import { createFixedClock } from '../../src/lib/index.js';
import { BadRequestDataError, CORE_CONTEXT_URL } from '../../src/ngsi/index.js';
import { HOSTED_CONTEXT_PATH } from '../../src/jsonld/index.js';
import {
  START, createFixtureFetch, createMemoryPersistence, createTestService, readJsonObject, startLocalServer,
  type LocalServer,
} from './support.js';

const SENSOR_CONTEXT = JSON.stringify(readJsonObject('contexts/smart-data-models.jsonld'));
const INLINE = { ex: 'https://example.org/ns#', serial: 'ex:serialNumber' };
let server: LocalServer | undefined;

async function serveSensorContext(): Promise<LocalServer> {
  server = await startLocalServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/ld+json' }).end(SENSOR_CONTEXT);
  });
  return server;
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('resolve', () => {
  it('gives the core context when the client gives none', async () => {
    const service = createTestService();
    const resolved = await service.resolve(undefined);
    expect(resolved).toBe(service.core);
    expect(resolved).toMatchObject({ bodyContext: CORE_CONTEXT_URL, linkUrl: CORE_CONTEXT_URL, hostedId: undefined });
    expect(await service.resolve([])).toBe(service.core);
  });

  it('processes the core after one client URL, which is the Link URL and is echoed as given', async () => {
    const url = (await serveSensorContext()).url + 'sdm.jsonld';
    const service = createTestService();
    const resolved = await service.resolve(url);
    expect(resolved).toMatchObject({ bodyContext: url, processed: [url, CORE_CONTEXT_URL], linkUrl: url, hostedId: undefined });
    expect(await service.resolve(url)).toBe(resolved);
    const listed = await service.resolve([url, CORE_CONTEXT_URL]);
    expect(listed).toMatchObject({ bodyContext: [url, CORE_CONTEXT_URL], processed: [url, CORE_CONTEXT_URL], linkUrl: url });
    expect((await service.resolve([url])).bodyContext).toEqual([url]);
  });

  it('keeps the client order and adds no second core URL when the client lists it', async () => {
    const resolved = await createTestService().resolve([CORE_CONTEXT_URL, INLINE]);
    expect(resolved.bodyContext).toEqual([CORE_CONTEXT_URL, INLINE]);
    expect(resolved.linkUrl).toBeUndefined();
  });

  it('registers an inline context as ImplicitlyCreated under a deterministic id', async () => {
    const persistence = createMemoryPersistence();
    const service = createTestService({ persistence });
    const resolved = await service.resolve(INLINE);
    expect(resolved.linkUrl).toBeUndefined();
    expect(resolved.hostedId).toMatch(/^[0-9a-f]{32}$/);
    expect(resolved.bodyContext).toEqual(INLINE);
    expect(resolved.processed).toEqual([INLINE, CORE_CONTEXT_URL]);
    expect(await service.resolve({ serial: 'ex:serialNumber', ex: 'https://example.org/ns#' })).toBe(resolved);
    expect((await service.resolve([INLINE])).hostedId).toBe(resolved.hostedId);
    expect((await createTestService().resolve(INLINE)).hostedId).toBe(resolved.hostedId);

    const id = resolved.hostedId ?? '';
    expect(persistence.getById(id)).toMatchObject({ kind: 'ImplicitlyCreated', url: HOSTED_CONTEXT_PATH + id, createdAt: START });
    expect(service.get(id)).toEqual({ '@context': [INLINE, CORE_CONTEXT_URL] });
  });

  it('resolves a Link to a hosted context locally, also after a restart', async () => {
    const persistence = createMemoryPersistence();
    const fixtureFetch = createFixtureFetch();
    const { hostedId } = await createTestService({ persistence }).resolve(INLINE);
    const service = createTestService({ persistence, fetch: fixtureFetch.fetch });
    const resolved = await service.resolve(`http://gateway:1026${HOSTED_CONTEXT_PATH}${hostedId ?? ''}`);
    expect(resolved.expandTerm('serial')).toBe('https://example.org/ns#serialNumber');
    expect(fixtureFetch.calls).toEqual([]);
  });
});

describe('list, get and delete', () => {
  it('lists the bundled contexts as Hosted and fetched ones as Cached with usage', async () => {
    const clock = createFixedClock(START);
    const service = createTestService({ clock });
    const url = (await serveSensorContext()).url + 'sdm.jsonld';
    await service.resolve(url);
    clock.advance(5000);
    await service.resolve(url);
    await service.resolve(INLINE);

    const hosted = service.list({ kind: 'Hosted' });
    expect(hosted.map((c) => c.url)).toContain(CORE_CONTEXT_URL);
    expect(service.list({ kind: 'Cached' })).toEqual([
      { id: expect.stringMatching(/^[0-9a-f]{32}$/), url, kind: 'Cached', createdAt: START, lastUsage: START + 5000, numberOfHits: 2 },
    ]);
    expect(service.list({ kind: 'ImplicitlyCreated' })).toHaveLength(1);
    expect(service.list({})).toHaveLength(hosted.length + 2);
  });

  it('serves contexts by id or URL, the core context as bundled', async () => {
    const service = createTestService();
    const url = (await serveSensorContext()).url + 'sdm.jsonld';
    await service.resolve(url);
    const [cached] = service.list({ kind: 'Cached' });
    expect(service.get(cached?.id ?? '')).toEqual(JSON.parse(SENSOR_CONTEXT));
    expect(service.get(url)).toEqual(JSON.parse(SENSOR_CONTEXT));
    const core = service.list({ kind: 'Hosted' }).find((c) => c.url === CORE_CONTEXT_URL);
    expect(service.get(core?.id ?? '')).toEqual(readJsonObject('../../contexts/ngsi-ld-core-context-v1.9.jsonld'));
    expect(service.get('unknown')).toBeUndefined();
  });

  it('refuses to delete the core context', async () => {
    const service = createTestService();
    const core = service.list({ kind: 'Hosted' }).find((c) => c.url === CORE_CONTEXT_URL);
    await expect(service.delete(CORE_CONTEXT_URL)).rejects.toBeInstanceOf(BadRequestDataError);
    await expect(service.delete(core?.id ?? '')).rejects.toBeInstanceOf(BadRequestDataError);
    expect(await service.delete('unknown')).toBe(false);
  });

  it('deletes a Cached context, which the next resolution fetches again', async () => {
    const persistence = createMemoryPersistence();
    const service = createTestService({ persistence });
    const local = await serveSensorContext();
    const url = local.url + 'sdm.jsonld';
    await service.resolve(url);
    expect(await service.delete(url)).toBe(true);
    expect(service.list({ kind: 'Cached' })).toEqual([]);
    expect(persistence.get(url)).toBeUndefined();
    await service.resolve(url);
    expect(local.hits).toHaveLength(2);
  });

  it('reloads a Cached context on request, and refuses to reload an ImplicitlyCreated one', async () => {
    const service = createTestService();
    const local = await serveSensorContext();
    const url = local.url + 'sdm.jsonld';
    await service.resolve(url);
    expect(await service.delete(url, { reload: true })).toBe(true);
    expect(local.hits).toHaveLength(2);
    expect(service.list({ kind: 'Cached' })).toHaveLength(1);

    const { hostedId } = await service.resolve(INLINE);
    await expect(service.delete(hostedId ?? '', { reload: true })).rejects.toBeInstanceOf(BadRequestDataError);
    expect(await service.delete(hostedId ?? '')).toBe(true);
    expect(service.get(hostedId ?? '')).toBeUndefined();
  });
});
