// The q, scopeQ and type-selection case tables through the in-memory evaluators [§4.9, §4.17, §4.19].

import { describe, expect, it } from 'vitest';
import {
  evaluateQ, evaluateScopeQ, evaluateTypeSelection, matchesFilter, parseGeoQuery, parseQ, parseScopeQ, parseTypeSelection,
} from '../../../src/ngsi/index.js';
import { entityId, Q_CASES, Q_FIXTURES } from '../../cases/q-cases.js';
import { SCOPE_CASES } from '../../cases/scope-cases.js';
import { TYPE_CASES } from '../../cases/type-cases.js';
import { mapper } from '../fake-mapper.js';

const selected = (holds: (e: (typeof Q_FIXTURES)[number]) => boolean): string[] => Q_FIXTURES.filter(holds).map((e) => e.id);

describe('evaluateQ over the q case table', () => {
  it('has at least 90 cases over 12 fixtures', () => {
    expect(Q_CASES.length).toBeGreaterThanOrEqual(90);
    expect(Q_FIXTURES).toHaveLength(12);
  });

  it.each(Q_CASES)('q=$q selects $expect [§4.9]', ({ q, expect: want }) => {
    const expr = parseQ(q, mapper);
    expect(selected((e) => evaluateQ(expr, e))).toEqual(want.map(entityId));
    expect(selected((e) => matchesFilter({ kind: 'q', expr }, e) === true)).toEqual(want.map(entityId));
  });
});

describe('evaluateScopeQ over the scopeQ case table', () => {
  it.each(SCOPE_CASES)('scopeQ=$scopeQ selects $expect [§4.19]', ({ scopeQ, expect: want }) => {
    const expr = parseScopeQ(scopeQ);
    expect(selected((e) => evaluateScopeQ(expr, e.scope))).toEqual(want.map(entityId));
    expect(selected((e) => matchesFilter({ kind: 'scopeQ', expr }, e) === true)).toEqual(want.map(entityId));
  });
});

describe('evaluateTypeSelection over the type case table', () => {
  it.each(TYPE_CASES)('type=$type selects $expect [§4.17]', ({ type, expect: want }) => {
    const expr = parseTypeSelection(type, mapper);
    if (expr === '*') throw new Error('not a selection');
    expect(selected((e) => evaluateTypeSelection(expr, e.types))).toEqual(want.map(entityId));
    expect(selected((e) => matchesFilter({ kind: 'types', expr }, e) === true)).toEqual(want.map(entityId));
  });

  it('reads * alone as every type', () => {
    expect(parseTypeSelection('*', mapper)).toBe('*');
  });
});

describe('matchesFilter', () => {
  it('evaluates idPattern and leaves other filter kinds to their owners', () => {
    const [first] = Q_FIXTURES;
    if (!first) throw new Error('no fixture');
    expect(matchesFilter({ kind: 'idPattern', pattern: ':Q:0[1-3]$' }, first)).toBe(true);
    expect(matchesFilter({ kind: 'idPattern', pattern: ':Q:1' }, first)).toBe(false);
    const query = parseGeoQuery({ georel: 'near;maxDistance==10', geometry: 'Point', coordinates: '[0,0]' }, mapper);
    expect(matchesFilter({ kind: 'geo', query }, first)).toBeUndefined();
  });
});
