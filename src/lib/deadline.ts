// A signal that aborts when its parent does or after a delay, and lets go of its parent when the
// operation ends. AbortSignal.any() would do the first part, but on Node 20 each call leaves a
// WeakRef in the parent for good: under a long-lived parent (a service's shutdown signal) an
// operation per batch grew the heap by about 40 MiB an hour.

/** The name of the abort reason when the delay ran out (as AbortSignal.timeout's). */
export const TIMEOUT_ERROR = 'TimeoutError';

export interface Deadline {
  readonly signal: AbortSignal;
  /** Whether it was the delay that aborted it. */
  readonly timedOut: boolean;
  /** The operation is over: stops the timer and leaves the parent. Call it in a finally. */
  done(): void;
}

export function deadline(parent: AbortSignal | undefined, ms: number): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onParent = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${ms} ms`, TIMEOUT_ERROR));
  }, ms);
  timer.unref();
  if (parent?.aborted === true) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    done() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}
