// Tracks what a benchmark run must undo (child processes, temp dirs) so it is undone on success,
// on error and on interruption alike.

interface Task {
  readonly release: () => Promise<void>;
  /** The same undo without waiting, for `process.on('exit')`. */
  readonly releaseSync: () => void;
}

export class Cleanup {
  readonly #tasks = new Map<number, Task>();
  #nextId = 0;

  /** Registers an undo step; the returned function runs it now and forgets it. */
  add(release: () => Promise<void>, releaseSync: () => void): () => Promise<void> {
    const id = this.#nextId++;
    this.#tasks.set(id, { release, releaseSync });
    return async () => {
      if (!this.#tasks.delete(id)) return;
      await release();
    };
  }

  /** Runs every pending step, newest first; a failing step does not stop the others. */
  async runAll(): Promise<void> {
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
