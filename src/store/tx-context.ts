// What a transaction function gets: a place for side effects that must wait for the commit. A leaf
// of its own, so the transaction runner and the repositories do not import the store's contracts.

export interface TxContext {
  /** Registers a side effect that runs after COMMIT, in registration order; never on rollback. */
  onCommit(fn: () => void): void;
}
