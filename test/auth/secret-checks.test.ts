// The global bound on password checks: at most N run at once, a bounded queue waits (first in, first
// out), and beyond it a check is refused at once; a failed check frees its slot too.

import { describe, expect, it } from 'vitest';
import { createSecretChecks, hashSecret, SecretCheckBusyError, verifySecret } from '../../src/auth/index.js';

/** A check that answers when told: the slots it holds are visible in between. */
function heldChecks() {
  const pending: Array<{ encoded: string; answer: (ok: boolean | Error) => void }> = [];
  const verify = (_secret: string, encoded: string): Promise<boolean> => new Promise<boolean>((resolve, reject) => {
    pending.push({ encoded, answer: (ok) => (ok instanceof Error ? reject(ok) : resolve(ok)) });
  });
  return { pending, verify };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('secret checks bound', () => {
  it('runs at most maxConcurrent checks, queues maxQueued in order and refuses the next at once', async () => {
    const held = heldChecks();
    const checks = createSecretChecks({ maxConcurrent: 2, maxQueued: 1 }, held.verify);
    const a = checks.verify('x', 'a');
    const b = checks.verify('x', 'b');
    const c = checks.verify('x', 'c');
    await expect(checks.verify('x', 'd')).rejects.toBeInstanceOf(SecretCheckBusyError);
    await settle();
    expect(held.pending.map((p) => p.encoded)).toEqual(['a', 'b']);
    expect(checks.stats()).toEqual({ running: 2, queued: 1, refused: 1 });
    held.pending[0]?.answer(false);
    await expect(a).resolves.toBe(false);
    await settle();
    // The slot went to the queued check.
    expect(held.pending.map((p) => p.encoded)).toEqual(['a', 'b', 'c']);
    expect(checks.stats()).toEqual({ running: 2, queued: 0, refused: 1 });
    held.pending[1]?.answer(new Error('scrypt failed'));
    await expect(b).rejects.toThrow('scrypt failed');
    held.pending[2]?.answer(true);
    await expect(c).resolves.toBe(true);
    expect(checks.stats()).toEqual({ running: 0, queued: 0, refused: 1 });
  });

  it('refuses every check beyond the running ones when no queue is allowed', async () => {
    const held = heldChecks();
    const checks = createSecretChecks({ maxConcurrent: 1, maxQueued: 0 }, held.verify);
    const first = checks.verify('x', 'a');
    await expect(checks.verify('x', 'b')).rejects.toBeInstanceOf(SecretCheckBusyError);
    held.pending[0]?.answer(true);
    await expect(first).resolves.toBe(true);
    const again = checks.verify('x', 'c');
    await settle();
    held.pending[1]?.answer(false);
    await expect(again).resolves.toBe(false);
  });

  it('checks with scrypt by default', async () => {
    const checks = createSecretChecks({ maxConcurrent: 1, maxQueued: 4 });
    const hash = hashSecret('right');
    expect(await Promise.all([checks.verify('right', hash), checks.verify('wrong', hash)])).toEqual([true, false]);
    expect(await verifySecret('right', hash)).toBe(true);
  });
});
