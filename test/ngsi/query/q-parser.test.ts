// Parsing q (NGSI-LD §4.9): the expanded AST, precedence, and 400 BadRequestData errors that name
// the 1-based position; TooComplexQuery above the limits.

import { describe, expect, it } from 'vitest';
import { BadRequestDataError, parseQ, Q_LIMITS, TooComplexQueryError } from '../../../src/ngsi/index.js';
import { dc, EX, mapper } from '../fake-mapper.js';

function failure(q: string): Error {
  try {
    parseQ(q, mapper);
  } catch (err) {
    if (err instanceof Error) return err;
  }
  throw new Error(`q=${q} parsed`);
}

describe('parseQ', () => {
  it('expands names in paths, sub-attributes and keys, keeping members and verbatim keys [§4.9]', () => {
    expect(parseQ('temperature.accuracy.observedAt>=2024-01-01T00:00:00Z', mapper)).toEqual({
      kind: 'compare',
      path: { attr: EX + 'temperature', subs: [dc('accuracy')], member: 'observedAt', keys: [] },
      op: '>=',
      value: { kind: 'dateTime', value: Date.UTC(2024, 0, 1) },
    });
    expect(parseQ('address[streetAddress.type][@id]', mapper)).toEqual({
      kind: 'exists',
      path: {
        attr: dc('address'), subs: [],
        keys: [{ iri: dc('streetAddress'), term: 'streetAddress' }, { iri: 'type', term: 'type' }, { iri: '@id', term: '@id' }],
      },
      negated: false,
    });
  });

  it('binds ; tighter than | and flattens chains [§4.9]', () => {
    const a = { kind: 'exists', path: { attr: dc('a'), subs: [], keys: [] }, negated: false };
    const b = { ...a, path: { ...a.path, attr: dc('b') } };
    const c = { ...a, path: { ...a.path, attr: dc('c') } };
    expect(parseQ('a|b;c', mapper)).toEqual({ kind: 'or', terms: [a, { kind: 'and', terms: [b, c] }] });
    expect(parseQ('(a|b);c', mapper)).toEqual({ kind: 'and', terms: [{ kind: 'or', terms: [a, b] }, c] });
    expect(parseQ('a;(b;c)', mapper)).toEqual({ kind: 'and', terms: [a, b, c] });
  });

  it('reads every kind of literal [§4.9]', () => {
    const value = (q: string): unknown => {
      const parsed = parseQ(q, mapper);
      const e = parsed.kind === 'and' || parsed.kind === 'or' ? parsed.terms[0] : parsed;
      return e?.kind === 'compare' ? e.value : undefined;
    };
    expect(value('a==-1.5e2')).toEqual({ kind: 'number', value: -150 });
    expect(value('a==true')).toEqual({ kind: 'boolean', value: true });
    expect(value('a=="Office"')).toEqual({ kind: 'string', value: 'Office', iri: dc('Office') });
    expect(value('a==urn:ngsi-ld:X:1')).toEqual({ kind: 'uri', value: 'urn:ngsi-ld:X:1' });
    expect(value('a==2024-02-29')).toEqual({ kind: 'date', value: '2024-02-29', instant: Date.UTC(2024, 1, 29) });
    expect(value('a==23:59:59Z')).toEqual({ kind: 'time', value: '23:59:59Z' });
    expect(value('a==1..2')).toEqual({ kind: 'range', from: { kind: 'number', value: 1 }, to: { kind: 'number', value: 2 } });
    expect(value('a=="x",3,false')).toEqual({
      kind: 'list', items: [{ kind: 'string', value: 'x', iri: dc('x') }, { kind: 'number', value: 3 }, { kind: 'boolean', value: false }],
    });
    expect(value('a~=x;y')).toEqual({ kind: 'pattern', source: 'x' });
    expect(value('a~=(x|y);b')).toEqual({ kind: 'pattern', source: '(x|y)' });
    expect(value('a~=the Bull')).toEqual({ kind: 'pattern', source: 'the Bull' });
    expect(value('(a~=x)')).toEqual({ kind: 'pattern', source: 'x' });
    expect(value('a~=a\\)b[)]')).toEqual({ kind: 'pattern', source: 'a\\)b[)]' });
    expect(value('a=="a\\\\b\\"c\\d"')).toEqual({ kind: 'string', value: 'a\\b"c\\d', iri: dc('a\\b"c\\d') });
  });

  it.each([
    ['', 'expected an attribute name at position 1'],
    ['temperature>', 'expected a value at position 13'],
    ['temperature==', 'expected a value at position 14'],
    ['temperature=20', 'expected an operator (==, !=, >, >=, <, <=, ~=, !~=), \';\', \'|\', \')\' or the end at position 12'],
    ['(temperature', 'expected \';\', \'|\' or \')\' at position 13'],
    ['temperature)', 'at position 12, found \')\''],
    ['temperature==20;', 'expected an attribute name at position 17'],
    ['a;;b', 'expected an attribute name at position 3'],
    ['temperature=="abc', 'expected \'"\' (closing the string from position 14) at position 18'],
    ['temperature>true', 'after \'>\' at position 13'],
    ['temperature>1..2', 'a range goes with == or !=, not >) at position 14'],
    ['temperature>1,2', 'a list goes with == or !=, not >) at position 14'],
    ['temperature==1.."a"', 'expected a number to end the range at position 17'],
    ['temperature==true..false', 'to start a range at position 14'],
    ['temperature==abc', 'at position 14, found \'abc\''],
    ['temperature==2024-13-01T00:00:00Z', 'expected a valid date-time with a time zone at position 14'],
    ['temperature==2024-01-01T10:00:00', 'expected a valid date-time with a time zone at position 14'],
    ['temperature==2023-02-29', 'expected a valid calendar date at position 14'],
    ['temperature==25:00', 'expected a valid time of day at position 14'],
    ['temperature.observedAt[x]', '\'.observedAt\' has no keys at position 23'],
    ['temperature.observedAt.foo', 'nothing follows \'.observedAt\' at position 23'],
    ['temperature. x', 'expected a sub-attribute or member name after \'.\' at position 13, found whitespace'],
    ['temperature == 20', 'at position 12, found whitespace'],
    ['!', 'expected an attribute name at position 2'],
    ['temperature==1,', 'expected a value at position 16'],
    ['address[city', 'expected \'.\' or \']\' at position 13'],
    ['address[]', 'expected a key name at position 9'],
    ['name~=(', 'expected a valid regular expression'],
    ['name~=', 'expected a regular expression at position 7'],
    ['a==1;(b', 'expected \';\', \'|\' or \')\' at position 8'],
  ])('refuses %j with 400 BadRequestData naming the position', (q, message) => {
    const err = failure(q);
    expect(err).toBeInstanceOf(BadRequestDataError);
    expect(err).toMatchObject({ status: 400, errorType: 'BadRequestData' });
    expect(err.message).toContain(message);
    expect(err.message).toMatch(/^Invalid q: expected .* at position \d+, found /);
  });

  it('refuses expressions beyond the limits with TooComplexQuery', () => {
    const deep = '('.repeat(Q_LIMITS.maxDepth + 1) + 'a' + ')'.repeat(Q_LIMITS.maxDepth + 1);
    expect(failure(deep)).toBeInstanceOf(TooComplexQueryError);
    expect(() => parseQ('('.repeat(Q_LIMITS.maxDepth) + 'a' + ')'.repeat(Q_LIMITS.maxDepth), mapper)).not.toThrow();
    const wide = Array.from({ length: Q_LIMITS.maxTerms + 1 }, (_, i) => `a${i}==1`).join(';');
    expect(failure(wide)).toMatchObject({ status: 403, errorType: 'TooComplexQuery' });
    expect(failure('a=="' + 'x'.repeat(Q_LIMITS.maxLength) + '"')).toBeInstanceOf(TooComplexQueryError);
    const list = 'a==' + Array.from({ length: Q_LIMITS.maxListItems + 1 }, (_, i) => i).join(',');
    expect(failure(list)).toBeInstanceOf(TooComplexQueryError);
  });
});
