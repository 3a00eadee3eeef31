// deadline(): aborts with its parent or after its delay, and leaves a long-lived parent as it found
// it (AbortSignal.any on Node 20 kept a WeakRef in the parent per call: the heap grew per request).

import { describe, expect, it } from 'vitest';
import { deadline, TIMEOUT_ERROR } from '../../src/lib/index.js';

describe('deadline', () => {
  it('aborts when its parent does, with the parent\'s reason', () => {
    const parent = new AbortController();
    const d = deadline(parent.signal, 10_000);
    expect(d.signal.aborted).toBe(false);
    parent.abort(new Error('stop'));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).message).toBe('stop');
    expect(d.timedOut).toBe(false);
    d.done();
  });

  it('aborts after its delay, and says so', async () => {
    const d = deadline(new AbortController().signal, 20);
    await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(d.timedOut).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe(TIMEOUT_ERROR);
    d.done();
  });

  it('starts aborted under an aborted parent', () => {
    const parent = new AbortController();
    parent.abort();
    expect(deadline(parent.signal, 1_000).signal.aborted).toBe(true);
  });

  it('leaves nothing behind in the parent once done: a finished operation is no longer aborted by it', () => {
    const parent = new AbortController();
    const finished = Array.from({ length: 1_000 }, () => {
      const d = deadline(parent.signal, 60_000);
      d.done();
      return d.signal;
    });
    parent.abort();
    expect(finished.every((s) => !s.aborted)).toBe(true);
  });
});
