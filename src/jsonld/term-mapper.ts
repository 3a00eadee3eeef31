// Run-time term expansion and IRI compaction over precomputed term maps: Map look-ups only, with
// the few computed compactions memoized in a bounded map. Mirrors jsonld's IRI expansion/compaction.

import { SPECIFIC_ACCESS_POLICY, type TermMapper } from '../ngsi/index.js';
import { createLru } from '../lib/index.js';
import { compareShortestLeast, type TermMaps } from './term-maps.js';

const COMPACTION_MEMO_SIZE = 2048;

/**
 * Members the broker itself defines, known even when the request context does not define them:
 * `specificAccessPolicy` is an entity member of the authorization model (interface §2.1, §2.6).
 * A context that defines the term wins.
 */
const BUILTIN_TERMS = new Map<string, string>([['specificAccessPolicy', SPECIFIC_ACCESS_POLICY]]);
const BUILTIN_IRIS = new Map<string, string>([...BUILTIN_TERMS].map(([t, i]) => [i, t]));

/**
 * jsonld's absolute-IRI test: a scheme (or `_` for blank nodes), a colon, no whitespace.
 * NOTE: jsonld writes the scheme class as `+-.`, a range that also admits a comma; kept identical.
 */
const ABSOLUTE_IRI = /^([A-Za-z][A-Za-z0-9+,\-.]*|_):[^\s]*$/;
/** Strings that look like keywords but are not: JSON-LD ignores them. */
const KEYWORD_LIKE = /^@[a-zA-Z]+$/;

/**
 * Expands a vocabulary-relative term (JSON-LD 1.1 API §4.2 IRI expansion, vocab = true): a defined
 * term → its IRI; `prefix:suffix` with a prefix-capable term → expanded; an absolute IRI → itself;
 * otherwise @vocab + term. NOTE: terms mapped to null and keyword-like strings, which JSON-LD drops,
 * come back unchanged (they are not IRIs, so the domain rejects them).
 */
export function expandTermWith(maps: TermMaps, term: string): string {
  const iri = maps.terms.get(term);
  if (iri !== undefined) return iri;
  const builtin = BUILTIN_TERMS.get(term);
  if (builtin !== undefined && !maps.defined.has(term)) return builtin;
  if (maps.defined.has(term) || KEYWORD_LIKE.test(term)) return term;
  const colon = term.indexOf(':');
  if (colon > 0) {
    const prefix = term.slice(0, colon);
    const suffix = term.slice(colon + 1);
    if (prefix === '_' || suffix.startsWith('//')) return term;
    const prefixIri = maps.expansionPrefixes.get(prefix);
    if (prefixIri !== undefined) return prefixIri + suffix;
    if (ABSOLUTE_IRI.test(term)) return term;
  }
  return maps.vocab === undefined ? term : maps.vocab + term;
}

/**
 * Compacts an IRI with no deciding term definition, in jsonld's order: vocab-relative when the IRI
 * extends @vocab and the rest is not a term; else the shortest (then least) compact IRI; else the IRI.
 */
function compactWithoutTerm(maps: TermMaps, iri: string): string {
  if (iri.startsWith('@')) return iri;
  const vocab = maps.vocab;
  if (vocab !== undefined && iri !== vocab && iri.startsWith(vocab)) {
    const suffix = iri.slice(vocab.length);
    if (!maps.defined.has(suffix)) return suffix;
  }
  let choice: string | undefined;
  for (const [term, prefixIri] of maps.compactionPrefixes) {
    if (iri.length <= prefixIri.length || !iri.startsWith(prefixIri)) continue;
    const curie = term + ':' + iri.slice(prefixIri.length);
    if (!maps.defined.has(curie) && (choice === undefined || compareShortestLeast(curie, choice) < 0)) choice = curie;
  }
  return choice ?? iri;
}

/** A TermMapper over fixed maps. */
export function createTermMapper(maps: TermMaps): TermMapper {
  const memo = createLru<string, string>(COMPACTION_MEMO_SIZE);
  return {
    expandTerm: (term) => expandTermWith(maps, term),
    compactIri: (iri) => {
      const term = maps.preferred.get(iri);
      if (term !== undefined) return term;
      let compacted = memo.get(iri);
      if (compacted === undefined) {
        compacted = compactWithoutTerm(maps, iri);
        const builtin = BUILTIN_IRIS.get(iri);
        if (builtin !== undefined && compacted === iri && !maps.defined.has(builtin)) compacted = builtin;
        memo.set(iri, compacted);
      }
      return compacted;
    },
  };
}
