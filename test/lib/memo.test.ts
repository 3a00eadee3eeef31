// The bounded memo: a value made once per key, undefined never kept, and a fresh start at the bound.

import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../src/lib/index.js';

describe('boundedMemo', () => {
  it('makes each key once and hands the same value out again', () => {
    const made: string[] = [];
    const memo = boundedMemo(10, (k: string) => {
      made.push(k);
      return { k };
    });
    const a = memo('a');
    expect(memo('a')).toBe(a);
    memo('b');
    expect(made).toEqual(['a', 'b']);
  });

  it('keeps no undefined result, and starts over once it holds its bound', () => {
    let calls = 0;
    const odd = boundedMemo(2, (n: number) => {
      calls += 1;
      return n % 2 === 1 ? [n] : undefined;
    });
    expect(odd(2)).toBeUndefined();
    expect(odd(2)).toBeUndefined();
    expect(calls).toBe(2);
    const one = odd(1);
    odd(3);
    expect(odd(1)).toBe(one);
    odd(5); // the third key: the memo starts over with it
    expect(odd(1)).not.toBe(one);
    expect(odd(1)).toEqual([1]);
  });
});
