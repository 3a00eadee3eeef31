// Loading contexts: bundled URLs never touch the network; remote contexts are fetched once (bounded),
// persisted, and served from persistence after a restart; failures become the right NGSI-LD errors.

import { afterEach, describe, expect, it } from 'vitest';
import {
  AUTHORIZATION_COMPOUND_CONTEXT_URL, AUTHORIZATION_CONTEXT_URL, BadRequestDataError, CORE_CONTEXT_URL,
  DEFAULT_CONTEXT_VOCAB, LOCATION, LdContextNotAvailableError, SUB,
} from '../../src/ngsi/index.js';
import {
  createFixtureFetch, createMemoryPersistence, createTestService, readJsonObject, startLocalServer, type LocalServer,
} from './support.js';
import { contextUnavailableDetail } from '../../src/jsonld/fetch-context.js';

const SENSOR_CONTEXT = JSON.stringify(readJsonObject('contexts/smart-data-models.jsonld'));
const servers: LocalServer[] = [];

async function serve(handler: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const server = await startLocalServer(handler);
  servers.push(server);
  return server;
}

/** A server that answers every path with the smart-data-models fixture context. */
const serveSensorContext = (): Promise<LocalServer> => serve((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/ld+json' }).end(SENSOR_CONTEXT);
});

/** The reason a context failed to load, which the error carries as its cause (for the log). */
function causeOf(err: unknown): string {
  return err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('bundled contexts', () => {
  it('resolve every core URL and the authorization contexts without fetching', async () => {
    const fixtureFetch = createFixtureFetch();
    const service = createTestService({ fetch: fixtureFetch.fetch });
    const v18 = CORE_CONTEXT_URL.replace('v1.9', 'v1.8');
    expect(await service.resolve(v18)).toBe(service.core);
    expect(await service.resolve([CORE_CONTEXT_URL.replace('https:', 'http:')])).toBe(service.core);
    const auth = await service.resolve(AUTHORIZATION_CONTEXT_URL);
    expect(auth.expandTerm('sub')).toBe(SUB);
    // The compound context lists the core context v1.8, which is the bundled core too.
    const compound = await service.resolve(AUTHORIZATION_COMPOUND_CONTEXT_URL);
    expect(compound.expandTerm('location')).toBe(LOCATION);
    expect(compound.compactIri(SUB)).toBe('sub');
    await service.resolve([{ ex: 'https://example.org/' }]);
    expect(fixtureFetch.calls).toEqual([]);
  });
});

describe('remote contexts', () => {
  it('are fetched once with a JSON-LD Accept header, then served from memory and persistence', async () => {
    const accepts: Array<string | undefined> = [];
    const server = await serve((req, res) => {
      accepts.push(req.headers.accept);
      res.writeHead(200, { 'content-type': 'application/ld+json' }).end(SENSOR_CONTEXT);
    });
    const persistence = createMemoryPersistence();
    const url = server.url + 'sdm.jsonld';
    const first = createTestService({ persistence });
    expect((await first.resolve(url)).expandTerm('NO2')).toBe('https://smartdatamodels.org/dataModel.Environment/NO2');
    await first.resolve([url, { extra: 'https://example.org/extra' }]);
    expect(server.hits).toEqual(['/sdm.jsonld']);
    expect(accepts).toEqual(['application/ld+json, application/json']);
    expect(persistence.get(url)?.kind).toBe('Cached');

    await server.close();
    const afterRestart = createTestService({ persistence });
    expect((await afterRestart.resolve(url)).expandTerm('NO2')).toBe('https://smartdatamodels.org/dataModel.Environment/NO2');
  });

  it('share one fetch between concurrent resolutions', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await serve((_req, res) => {
      void gate.then(() => res.writeHead(200).end(SENSOR_CONTEXT));
    });
    const service = createTestService();
    const url = server.url + 'slow.jsonld';
    const pending = [service.resolve(url), service.resolve(url), service.resolve([url, { a: 'https://example.org/a' }])];
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const [a, b, c] = await Promise.all(pending);
    expect(a).toBe(b);
    expect(c?.expandTerm('pm10')).toBe(a?.expandTerm('pm10'));
    expect(server.hits).toHaveLength(1);
  });

  type Answer = Parameters<Parameters<typeof startLocalServer>[0]>[1];
  /** Terms with scoped contexts inside scoped contexts, `levels` times: 2 levels of JSON nesting each. */
  const scopedChain = (levels: number): Record<string, unknown> => {
    let ctx: Record<string, unknown> = {};
    for (let k = 1; k <= levels; k++) ctx = { [`t${k}`]: { '@id': `https://example.org/t${k}`, '@context': ctx } };
    return ctx;
  };

  it('accept scoped contexts nested up to 64 levels of JSON', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end(JSON.stringify({ '@context': scopedChain(31) })));
    expect((await createTestService().resolve(server.url + 'ctx.jsonld')).expandTerm('t31')).toBe('https://example.org/t31');
  });

  it.each([
    ['a 404', 'answered 404', (res: Answer) => res.writeHead(404).end('{}')],
    ['a non-JSON body', 'not JSON', (res: Answer) => res.writeHead(200).end('<html></html>')],
    ['JSON without @context', 'with @context', (res: Answer) => res.writeHead(200).end('{"a":1}')],
    ['a body over the size cap', 'larger than', (res: Answer) => {
      res.writeHead(200);
      res.write('{"@context":{"a":"' + 'x'.repeat(40_000));
      res.end('"}}');
    }],
    ['a declared length over the size cap', 'larger than', (res: Answer) => {
      res.writeHead(200, { 'content-length': 40_000 }).end('{}');
    }],
    ['scoped contexts nested deeper than 64 levels (jsonld costs grow with the cube of it)', 'nests deeper than 64 levels', (res: Answer) => {
      res.writeHead(200).end(JSON.stringify({ '@context': scopedChain(32) }));
    }],
  ])('fail with LdContextNotAvailable on %s', async (_what, reason, answer) => {
    const server = await serve((_req, res) => answer(res));
    const service = createTestService({ maxBytes: 32 * 1024 });
    const url = server.url + 'ctx.jsonld';
    // One detail for the caller whatever went wrong; the reason is the cause, for the log.
    await expect(service.resolve(url)).rejects.toSatisfy(
      (err) => err instanceof LdContextNotAvailableError && err.detail === contextUnavailableDetail(url) && causeOf(err).includes(reason),
    );
  });

  it('fail with LdContextNotAvailable when the server does not answer in time', async () => {
    const server = await serve(() => undefined);
    const service = createTestService({ fetchTimeoutMs: 100 });
    const url = server.url + 'ctx.jsonld';
    await expect(service.resolve(url)).rejects.toSatisfy(
      (err) => err instanceof LdContextNotAvailableError && err.detail === contextUnavailableDetail(url) && causeOf(err).includes('within 100 ms'),
    );
  });

  it('fail with LdContextNotAvailable when the server is unreachable', async () => {
    const server = await serveSensorContext();
    const url = server.url + 'ctx.jsonld';
    await server.close();
    await expect(createTestService().resolve(url)).rejects.toBeInstanceOf(LdContextNotAvailableError);
  });

  it('fail with LdContextNotAvailable when a scoped context cannot be loaded', async () => {
    const server = await serveSensorContext();
    const url = server.url + 'ctx.jsonld';
    await server.close();
    const scoped = { thing: { '@id': 'https://example.org/thing', '@context': url } };
    await expect(createTestService().resolve(scoped)).rejects.toBeInstanceOf(LdContextNotAvailableError);
  });

  it('are refused without a fetch when remote contexts are disabled', async () => {
    const fixtureFetch = createFixtureFetch();
    const service = createTestService({ allowRemote: false, fetch: fixtureFetch.fetch });
    await expect(service.resolve('https://contexts.edgeld.test/smart-data-models.jsonld'))
      .rejects.toBeInstanceOf(LdContextNotAvailableError);
    expect(fixtureFetch.calls).toEqual([]);
  });
});

describe('invalid contexts', () => {
  it.each([
    ['a term with a non-string @id', 'invalid IRI mapping', { bad: { '@id': 5 } }],
    ['an unsupported @version', 'invalid @version value', { '@version': 2 }],
    ['a redefined protected core term', 'protected term redefinition', [CORE_CONTEXT_URL, { location: 'https://example.org/location' }]],
    ['a relative context URL', 'must be absolute', 'contexts/mine.jsonld'],
    ['a context that is a number', 'must be a URL', [42]],
  ])('fail with BadRequestData on %s', async (_what, reason, ctx) => {
    // NOTE: cast because the table deliberately holds inputs outside ContextInput.
    await expect(createTestService().resolve(ctx as never)).rejects.toSatisfy(
      (err) => err instanceof BadRequestDataError && (err.detail ?? '').includes(reason),
    );
  });

  it('fail with BadRequestData when a fetched context is invalid JSON-LD', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end('{"@context":{"bad":{"@id":true}}}'));
    await expect(createTestService().resolve(server.url + 'bad.jsonld')).rejects.toBeInstanceOf(BadRequestDataError);
  });

  it('let the core context win over a user term listed before it', async () => {
    const resolved = await createTestService().resolve({ location: 'https://example.org/location', temperature: 'https://example.org/t' });
    expect(resolved.expandTerm('location')).toBe(LOCATION);
    expect(resolved.expandTerm('temperature')).toBe('https://example.org/t');
    expect(resolved.expandTerm('humidity')).toBe(DEFAULT_CONTEXT_VOCAB + 'humidity');
  });
});
