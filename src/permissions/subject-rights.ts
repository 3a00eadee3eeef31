// The rights of a subject as they are now, for the notifications of the subscriptions it owns
// (behaviour §8: they carry only what their owner may read): an administrator or not, and its
// assignees. Read from the built-in identity provider (its users' roles and groups, read again each
// second) or from the subject registry (the rights of the user's last token); kept per subject until
// a subject, a user or the identity provider's users change.

import { principalOf, type ClaimsOptions } from '../auth/index.js';
import type { IdentitySubject } from '../lib/index.js';
import type { Store, SubjectRecord } from '../store/index.js';
import { ACCESS_INFO } from './subjects.js';

/** What a subject may do now; undefined from `of`: the subject is gone (deleted). */
export interface SubjectRights {
  admin: boolean;
  assignees: readonly string[];
}

export interface SubjectRightsDeps {
  subjects: Pick<Store['subjects'], 'get'>;
  /** The built-in identity provider's user or client with this `sub`; absent: no provider. */
  localSubject?: ((sub: string) => IdentitySubject | undefined) | undefined;
  claims: ClaimsOptions;
}

export interface SubjectRightsCache {
  /**
   * The rights of `subject` now; `fallback` (the rights it had when it created a subscription) when
   * nothing newer is known; undefined when the subject was deleted. One map lookup once known.
   */
  of(subject: string, fallback: SubjectRights): SubjectRights | undefined;
  /** A subject changed (undefined: any may have): its rights are read again when next asked. */
  changed(subject?: string): void;
}

/** The rights the registry kept of a user's last token; undefined when it kept none. */
function recordedRights(record: SubjectRecord): (SubjectRights & { local: boolean }) | undefined {
  const access = record.info[ACCESS_INFO];
  if (access === null || typeof access !== 'object') return undefined;
  const { admin, assignees, local } = access as Record<string, unknown>;
  if (typeof admin !== 'boolean' || !Array.isArray(assignees) || !assignees.every((a) => typeof a === 'string')) return undefined;
  return { admin, assignees, local: local === true };
}

function resolve(deps: SubjectRightsDeps, subject: string, fallback: SubjectRights): SubjectRights | undefined {
  const local = deps.localSubject?.(subject);
  if (local !== undefined) {
    // The claims a token of the provider carries (identity-provider.ts issueToken), as they are now.
    const p = principalOf({ sub: subject, realm_access: { roles: local.roles }, groups: local.groups }, '', deps.claims);
    return { admin: p.admin, assignees: p.assignees };
  }
  const record = deps.subjects.get(subject);
  // Removed from the registry (DELETE …/auth/subjects/users/{id}).
  if (record === undefined || record.kind !== 'User') return undefined;
  const recorded = recordedRights(record);
  // A user of the provider that is no longer one of its users or clients.
  if (recorded?.local === true && deps.localSubject !== undefined) return undefined;
  return recorded === undefined ? fallback : { admin: recorded.admin, assignees: recorded.assignees };
}

export function createSubjectRightsCache(deps: SubjectRightsDeps): SubjectRightsCache {
  /** Per subject: its rights, or null when it is gone. */
  let known = new Map<string, SubjectRights | null>();
  return {
    of(subject, fallback) {
      const hit = known.get(subject);
      if (hit !== undefined) return hit ?? undefined;
      const rights = resolve(deps, subject, fallback);
      known.set(subject, rights ?? null);
      return rights;
    },
    changed(subject) {
      if (subject === undefined) known = new Map();
      else known.delete(subject);
    },
  };
}
