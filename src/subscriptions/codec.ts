// The stored form of a subscription: the model minus what the store keeps in columns (id, times,
// delivery counters), tagged with a version so a later change of the model can read older rows.

import type { StoredSubscription } from '../store/index.js';
import type { Subscription } from './model.js';

const DOC_VERSION = 1;

type Document = Omit<Subscription, 'id' | 'createdAt' | 'modifiedAt' | 'delivery'> & { v: number };

export function toStored(sub: Subscription): StoredSubscription {
  const { id, createdAt, modifiedAt, delivery, ...rest } = sub;
  const doc: Document = { v: DOC_VERSION, ...rest };
  return { id, doc, createdAt, modifiedAt, delivery, ...(sub.owner ? { owner: sub.owner.subject } : {}), ...(sub.csource === true ? { csource: true } : {}) };
}

/** The document of a stored subscription (to replace it). */
export function documentOf(sub: Subscription): unknown {
  return toStored(sub).doc;
}

export function fromStored(stored: StoredSubscription): Subscription {
  // NOTE: the document was written by toStored (JSON of the model); the store hands it back as is.
  const { v, ...rest } = stored.doc as Document;
  if (v !== DOC_VERSION) throw new Error(`subscription ${stored.id} has an unknown document version ${String(v)}`);
  return { ...rest, id: stored.id, createdAt: stored.createdAt, modifiedAt: stored.modifiedAt, delivery: stored.delivery };
}
