// Plain look-up tables built once from a processed (active) context: term → IRI, compact-IRI
// prefixes, @vocab, and IRI → the term JSON-LD compaction picks. Built on a cache miss only.

import type { ActiveContext, TermDefinition } from './jsonld-api.js';

export interface TermMaps {
  /** Term → IRI (or keyword) for every term with an IRI mapping. */
  readonly terms: ReadonlyMap<string, string>;
  /** Every defined term, including those mapped to null. */
  readonly defined: ReadonlySet<string>;
  /** Prefix-capable terms → IRI, for expanding `prefix:suffix`. */
  readonly expansionPrefixes: ReadonlyMap<string, string>;
  /** [term, IRI] pairs compaction may use as compact-IRI prefixes. */
  readonly compactionPrefixes: ReadonlyArray<readonly [string, string]>;
  /** IRI → the key compaction writes for a node-object value, wherever term definitions decide it. */
  readonly preferred: ReadonlyMap<string, string>;
  readonly vocab: string | undefined;
}

/** Term maps before the IRIs with several terms are settled, and those IRIs. */
export interface DraftTermMaps {
  maps: TermMaps;
  /** IRIs (not keywords) that two or more terms map to: jsonld itself must choose among them. */
  ambiguous: string[];
}

/** Containers a node object without @id/@index may be compacted into (JSON-LD 1.1 IRI compaction). */
const NODE_CONTAINERS = new Set(['@id', '@id@set', '@type', '@set@type', '@set', '@none', '@index', '@index@set']);

/** jsonld's term order: shortest first, then lexicographically least. */
export function compareShortestLeast(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

export function draftTermMaps(active: ActiveContext): DraftTermMaps {
  const terms = new Map<string, string>();
  const defined = new Set<string>();
  const expansionPrefixes = new Map<string, string>();
  const termsByIri = new Map<string, Array<[string, TermDefinition]>>();
  for (const term of [...active.mappings.keys()].sort(compareShortestLeast)) {
    defined.add(term);
    const def = active.mappings.get(term);
    const iri = def?.['@id'];
    if (def === null || def === undefined || typeof iri !== 'string') continue;
    terms.set(term, iri);
    if (def._prefix === true) expansionPrefixes.set(term, iri);
    const list = termsByIri.get(iri);
    if (list) list.push([term, def]);
    else termsByIri.set(iri, [[term, def]]);
  }

  const preferred = new Map<string, string>();
  const compactionPrefixes: Array<readonly [string, string]> = [];
  const ambiguous: string[] = [];
  for (const [iri, list] of termsByIri) {
    if (iri.startsWith('@')) {
      const alias = list.find(([, def]) => isPlainAlias(def));
      if (alias) preferred.set(iri, alias[0]);
      continue;
    }
    addCompactionPrefixes(iri, list, compactionPrefixes);
    const only = list.length === 1 ? list[0] : undefined;
    if (only === undefined) ambiguous.push(iri);
    else if (isSelectableForNode(only[1])) preferred.set(iri, only[0]);
  }
  const maps: TermMaps = {
    terms, defined, expansionPrefixes, compactionPrefixes, preferred, vocab: active['@vocab'],
  };
  return { maps, ambiguous };
}

/** The maps with the compaction choices jsonld made for the ambiguous IRIs. */
export function settleTermMaps(draft: TermMaps, chosen: ReadonlyMap<string, string>): TermMaps {
  return { ...draft, preferred: new Map([...draft.preferred, ...chosen]) };
}

function containerKey(def: TermDefinition): string {
  const c = def['@container'];
  const list = Array.isArray(c) ? c.filter((x): x is string => typeof x === 'string') : typeof c === 'string' ? [c] : [];
  return list.length === 0 ? '@none' : [...list].sort().join('');
}

/**
 * Whether JSON-LD compaction may pick this term for a node-object value (JSON-LD 1.1 API §4.3 term
 * selection, with @type/@id as the type preference): a node container, and either no type or language
 * coercion, or @type @id / @none.
 */
function isSelectableForNode(def: TermDefinition): boolean {
  if (def.reverse === true || !NODE_CONTAINERS.has(containerKey(def))) return false;
  if ('@type' in def) return def['@type'] === '@id' || def['@type'] === '@none';
  return !('@language' in def) && !('@direction' in def);
}

/** A keyword alias compaction uses for the keyword itself (e.g. `id`, `type`). */
function isPlainAlias(def: TermDefinition): boolean {
  if (def.reverse === true || containerKey(def) !== '@none') return false;
  if ('@type' in def) return def['@type'] === '@none';
  return !('@language' in def) && !('@direction' in def);
}

/**
 * NOTE: jsonld only considers an IRI's terms as compact-IRI prefixes when the first of them (in
 * shortest-least order) has no colon; then every colon-free, prefix-capable term of it qualifies.
 */
function addCompactionPrefixes(
  iri: string, list: ReadonlyArray<[string, TermDefinition]>, out: Array<readonly [string, string]>,
): void {
  const first = list[0];
  if (first === undefined || first[1]._termHasColon === true) return;
  for (const [term, def] of list) {
    if (def._prefix === true && def._termHasColon !== true) out.push([term, iri]);
  }
}
