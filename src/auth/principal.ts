// Principals from verified token claims (behaviour §8): the subject is `sub`; the values found at the
// configured claim paths (realm roles, groups) are assignees too; the admin role allows everything.

import { PUBLIC_SUBJECT, isAbsoluteUri, type Principal } from '../ngsi/index.js';
import { assigneesOf } from './policy.js';

export interface ClaimsOptions {
  /** The claim value that makes a subject a global administrator (`service-admin`). */
  adminRole: string;
  /** Dotted paths to strings or lists of strings (`realm_access.roles`, `groups`). */
  claimsPaths: readonly string[];
}

/** The strings at a dotted path of the claims: a string, or the strings of a list; nothing else. */
export function claimAt(claims: Record<string, unknown>, path: string): string[] {
  let node: unknown = claims;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return [];
    node = (node as Record<string, unknown>)[key];
  }
  if (typeof node === 'string') return [node];
  return Array.isArray(node) ? node.filter((v): v is string => typeof v === 'string') : [];
}

/** A subject's id as a URI (interface 2.8): itself when it is one. */
export function subjectUri(kind: 'User' | 'Group', value: string): string {
  return isAbsoluteUri(value) ? value : `urn:ngsi-ld:${kind}:${encodeURIComponent(value)}`;
}

/** The principal of a verified token in `tenant`; the token must have a string `sub`. */
export function principalOf(claims: Record<string, unknown>, tenant: string, opts: ClaimsOptions): Principal {
  const subject = typeof claims['sub'] === 'string' ? claims['sub'] : undefined;
  const values = opts.claimsPaths.flatMap((path) => claimAt(claims, path));
  const groups = claimAt(claims, 'groups');
  // A user or group is named in permissions by its claim value or by the URI the subject API shows.
  const uris = [...(subject === undefined ? [] : [subjectUri('User', subject)]), ...groups.map((g) => subjectUri('Group', g))];
  return {
    tenant,
    ...(subject === undefined ? {} : { subject }),
    admin: values.includes(opts.adminRole),
    assignees: assigneesOf(subject, [...values, ...uris]),
    groups,
  };
}

/** The principal of an anonymous request when public permissions are allowed: public reads only. */
export function publicPrincipal(tenant: string): Principal {
  return { tenant, admin: false, assignees: [PUBLIC_SUBJECT], groups: [] };
}
