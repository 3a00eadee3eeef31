// Change events: what a committed write did, announced after commit to subscriptions and federation.

import type { Entity, EntityId, Iri } from './ngsi/index.js';

export type ChangeEvent =
  | { kind: 'entityCreated'; tenant: string; entity: Entity; subject?: string }
  | { kind: 'entityReplaced'; tenant: string; previous: Entity; entity: Entity; subject?: string }
  | { kind: 'entityUpdated'; tenant: string; previous: Entity; entity: Entity; attrs: Iri[]; subject?: string }
  | { kind: 'entityDeleted'; tenant: string; id: EntityId; previous: Entity; subject?: string }
  | { kind: 'attributesDeleted'; tenant: string; previous: Entity; entity: Entity; attrs: Iri[]; subject?: string };

export type ChangeListener = (event: ChangeEvent) => void;

export interface ChangeEmitter {
  on(listener: ChangeListener): () => void;
  emit(event: ChangeEvent): void;
}

/** A synchronous emitter; a throwing listener is reported and never stops the others. */
export function createChangeEmitter(onError: (err: unknown) => void): ChangeEmitter {
  const listeners = new Set<ChangeListener>();
  return {
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (err) {
          onError(err);
        }
      }
    },
  };
}
