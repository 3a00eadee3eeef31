// What a read may see, and the read scope of a principal. Every read of the store takes a scope: the
// tenant, and for a subject the permission check joins every listing as one predicate (a rowid list).

import type { Principal } from '../ngsi/index.js';
import type { SqlFragment } from './sql-fragment.js';

export interface ReadScope {
  readonly tenant: string;
  /** The assignees whose read permissions bound a listing; absent: every entity of the tenant. */
  readonly assignees?: readonly string[];
}

export function readScopeOf(principal: Principal): ReadScope {
  return principal.admin ? { tenant: principal.tenant } : { tenant: principal.tenant, assignees: principal.assignees };
}

/** The read filter of a scope over `entities e`: undefined when it sees every entity of its tenant. */
export type ReadFilter = (scope: ReadScope) => SqlFragment | undefined;
