// Client regular expressions on the linear-time engine: search semantics, the (?i) flag, the
// syntax RE2 refuses, and patterns that backtrack catastrophically in a backtracking engine.

import { describe, expect, it } from 'vitest';
import { compileIdPattern, compilePattern, compileQPattern, PatternSyntaxError } from '../../src/ngsi/index.js';

describe('compilePattern', () => {
  it('finds a match anywhere, as RegExp#test does, and honours anchors', () => {
    expect(compilePattern('ens').test('urn:sensor:1')).toBe(true);
    expect(compilePattern('^ens').test('urn:sensor:1')).toBe(false);
    expect(compilePattern('\\d+$').test('urn:sensor:12')).toBe(true);
  });

  it('turns a leading (?i) into a case-insensitive match for q', () => {
    expect(compileQPattern('(?i)^ALI').test('alice')).toBe(true);
    expect(compileQPattern('^ALI').test('alice')).toBe(false);
  });

  it('refuses back-references and look-around with a PatternSyntaxError naming the construct', () => {
    expect(() => compileIdPattern('(a)\\1')).toThrow(PatternSyntaxError);
    expect(() => compileQPattern('(?=a)b')).toThrow(/\(\?=/);
    expect(() => compileIdPattern('(')).toThrow(PatternSyntaxError);
  });

  it('matches nested quantifiers against long values in linear time', () => {
    const value = `${'a'.repeat(50_000)}!`;
    // A backtracking engine would not finish these before the test times out; linear time does.
    for (const source of ['(a+)+$', '(a|aa)+$', '(a*)*c', '^(\\w+\\s?)*$']) {
      expect(compilePattern(source).test(value), source).toBe(false);
    }
  });
});
