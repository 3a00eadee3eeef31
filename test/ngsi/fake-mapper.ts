// A small TermMapper for domain tests: a few user terms, the core terms the domain relies on, and
// the @vocab rule of the default context for everything else.

import { DEFAULT_CONTEXT_VOCAB, LOCATION, NGSI_LD, OBSERVATION_SPACE, OPERATION_SPACE, SCOPE } from '../../src/ngsi/index.js';
import type { TermMapper } from '../../src/ngsi/index.js';

export const EX = 'https://example.org/ns#';

const TERMS = new Map<string, string>([
  ['location', LOCATION],
  ['observationSpace', OBSERVATION_SPACE],
  ['operationSpace', OPERATION_SPACE],
  ['scope', SCOPE],
  ['unitCode', NGSI_LD + 'unitCode'],
  ['Building', EX + 'Building'],
  ['temperature', EX + 'temperature'],
  ['owner', EX + 'owner'],
]);
const REVERSE = new Map([...TERMS].map(([term, iri]) => [iri, term]));

export const mapper: TermMapper = {
  expandTerm: (term) => TERMS.get(term) ?? (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(term) ? term : DEFAULT_CONTEXT_VOCAB + term),
  compactIri: (iri) => REVERSE.get(iri) ?? (iri.startsWith(DEFAULT_CONTEXT_VOCAB) ? iri.slice(DEFAULT_CONTEXT_VOCAB.length) : iri),
};

/** The expanded IRI of a default-context term. */
export const dc = (term: string): string => DEFAULT_CONTEXT_VOCAB + term;

export const T0 = Date.UTC(2024, 0, 1, 0, 0, 0);
export const T1 = T0 + 60_000;
export const T2 = T0 + 120_000;
