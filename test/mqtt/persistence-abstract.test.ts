// The SQLite-backed Aedes persistence against aedes-persistence's own conformance suite (abstract.js),
// each case on a fresh ':memory:' store. The suite is written for node:test; a small `t` stands in.

import assert from 'node:assert';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { SqlitePersistence } from '../../src/mqtt/persistence.js';
import type { Store } from '../../src/store/index.js';
import { memoryStore } from '../store/helpers.js';

type Assert = Record<string, (...args: unknown[]) => unknown>;

interface SuiteContext {
  plan(n: number): void;
  diagnostic(msg: string): void;
  assert: Assert;
}

interface SuiteOptions {
  test(name: string, fn: (t: SuiteContext) => Promise<void>): void;
  persistence(): unknown;
  testAsync: boolean;
}

const require = createRequire(import.meta.url);
// NOTE: a CommonJS module without types; its export is the suite function.
const abstractSuite = require('aedes-persistence/abstract.js') as (opts: SuiteOptions) => void;

/** node:test's `t` as the suite uses it: assertions counted against `plan`. */
function suiteContext(): SuiteContext & { planned: number | undefined; count: number } {
  const ctx = {
    planned: undefined as number | undefined,
    count: 0,
    plan(n: number) {
      ctx.planned = n;
    },
    diagnostic: () => undefined,
    assert: {} as Assert,
  };
  for (const name of ['ok', 'equal', 'notEqual', 'deepEqual', 'notDeepEqual', 'strictEqual', 'deepStrictEqual', 'throws', 'rejects']) {
    const fn = Reflect.get(assert, name) as (...args: unknown[]) => unknown; // NOTE: node:assert's own methods
    ctx.assert[name] = (...args: unknown[]) => {
      ctx.count += 1;
      return fn(...args);
    };
  }
  return ctx;
}

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

describe('SqlitePersistence conforms to the aedes-persistence suite', () => {
  abstractSuite({
    test: (name, fn) => it(name, async () => {
      const t = suiteContext();
      await fn(t);
      if (t.planned !== undefined) expect(t.count).toBe(t.planned);
    }),
    persistence: () => {
      const store = memoryStore();
      stores.push(store);
      return new SqlitePersistence(store.mqttSessions);
    },
    testAsync: true,
  });
});
