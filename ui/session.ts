// Who the page acts as: the bearer token (kept in sessionStorage, so it ends with the tab), the
// subject and roles read from it for display, and the NGSILD-Tenant chosen (kept in localStorage).

const TOKEN_KEY = 'edgeld.token';
const TENANT_KEY = 'edgeld.tenant';

export interface Session {
  token(): string | undefined;
  setToken(token: string | undefined): void;
  tenant(): string;
  setTenant(tenant: string): void;
  /** A name to show for the token's subject (preferred_username, client_id or sub). */
  who(): string | undefined;
}

function read(storage: Storage, key: string): string | undefined {
  try {
    return storage.getItem(key) ?? undefined;
  } catch {
    return undefined;
  }
}

function write(storage: Storage, key: string, value: string | undefined): void {
  try {
    if (value === undefined || value === '') storage.removeItem(key);
    else storage.setItem(key, value);
  } catch {
    // Storage refused (private mode, quota): the value lives until the page reloads.
  }
}

/** The claims of a JWT, unverified: only shown, never trusted (the broker verifies every request). */
export function claimsOf(token: string): Record<string, unknown> | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(payload.length / 4) * 4, '='));
    const claims: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined; // NOTE: a JSON object
  } catch {
    return undefined;
  }
}

export function createSession(): Session {
  let token = read(sessionStorage, TOKEN_KEY);
  let tenant = read(localStorage, TENANT_KEY) ?? '';
  return {
    token: () => token,
    setToken: (t) => {
      token = t;
      write(sessionStorage, TOKEN_KEY, t);
    },
    tenant: () => tenant,
    setTenant: (t) => {
      tenant = t.trim();
      write(localStorage, TENANT_KEY, tenant);
    },
    who: () => {
      if (token === undefined) return undefined;
      const claims = claimsOf(token) ?? {};
      const name = [claims['preferred_username'], claims['client_id'], claims['sub']].find((v) => typeof v === 'string');
      return typeof name === 'string' ? name : 'token';
    },
  };
}
