// The fast path against jsonld on every entity fixture: expandTerm agrees with jsonld.expand and
// compactIri with jsonld.compact, with each fixture's own context and with the core context alone.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CORE_CONTEXT_URL, type TermMapper } from '../../src/ngsi/index.js';
import type { ContextInput, ContextService } from '../../src/jsonld/index.js';
import { compactDocument, expandDocument, isJsonObject, type DocumentLoader, type JsonLdObject } from '../../src/jsonld/jsonld-api.js';
import {
  asArray, createFixtureDocumentLoader, createFixtureFetch, createTestService, entityFixtureNames,
  expandedFixturePath, readJsonObject,
} from './support.js';

/** Set to regenerate the committed `<name>.expanded.jsonld` files from jsonld. */
const UPDATE = process.env['EDGELD_UPDATE_FIXTURES'] === '1';
/** NGSI-LD members whose string values are expanded as vocabulary terms (`@type: @vocab`). */
const VOCAB_VALUED = new Set(['vocab', 'objectType']);

const isNode = (v: unknown): v is JsonLdObject => isJsonObject(v) && !('@value' in v) && !('@list' in v);
/** A node object without @id: the value shape of NGSI-LD attributes, for which compactIri is defined. */
const isAttributeNode = (v: unknown): v is JsonLdObject => isNode(v) && !('@id' in v);

function expandedArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function checkExpansion(mapper: TermMapper, compact: JsonLdObject, expanded: JsonLdObject, path: string): void {
  const byIri = new Map<string, string[]>();
  for (const name of Object.keys(compact).filter((k) => k !== '@context')) {
    const iri = mapper.expandTerm(name);
    byIri.set(iri, [...(byIri.get(iri) ?? []), name]);
  }
  expect([...byIri.keys()].sort(), path).toEqual(Object.keys(expanded).sort());
  if ('type' in compact) {
    expect(asArray(compact['type']).map((t) => mapper.expandTerm(String(t))), `${path} type`).toEqual(expanded['@type']);
  }
  for (const [iri, names] of byIri) {
    const [name] = names;
    if (name === undefined || names.length > 1 || iri.startsWith('@')) continue;
    const c = asArray(compact[name]);
    const e = expandedArray(expanded[iri]);
    if (VOCAB_VALUED.has(name)) {
      expect(c.map((v) => mapper.expandTerm(String(v))), `${path}/${name}`).toEqual(e.map((v) => isJsonObject(v) ? v['@id'] : v));
    }
    if (!e.every(isNode) || !c.every(isJsonObject)) continue;
    expect(c.length, `${path}/${name}`).toBe(e.length);
    c.forEach((ci, i) => {
      const ei = e[i];
      if (isJsonObject(ci) && isJsonObject(ei)) checkExpansion(mapper, ci, ei, `${path}/${name}[${i}]`);
    });
  }
}

function checkCompaction(mapper: TermMapper, expanded: JsonLdObject, compacted: JsonLdObject, path: string): number {
  const keys = Object.keys(compacted).filter((k) => k !== '@context');
  expect(keys.length, `${path} keys`).toBe(Object.keys(expanded).length);
  let checked = 0;
  for (const [iri, values] of Object.entries(expanded)) {
    if (iri === '@type') {
      const types = expandedArray(values).map((t) => mapper.compactIri(String(t)));
      expect(types, `${path} type`).toEqual(asArray(compacted[mapper.compactIri('@type')]));
      checked += types.length;
      continue;
    }
    const instances = expandedArray(values);
    if (iri.startsWith('@') || instances.length === 0 || !instances.every(isAttributeNode)) continue;
    const key = mapper.compactIri(iri);
    expect(keys, `${path}: ${iri}`).toContain(key);
    checked += 1;
    const c = asArray(compacted[key]);
    expect(c.length, `${path}/${key}`).toBe(instances.length);
    instances.forEach((ei, i) => {
      const ci = c[i];
      if (isJsonObject(ei) && isJsonObject(ci)) checked += checkCompaction(mapper, ei, ci, `${path}/${key}[${i}]`);
    });
  }
  return checked;
}

function contextOf(doc: JsonLdObject): ContextInput {
  const ctx = doc['@context'];
  if (typeof ctx === 'string' || isJsonObject(ctx)) return ctx;
  if (Array.isArray(ctx)) return ctx.filter((c): c is string | JsonLdObject => typeof c === 'string' || isJsonObject(c));
  throw new Error('fixture without @context');
}

async function expandOne(doc: JsonLdObject, loader: DocumentLoader): Promise<JsonLdObject> {
  const [node, ...rest] = await expandDocument(doc, loader);
  if (!isJsonObject(node) || rest.length > 0) throw new Error('expected one expanded node');
  return node;
}

const names = entityFixtureNames();

describe('entity fixtures', () => {
  const loader = createFixtureDocumentLoader();
  let service: ContextService;

  beforeAll(() => {
    service = createTestService({ fetch: createFixtureFetch().fetch });
  });

  it('has at least six pairs', () => {
    expect(names.length).toBeGreaterThanOrEqual(6);
  });

  describe.each(names)('%s', (name) => {
    const compact = readJsonObject(`entities/${name}.jsonld`);

    it('the committed expansion is still what jsonld.expand produces', async () => {
      const expanded = await expandDocument(compact, loader);
      const path = expandedFixturePath(name);
      if (UPDATE) writeFileSync(path, JSON.stringify(expanded, null, 2) + '\n');
      expect(existsSync(path), `${name}.expanded.jsonld is missing: run with EDGELD_UPDATE_FIXTURES=1`).toBe(true);
      expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(expanded);
    });

    it('expandTerm gives the IRI jsonld.expand gives every type, attribute and sub-attribute name', async () => {
      const resolved = await service.resolve(contextOf(compact));
      const [expanded] = asArray(JSON.parse(readFileSync(expandedFixturePath(name), 'utf8')));
      if (!isJsonObject(expanded)) throw new Error('bad expanded fixture');
      checkExpansion(resolved, compact, expanded, name);
    });

    it('compactIri gives the key and type jsonld.compact writes for every IRI', async () => {
      const resolved = await service.resolve(contextOf(compact));
      const expanded = await expandOne(compact, loader);
      const compacted = await compactDocument(expanded, [...resolved.processed], loader);
      expect(checkCompaction(resolved, expanded, compacted, name)).toBeGreaterThan(2);
    });

    it('with the core context only, both agree with jsonld', async () => {
      const coreOnly = { ...compact, '@context': CORE_CONTEXT_URL };
      const expanded = await expandOne(coreOnly, loader);
      checkExpansion(service.core, coreOnly, expanded, `${name} (core)`);
      const compacted = await compactDocument(expanded, CORE_CONTEXT_URL, loader);
      expect(checkCompaction(service.core, expanded, compacted, `${name} (core)`)).toBeGreaterThan(2);
    });
  });
});
