// The narrow view of a JSON-LD context the domain needs: term <-> IRI, synchronous and cheap.
// jsonld/ builds implementations from processed contexts; the domain never sees JSON-LD itself.

import type { Iri } from './model.js';

export interface TermMapper {
  /** Expands a vocabulary-relative term (attribute name, type name, vocab value, value key). */
  expandTerm(term: string): Iri;
  /** Compacts an IRI back to the term the context gives it (or a compact IRI, or itself). */
  compactIri(iri: Iri): string;
}
