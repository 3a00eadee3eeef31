// What a read may see, and the read scope of a principal. Every read of the store takes a scope:
// today it is the tenant; the permission filter joins it as one predicate, reaching every read at once.

import type { Principal } from '../ngsi/index.js';

export interface ReadScope {
  readonly tenant: string;
}

export function readScopeOf(principal: Principal): ReadScope {
  return { tenant: principal.tenant };
}
