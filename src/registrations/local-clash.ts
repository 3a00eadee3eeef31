// NGSI-LD §5.9.2.4: a redirect registration may not cover an entity that exists locally, and an
// exclusive one may not cover an attribute a local entity already has: the registration would hide
// local data from every read and write.

import { compileIdPattern } from '../ngsi/index.js';
import type { Store } from '../store/index.js';
import type { EntityInfo, Registration } from './model.js';

/** Local entities of a type looked at for a redirect registration naming a whole type or an idPattern. */
const TYPE_PAGE = 100;

function redirectClash(store: Store, tenant: string, e: EntityInfo): string | undefined {
  if (e.id !== undefined) {
    const entity = store.entities.get({ tenant }, e.id);
    return entity !== undefined && entity.types.includes(e.type) ? `entity ${e.id} exists locally` : undefined;
  }
  const pattern = e.idPattern === undefined ? undefined : compileIdPattern(e.idPattern);
  const page = store.entities.list({ tenant }, { types: [e.type], limit: pattern === undefined ? 1 : TYPE_PAGE, offset: 0, count: false });
  const hit = page.entities.find((entity) => pattern === undefined || pattern.test(entity.id));
  return hit === undefined ? undefined : `entity ${hit.id} exists locally`;
}

/** Why the registration clashes with local data; undefined when it does not. */
export function localClash(store: Store, tenant: string, reg: Registration): string | undefined {
  for (const info of reg.information) {
    for (const e of info.entities ?? []) {
      if (reg.mode === 'redirect') {
        const why = redirectClash(store, tenant, e);
        if (why !== undefined) return why;
      }
      if (reg.mode === 'exclusive' && e.id !== undefined) {
        const entity = store.entities.get({ tenant }, e.id);
        const names = [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];
        const held = entity === undefined ? undefined : names.find((n) => entity.attrs[n] !== undefined);
        if (held !== undefined) return `entity ${e.id} has attribute ${held} locally`;
      }
    }
  }
  return undefined;
}
