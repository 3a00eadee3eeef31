// From a bearer token to a principal: verification (once per token string: a verified token is kept
// until it expires, so a client sending the same token does not pay a signature check per request),
// the subject registry fed with its claims, and the principal of the request's tenant.

import { UnauthorizedError, type Principal } from '../ngsi/index.js';
import { createLru, type Clock } from '../lib/index.js';
import { principalOf, publicPrincipal, type ClaimsOptions } from './principal.js';

export interface Authenticator {
  /** The principal of a bearer token in `tenant`; rejects with UnauthorizedError (401). */
  authenticate(token: string, tenant: string): Promise<Principal>;
  /** The principal of a request without a token, when public permissions are allowed. */
  anonymous?: (tenant: string) => Principal;
}

export interface AuthenticatorDeps {
  verifier: { verify(token: string): Promise<Record<string, unknown>> };
  clock: Clock;
  claims: ClaimsOptions;
  /** Called with the claims of each token the first time it is verified. */
  observe: (claims: Record<string, unknown>) => void;
  allowPublic: boolean;
}

interface Verified {
  claims: Record<string, unknown>;
  /** Epoch ms after which the token is refused (its `exp`). */
  expiresAt: number;
  /** Principals of the token per tenant. */
  principals: Map<string, Principal>;
}

/** Distinct tokens kept verified. */
const VERIFIED_CACHE = 1_024;

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { verifier, clock, claims: claimsOptions, observe } = deps;
  const verified = createLru<string, Verified>(VERIFIED_CACHE);

  const principal = (v: Verified, tenant: string): Principal => {
    let p = v.principals.get(tenant);
    if (p === undefined) {
      p = principalOf(v.claims, tenant, claimsOptions);
      v.principals.set(tenant, p);
    }
    return p;
  };

  return {
    async authenticate(token, tenant) {
      const known = verified.get(token);
      if (known !== undefined) {
        if (clock.now() < known.expiresAt) return principal(known, tenant);
        verified.delete(token);
        throw new UnauthorizedError('Invalid token', 'The token has expired');
      }
      const claims = await verifier.verify(token);
      const exp = typeof claims['exp'] === 'number' ? claims['exp'] * 1_000 : Number.POSITIVE_INFINITY;
      const entry: Verified = { claims, expiresAt: exp, principals: new Map() };
      observe(claims);
      verified.set(token, entry);
      return principal(entry, tenant);
    },
    ...(deps.allowPublic ? { anonymous: publicPrincipal } : {}),
  };
}
