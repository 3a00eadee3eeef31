// JSON-LD contexts as the broker persists them: what jsonld reads and writes and the store keeps.
// NOTE: here because both can import lib; jsonld and store sit in one layer.

export interface PersistedContext {
  id: string;
  url: string;
  /** JSON text of the context document. */
  body: string;
  kind: 'Hosted' | 'Cached' | 'ImplicitlyCreated';
  createdAt: number;
}

/** Implemented by the store (SQLite). */
export interface ContextPersistence {
  get(url: string): PersistedContext | undefined;
  getById(id: string): PersistedContext | undefined;
  /** Upsert by url. */
  put(ctx: PersistedContext): void;
  delete(id: string): boolean;
  list(): PersistedContext[];
}
