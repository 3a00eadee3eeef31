// The q, scopeQ and type-selection case tables through the SQL translation over a real store, and
// the query-values index kept in step with writes [§4.9, §4.17, §4.19].

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQ, parseScopeQ, parseTypeSelection, type EntityFilter } from '../../../src/ngsi/index.js';
import type { Store } from '../../../src/store/index.js';
import { entityId, Q_CASES, Q_FIXTURES } from '../../cases/q-cases.js';
import { SCOPE_CASES } from '../../cases/scope-cases.js';
import { TYPE_CASES } from '../../cases/type-cases.js';
import { mapper } from '../../ngsi/fake-mapper.js';
import { memoryStore } from '../helpers.js';

function listed(store: Store, filter: EntityFilter): { ids: string[]; count: number | undefined } {
  const out = store.entities.list({ tenant: '' }, { filters: [filter], limit: 1000, offset: 0, count: true });
  return { ids: out.entities.map((e) => e.id), count: out.count };
}

describe('q, scopeQ and type selection in SQL over the case tables', () => {
  let store: Store;
  beforeAll(() => {
    store = memoryStore();
    for (const e of Q_FIXTURES) store.entities.insert('', e);
    // Another tenant with the same data must never leak into the results.
    for (const e of Q_FIXTURES) store.entities.insert('other', e);
  });
  afterAll(() => store.close());

  it.each(Q_CASES)('q=$q selects $expect [§4.9]', ({ q, expect: want }) => {
    expect(listed(store, { kind: 'q', expr: parseQ(q, mapper) })).toEqual({ ids: want.map(entityId), count: want.length });
  });

  it.each(SCOPE_CASES)('scopeQ=$scopeQ selects $expect [§4.19]', ({ scopeQ, expect: want }) => {
    expect(listed(store, { kind: 'scopeQ', expr: parseScopeQ(scopeQ) })).toEqual({ ids: want.map(entityId), count: want.length });
  });

  it.each(TYPE_CASES)('type=$type selects $expect [§4.17]', ({ type, expect: want }) => {
    const expr = parseTypeSelection(type, mapper);
    if (expr === '*') throw new Error('not a selection');
    expect(listed(store, { kind: 'types', expr })).toEqual({ ids: want.map(entityId), count: want.length });
  });

  it('combines filters with AND and pages the result', () => {
    const filters: EntityFilter[] = [
      { kind: 'q', expr: parseQ('temperature>0', mapper) },
      { kind: 'scopeQ', expr: parseScopeQ('/Madrid/#') },
    ];
    const page = store.entities.list({ tenant: '' }, { filters, limit: 2, offset: 1, count: true });
    expect(page.entities.map((e) => e.id)).toEqual([2, 3].map(entityId));
    expect(page.count).toBe(4);
  });
});
