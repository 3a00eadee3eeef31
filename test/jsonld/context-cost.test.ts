// Contexts whose processing cost would stall the broker (jsonld copies the active context for each
// scoped context: cost ≈ term definitions × scoped contexts) are refused before jsonld runs.

import { describe, expect, it } from 'vitest';
import { BadRequestDataError } from '../../src/ngsi/index.js';
import { createTestService } from './support.js';

const scopedTerms = (n: number): Record<string, unknown> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, { '@id': `https://example.org/s${i}`, '@context': { x: 'https://example.org/x' } }]));
const plainTerms = (n: number): Record<string, unknown> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, `https://example.org/p${i}`]));

describe('context processing cost', () => {
  it('refuses many scoped contexts, or a few among very many terms, with 400 BadRequestData at once', async () => {
    for (const ctx of [scopedTerms(2_000), { ...plainTerms(60_000), ...scopedTerms(64) }]) {
      await expect(createTestService().resolve(ctx)).rejects.toBeInstanceOf(BadRequestDataError);
    }
  });

  it('processes ordinary contexts: hundreds of terms, a few scoped ones', async () => {
    const resolved = await createTestService().resolve({ ...plainTerms(500), ...scopedTerms(10) });
    expect(resolved.expandTerm('p499')).toBe('https://example.org/p499');
    expect(resolved.expandTerm('s9')).toBe('https://example.org/s9');
  });
});
