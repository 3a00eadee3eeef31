// Term maps: the synchronous core maps equal jsonld's processing of the core context, and expandTerm /
// compactIri follow jsonld on prefixes, @vocab, full IRIs and IRIs that several terms share.

import { describe, expect, it } from 'vitest';
import {
  AUTHORIZATION_ONTOLOGY, CORE_CONTEXT_URL, DEFAULT_CONTEXT_VOCAB, LOCATION, NGSI_LD, attributeKindIri,
} from '../../src/ngsi/index.js';
import { loadBundledContexts } from '../../src/jsonld/bundled.js';
import { compileContext } from '../../src/jsonld/compile.js';
import { processCoreContextSync } from '../../src/jsonld/core-terms.js';
import { compactDocument, type JsonLdObject } from '../../src/jsonld/jsonld-api.js';
import { draftTermMaps } from '../../src/jsonld/term-maps.js';
import { FIXTURE_ORIGIN, createFixtureDocumentLoader, createFixtureFetch, createTestService } from './support.js';

const loader = createFixtureDocumentLoader();
const loadFixture = async (url: string): Promise<JsonLdObject> => (await loader(url)).document;

/** The key jsonld.compact writes for one IRI valued by a node object. */
async function jsonldKeyFor(iri: string, ctx: unknown): Promise<string> {
  const compacted = await compactDocument({ [iri]: [{ [NGSI_LD + 'hasValue']: [{ '@value': 1 }] }] }, ctx, loader);
  const [key, ...rest] = Object.keys(compacted).filter((k) => k !== '@context');
  if (key === undefined || rest.length > 0) throw new Error('expected one key');
  return key;
}

describe('core term maps', () => {
  it('built synchronously, equal the maps from jsonld processing the core context', async () => {
    const bundled = loadBundledContexts();
    const sync = draftTermMaps(processCoreContextSync(bundled.core.processing));
    const viaJsonld = await compileContext([CORE_CONTEXT_URL], loadFixture);
    expect(sync.ambiguous).toEqual([]);
    expect(sync.maps).toEqual(viaJsonld.maps);
  });

  it('expands core terms, prefixed names, full IRIs and undefined names like JSON-LD', () => {
    const { core } = createTestService();
    expect(core.expandTerm('type')).toBe('@type');
    expect(core.expandTerm('Property')).toBe(attributeKindIri('Property'));
    expect(core.expandTerm('location')).toBe(LOCATION);
    expect(core.expandTerm('ngsi-ld:calibrated')).toBe(NGSI_LD + 'calibrated');
    expect(core.expandTerm('temperature')).toBe(DEFAULT_CONTEXT_VOCAB + 'temperature');
    expect(core.expandTerm('https://example.org/ns#serial')).toBe('https://example.org/ns#serial');
    expect(core.expandTerm('urn:ngsi-ld:Thing:1')).toBe('urn:ngsi-ld:Thing:1');
    expect(core.expandTerm('_:b0')).toBe('_:b0');
  });

  it('compacts to terms, vocab-relative names, compact IRIs or the IRI like jsonld', async () => {
    const { core } = createTestService();
    const cases = [
      attributeKindIri('Relationship'), LOCATION, DEFAULT_CONTEXT_VOCAB + 'temperature', NGSI_LD + 'calibrated',
      NGSI_LD + 'hasValueList', NGSI_LD + 'observedAt', 'https://example.org/ns#serial', 'urn:ngsi-ld:Thing:1',
      AUTHORIZATION_ONTOLOGY + 'sub',
    ];
    for (const iri of cases) expect(core.compactIri(iri), iri).toBe(await jsonldKeyFor(iri, CORE_CONTEXT_URL));
    expect(core.compactIri(DEFAULT_CONTEXT_VOCAB + 'temperature')).toBe('temperature');
    expect(core.compactIri('@id')).toBe('id');
  });
});

describe('user term maps', () => {
  const tricky = {
    ex: 'https://example.org/ns#',
    e: 'https://example.org/',
    foo: 'https://example.org/foo',
    exFoo: { '@id': 'ex:foo', '@type': '@id' },
    'ex:bar': { '@id': 'https://example.org/ns#bar', '@container': '@set' },
    listed: { '@id': 'ex:listed', '@container': '@list' },
    tagged: { '@id': 'ex:listed', '@language': 'en' },
    indexed: { '@id': 'ex:indexed', '@container': '@index' },
    plainIndexed: 'ex:indexed',
    reversed: { '@reverse': 'ex:parent' },
    nothing: null,
    notPrefix: { '@id': 'https://other.example/', '@prefix': false },
    yesPrefix: { '@id': 'https://prefixed.example/path', '@prefix': true },
    temperature: 'https://example.org/temperature',
  };
  const ctx = [tricky, CORE_CONTEXT_URL];

  it('agree with jsonld.compact on every IRI, whichever term definitions share it', async () => {
    const resolved = await createTestService().resolve([tricky]);
    const iris = [
      'https://example.org/ns#foo', 'https://example.org/ns#bar', 'https://example.org/ns#listed',
      'https://example.org/ns#indexed', 'https://example.org/ns#parent', 'https://example.org/foo',
      'https://example.org/ns#other', 'https://example.org/other', 'https://other.example/x',
      'https://prefixed.example/path/x', DEFAULT_CONTEXT_VOCAB + 'foo', DEFAULT_CONTEXT_VOCAB + 'nothing',
      DEFAULT_CONTEXT_VOCAB + 'plain', 'https://example.org/temperature', NGSI_LD + 'hasObject',
    ];
    for (const iri of iris) expect(resolved.compactIri(iri), iri).toBe(await jsonldKeyFor(iri, ctx));
  });

  it('expand prefixes only through prefix-capable terms', async () => {
    const resolved = await createTestService().resolve([tricky]);
    expect(resolved.expandTerm('ex:foo')).toBe('https://example.org/ns#foo');
    expect(resolved.expandTerm('exFoo')).toBe('https://example.org/ns#foo');
    expect(resolved.expandTerm('yesPrefix:x')).toBe('https://prefixed.example/pathx');
    expect(resolved.expandTerm('notPrefix:x')).toBe('notPrefix:x');
    expect(resolved.expandTerm('temperature')).toBe('https://example.org/temperature');
    expect(resolved.expandTerm('nothing')).toBe('nothing');
  });

  it('pick what jsonld picks among synonyms, including no term at all', async () => {
    const service = createTestService({ fetch: createFixtureFetch().fetch });
    const resolved = await service.resolve(FIXTURE_ORIGIN + 'synonyms.jsonld');
    const brick = 'https://brickschema.org/schema/Brick#';
    expect(resolved.compactIri(brick + 'Air_Temperature')).toBe('roomTemperature');
    expect(resolved.compactIri(brick + 'Humidity')).toBe('hum');
    expect(resolved.compactIri(brick + 'Setpoint')).toBe('setpoint');
    expect(resolved.compactIri(brick + 'Occupancy')).toBe('brick:Occupancy');
    expect(resolved.expandTerm('airTemperature')).toBe(brick + 'Air_Temperature');
  });
});
