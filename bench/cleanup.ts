// Tracks what a benchmark run must undo (child processes, temp dirs) so it is undone on success,
// on error and on interruption alike.

interface Task {
  readonly release: () => Promise<void>;
  /** The same undo without waiting, for `process.on('exit')`. */
  readonly releaseSync: () => void;
}

/** Thrown when something is registered after the run began to wind down (an interruption). */
export class CleanupClosedError extends Error {
  override name = 'CleanupClosedError';
}

export class Cleanup {
  readonly #tasks = new Map<number, Task>();
  #nextId = 0;
  #isClosed = false;

  /** True once every step has been run: the run is ending and must start nothing new. */
  get isClosed(): boolean {
    return this.#isClosed;
  }

  /**
   * Registers an undo step; the returned function runs it now and forgets it. Once closed, the step
   * runs at once and this throws, so a run interrupted mid-way leaves nothing behind.
   */
  add(release: () => Promise<void>, releaseSync: () => void): () => Promise<void> {
    if (this.#isClosed) {
      releaseSync();
      throw new CleanupClosedError('the run is ending; nothing new is started');
    }
    const id = this.#nextId++;
    this.#tasks.set(id, { release, releaseSync });
    return async () => {
      if (!this.#tasks.delete(id)) return;
      await release();
    };
  }

  /** Runs every pending step, newest first; a failing step does not stop the others. */
  async runAll(): Promise<void> {
    this.#isClosed = true;
    const tasks = [...this.#tasks.values()].reverse();
    this.#tasks.clear();
    for (const task of tasks) {
      try {
        await task.release();
      } catch {
        task.releaseSync();
      }
    }
  }

  runAllSync(): void {
    this.#isClosed = true;
    const tasks = [...this.#tasks.values()].reverse();
    this.#tasks.clear();
    for (const task of tasks) {
      try {
        task.releaseSync();
      } catch {
        // Best effort while the process is exiting.
      }
    }
  }
}
