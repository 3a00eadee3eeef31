// Who asks: the tenant a request works in and the authenticated subject with its roles and groups.
// Every use case takes one; with authentication off the subject is absent and the lists are empty.

export interface Principal {
  /** NGSI-LD §6.3.14 tenant; '' is the default tenant. */
  readonly tenant: string;
  /** The token's `sub`, when there is a token. */
  readonly subject?: string;
  readonly roles: readonly string[];
  readonly groups: readonly string[];
}

/** A principal of `tenant` with no subject, roles or groups (authentication off, internal work). */
export function anonymousIn(tenant: string): Principal {
  return { tenant, roles: [], groups: [] };
}
