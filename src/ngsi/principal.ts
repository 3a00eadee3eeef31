// Who asks: the tenant a request works in, and what the permission policy needs of the subject.
// Every use case takes one; with authentication off every principal may do everything.

/** Assignee of every valid token (NGSI-LD authorization, interface 2.6). */
export const AUTHENTICATED_SUBJECT = 'urn:ngsi-ld:Subject:authenticated';
/** Assignee of anonymous access, when public permissions are allowed (interface 2.6). */
export const PUBLIC_SUBJECT = 'urn:ngsi-ld:Subject:public';

const TENANT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A tenant name (NGSI-LD §6.3.14) as edgeld takes it: letters, digits, `_` and `-`, at most 64. */
export function isTenantName(s: string): boolean {
  return TENANT_NAME.test(s);
}

export interface Principal {
  /** NGSI-LD §6.3.14 tenant; '' is the default tenant. */
  readonly tenant: string;
  /** The token's `sub`; absent for anonymous requests and internal work. */
  readonly subject?: string;
  /**
   * Everything is allowed: authentication is off, the subject holds the admin role, or the work is
   * the broker's own (retention, periodic notifications).
   */
  readonly admin: boolean;
  /**
   * The assignees whose permissions apply (behaviour §8): `sub`, the claim values (roles, groups),
   * `urn:ngsi-ld:Subject:authenticated` for a valid token, or only `urn:ngsi-ld:Subject:public`.
   */
  readonly assignees: readonly string[];
  /** The subject's groups (the `groups` claim), for the subject endpoints. */
  readonly groups: readonly string[];
}

/** A principal of `tenant` allowed everything (authentication off, the broker's own work). */
export function anonymousIn(tenant: string): Principal {
  return { tenant, admin: true, assignees: [], groups: [] };
}
