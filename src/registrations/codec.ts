// The stored form of a registration: the model minus what the store keeps in columns (id, mode,
// owner, times), tagged with a version; and the rows of its match index.

import type { RegistrationKeys, StoredRegistration } from '../store/index.js';
import type { Registration } from './model.js';

const DOC_VERSION = 1;

type Document = Omit<Registration, 'id' | 'createdAt' | 'modifiedAt' | 'mode' | 'owner' | 'expiresAt'> & { v: number };

export function toStored(reg: Registration): StoredRegistration {
  const { id, createdAt, modifiedAt, mode, owner, expiresAt, ...rest } = reg;
  const doc: Document = { v: DOC_VERSION, ...rest };
  const out: StoredRegistration = { id, doc, mode, createdAt, modifiedAt };
  if (owner !== undefined) out.owner = owner.subject;
  if (expiresAt !== undefined) out.expiresAt = expiresAt;
  return out;
}

export function fromStored(stored: StoredRegistration): Registration {
  // NOTE: the document was written by toStored (JSON of the model); the store hands it back as is.
  const { v, ...rest } = stored.doc as Document;
  if (v !== DOC_VERSION) throw new Error(`registration ${stored.id} has an unknown document version ${String(v)}`);
  // NOTE: the mode column only ever holds a mode the model wrote (its CHECK lists them).
  const reg: Registration = { ...rest, id: stored.id, mode: stored.mode as Registration['mode'], createdAt: stored.createdAt, modifiedAt: stored.modifiedAt };
  if (stored.owner !== undefined) reg.owner = { subject: stored.owner };
  if (stored.expiresAt !== undefined) reg.expiresAt = stored.expiresAt;
  return reg;
}

/** The match index of a registration: its EntityInfos and attribute names per RegistrationInfo. */
export function keysOf(reg: Registration): RegistrationKeys {
  const entities: Array<RegistrationKeys['entities'][number]> = [];
  const attrs: Array<RegistrationKeys['attrs'][number]> = [];
  reg.information.forEach((ri, info) => {
    if (ri.entities === undefined) entities.push({ info });
    for (const e of ri.entities ?? []) {
      entities.push({ info, type: e.type, ...(e.id !== undefined ? { id: e.id } : {}), ...(e.idPattern !== undefined ? { idPattern: e.idPattern } : {}) });
    }
    const names = [...(ri.propertyNames ?? []), ...(ri.relationshipNames ?? [])];
    if (names.length === 0) attrs.push({ info });
    for (const attr of names) attrs.push({ info, attr });
  });
  return { entities, attrs };
}
