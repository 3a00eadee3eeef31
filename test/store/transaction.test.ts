// store.transaction: onCommit hooks, rollback, SAVEPOINT nesting, misuse and close.

import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/index.js';
import { entity, memoryStore, NS } from './helpers.js';

const T = NS + 'Thing';
const id = (n: number): string => `urn:ngsi-ld:Thing:${n}`;

describe('store.transaction', () => {
  it('commits, then runs onCommit hooks in registration order', () => {
    const store = memoryStore();
    const events: string[] = [];
    const result = store.transaction((tx) => {
      store.entities.insert('', entity(id(1), [T]));
      tx.onCommit(() => events.push(`hook1 sees ${store.entities.exists({ tenant: '' }, id(1))}`));
      tx.onCommit(() => events.push('hook2'));
      events.push('fn done');
      return 42;
    });
    expect(result).toBe(42);
    expect(events).toEqual(['fn done', 'hook1 sees true', 'hook2']);
    store.close();
  });

  it('rolls back everything and runs no hook when fn throws', () => {
    const store = memoryStore();
    const hook = vi.fn();
    expect(() => store.transaction((tx) => {
      store.entities.insert('', entity(id(1), [T]));
      tx.onCommit(hook);
      throw new Error('nope');
    })).toThrow('nope');
    expect(store.entities.exists({ tenant: '' }, id(1))).toBe(false);
    expect(hook).not.toHaveBeenCalled();
    store.close();
  });

  it('joins nested calls; a caught nested failure undoes only the nested writes and hooks', () => {
    const store = memoryStore();
    const events: string[] = [];
    store.transaction((tx) => {
      store.entities.insert('', entity(id(1), [T]));
      store.transaction((inner) => inner.onCommit(() => events.push('inner ok')));
      try {
        store.transaction((inner) => {
          store.entities.insert('', entity(id(2), [NS + 'NewType']));
          inner.onCommit(() => events.push('inner failed'));
          throw new Error('inner');
        });
      } catch {
        events.push('caught');
      }
      // The same id inserted again: the failed nested insert is gone.
      store.entities.insert('', entity(id(2), [NS + 'NewType']));
      tx.onCommit(() => events.push('outer'));
    });
    expect(events).toEqual(['caught', 'inner ok', 'outer']);
    expect(store.entities.list({ tenant: '' }, { types: [NS + 'NewType'], limit: 10, offset: 0, count: true }).count).toBe(1);
    store.close();
  });

  it('rejects an async fn and rolls it back', () => {
    const store = memoryStore();
    expect(() => store.transaction(async () => {
      store.entities.insert('', entity(id(1), [T]));
    })).toThrow(/synchronous/);
    expect(store.entities.exists({ tenant: '' }, id(1))).toBe(false);
    store.close();
  });

  it('refuses onCommit after fn returned', () => {
    const store = memoryStore();
    let saved: { onCommit(fn: () => void): void } | undefined;
    store.transaction((tx) => {
      saved = tx;
    });
    expect(() => saved?.onCommit(() => undefined)).toThrow(/after the transaction/);
    store.close();
  });

  it('logs a throwing hook and still runs the others and returns', () => {
    const lines: string[] = [];
    const store = memoryStore({ log: createLogger('error', 'store', (l) => lines.push(l)) });
    const after = vi.fn();
    const r = store.transaction((tx) => {
      tx.onCommit(() => {
        throw new Error('hook broke');
      });
      tx.onCommit(after);
      return 'ok';
    });
    expect(r).toBe('ok');
    expect(after).toHaveBeenCalledOnce();
    expect(lines.join('\n')).toContain('onCommit hook failed');
    store.close();
  });

  it('throws after close, and close is idempotent', () => {
    const store = memoryStore();
    store.close();
    store.close();
    expect(store.isOpen()).toBe(false);
    expect(() => store.transaction(() => 1)).toThrow();
  });
});
