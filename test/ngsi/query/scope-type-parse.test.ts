// Parsing scopeQ (NGSI-LD §4.19) and type selections (§4.17): the trees, and 400 errors naming
// the position.

import { describe, expect, it } from 'vitest';
import { BadRequestDataError, parseScopeQ, parseTypeSelection, TooComplexQueryError } from '../../../src/ngsi/index.js';
import { dc, EX, mapper } from '../fake-mapper.js';

function failure(parse: () => unknown): Error {
  try {
    parse();
  } catch (err) {
    if (err instanceof Error) return err;
  }
  throw new Error('parsed');
}

describe('parseScopeQ', () => {
  it('reads levels, + and # with ; binding tighter than , [§4.19]', () => {
    expect(parseScopeQ('/A/+/B,/C/#;/D')).toEqual({
      kind: 'or',
      terms: [
        { kind: 'scope', levels: ['A', '+', 'B'], descendants: false },
        { kind: 'and', terms: [{ kind: 'scope', levels: ['C'], descendants: true }, { kind: 'scope', levels: ['D'], descendants: false }] },
      ],
    });
    expect(parseScopeQ('/#')).toEqual({ kind: 'scope', levels: [], descendants: true });
  });

  it.each([
    ['', "expected a scope starting with '/' at position 1"],
    ['Madrid', "expected a scope starting with '/' at position 1"],
    ['/Madrid/', 'expected a scope level at position 9'],
    ['/A/#/B', "('#' is the last level) at position 5"],
    ['/A+', "('+' and '#' are whole levels) at position 3"],
    ['/A;', "expected a scope starting with '/' at position 4"],
    ['(/A', "expected ';', ',' or ')' at position 4"],
    ['/A /B', 'at position 3, found whitespace'],
  ])('refuses %j with 400 naming the position', (text, message) => {
    const err = failure(() => parseScopeQ(text));
    expect(err).toBeInstanceOf(BadRequestDataError);
    expect(err.message).toContain(message);
  });

  it('refuses nesting beyond the limit with TooComplexQuery', () => {
    expect(failure(() => parseScopeQ('('.repeat(20) + '/A' + ')'.repeat(20)))).toBeInstanceOf(TooComplexQueryError);
  });
});

describe('parseTypeSelection', () => {
  it('expands names; , and | are OR, ; is AND and binds tighter [§4.17]', () => {
    expect(parseTypeSelection('Building|Room;Sensor', mapper)).toEqual({
      kind: 'or',
      terms: [{ kind: 'type', iri: EX + 'Building' }, { kind: 'and', terms: [{ kind: 'type', iri: dc('Room') }, { kind: 'type', iri: dc('Sensor') }] }],
    });
    expect(parseTypeSelection('https://example.org/T', mapper)).toEqual({ kind: 'type', iri: 'https://example.org/T' });
  });

  it.each([
    ['', 'expected a type name at position 1'],
    ['Room,', 'expected a type name at position 6'],
    ['(Room', "expected ',', '|', ';' or ')' at position 6"],
    ['Room,*', "('*' stands alone for all types) at position 6"],
    ['Room)', "expected ',', '|', ';' or the end of the selection at position 5"],
    ['Ro"om', 'expected a type name without'],
  ])('refuses %j with 400 naming the position', (text, message) => {
    const err = failure(() => parseTypeSelection(text, mapper));
    expect(err).toBeInstanceOf(BadRequestDataError);
    expect(err.message).toContain(message);
  });
});
