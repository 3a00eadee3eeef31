// One global bound on password and secret checks (the token endpoint's grants, MQTT CONNECT with a
// device secret): each scrypt check takes a libuv pool thread, 32 MiB and tens of milliseconds, so a
// flood of failed logins would otherwise hold the pool and the CPU others need. At most
// `maxConcurrent` checks run; a few more wait in a bounded queue; beyond, a check is refused at once.

import { verifySecret } from './secret-hash.js';

export interface SecretCheckLimits {
  /** Checks running at once. */
  maxConcurrent: number;
  /** Checks waiting for a free slot; beyond, refused at once. */
  maxQueued: number;
}

export interface SecretCheckStats {
  /** Checks running now. */
  running: number;
  /** Checks waiting now. */
  queued: number;
  /** Checks refused because the queue was full, since start. */
  refused: number;
}

/** A check refused unheard: too many are running and waiting already. The caller answers "busy, retry later". */
export class SecretCheckBusyError extends Error {
  override name = 'SecretCheckBusyError';
  constructor() {
    super('too many password checks in progress');
  }
}

export interface SecretChecks {
  /** verifySecret within the bound; rejects with SecretCheckBusyError when the queue is full. */
  verify(secret: string, encoded: string): Promise<boolean>;
  stats(): SecretCheckStats;
}

export function createSecretChecks(limits: SecretCheckLimits, verify: typeof verifySecret = verifySecret): SecretChecks {
  let running = 0;
  let refused = 0;
  /** Starts of the waiting checks, oldest first. */
  const waiting: Array<() => void> = [];

  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) running -= 1;
    else next(); // NOTE: the slot passes to the next check: `running` is unchanged
  };
  const run = async (secret: string, encoded: string): Promise<boolean> => {
    try {
      return await verify(secret, encoded);
    } finally {
      release();
    }
  };

  return {
    verify(secret, encoded) {
      if (running < limits.maxConcurrent) {
        running += 1;
        return run(secret, encoded);
      }
      if (waiting.length >= limits.maxQueued) {
        refused += 1;
        return Promise.reject(new SecretCheckBusyError());
      }
      return new Promise<void>((resolve) => waiting.push(resolve)).then(() => run(secret, encoded));
    },
    stats: () => ({ running, queued: waiting.length, refused }),
  };
}
