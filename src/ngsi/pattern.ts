// Regular expressions from clients (q `~=`, idPattern) run on a linear-time engine (RE2 semantics,
// re2js): no pattern can make a match cost more than time proportional to the value, so one request
// can never stall the event loop with catastrophic backtracking.

import { RE2JS } from 're2js';

/** A compiled client pattern: `test` finds a match anywhere in the value, like RegExp#test. */
export interface Pattern {
  readonly source: string;
  test(value: string): boolean;
}

/** The pattern is not valid RE2 syntax (back-references and look-around are not supported). */
export class PatternSyntaxError extends Error {
  override name = 'PatternSyntaxError';
}

/** Compiles `source` (RE2 syntax, a subset of ECMAScript's without backtracking features). */
export function compilePattern(source: string, opts: { caseInsensitive?: boolean } = {}): Pattern {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, opts.caseInsensitive === true ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new PatternSyntaxError(why.replace(/^error parsing regexp: /, ''), { cause: err });
  }
  return { source, test: (value) => re.test(value) };
}
