// IRIs in response headers (RFC 3987 §3.1): printable ASCII URIs, valid octets kept, and path
// segments that decode back to the string they carry.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fuzzRuns } from '../helpers/fuzz-runs.js';
import { iriToUri, pathSegment } from '../../src/http/uri.js';

/** A URI reference of printable ASCII (RFC 3986 §2): no character outside the URI set, no stray %. */
const URI_REFERENCE = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-F]{2})*$/i;
/** Well-formed Unicode text of any plane, with the characters ids are made of. */
const text = fc.string({ unit: fc.oneof(fc.constantFrom('%', '/', '?', '#', ' ', '[', '<', '>', ':', 'é', '€', '😀', '2', '0'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) });

describe('iriToUri', () => {
  it('percent-encodes non-ASCII as UTF-8 and keeps what a URI already allows', () => {
    expect(iriToUri('http://example.org/ctx-€.jsonld')).toBe('http://example.org/ctx-%E2%82%AC.jsonld');
    expect(iriToUri('urn:x:é😀')).toBe('urn:x:%C3%A9%F0%9F%98%80');
    expect(iriToUri('http://h/a%20b?x=1&y=[2]#f')).toBe('http://h/a%20b?x=1&y=[2]#f');
    expect(iriToUri('urn:x:50%')).toBe('urn:x:50%25');
    expect(iriToUri('urn:x:%zz<a> "b"')).toBe('urn:x:%25zz%3Ca%3E%20%22b%22');
  });

  it('never throws, even on a lone surrogate', () => {
    expect(iriToUri('urn:x:\ud800')).toBe('urn:x:%EF%BF%BD');
  });

  it('always gives a URI, and a URI stays as it is', () => {
    fc.assert(fc.property(text, (s) => {
      const uri = iriToUri(s);
      expect(uri).toMatch(URI_REFERENCE);
      expect(iriToUri(uri)).toBe(uri);
    }), { numRuns: fuzzRuns(100) });
  });
});

describe('pathSegment', () => {
  it('escapes what would split or end a segment, and % itself', () => {
    expect(pathSegment('urn:ngsi-ld:Room:1')).toBe('urn:ngsi-ld:Room:1');
    expect(pathSegment('urn:x:a/b?c#d%20')).toBe('urn:x:a%2Fb%3Fc%23d%2520');
  });

  it('is a URI segment that decodes back to the string', () => {
    fc.assert(fc.property(text, (s) => {
      const segment = pathSegment(s);
      expect(segment).toMatch(/^(?:[A-Za-z0-9\-._~:@!$&'()*+,;=]|%[0-9A-F]{2})*$/);
      expect(decodeURIComponent(segment)).toBe(s);
    }), { numRuns: fuzzRuns(100) });
  });
});
