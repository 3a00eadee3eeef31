// From a bearer token to a principal: verification (once per token string: a verified token is kept
// until it expires, so a client sending the same token does not pay a signature check per request),
// the subject registry fed with its claims, and the principal of the request's tenant. A token of the
// built-in identity provider is refused, cached or not, once its user or client is deleted.

import { UnauthorizedError, type Principal } from '../ngsi/index.js';
import { createLru, type Clock } from '../lib/index.js';
import { principalOf, publicPrincipal, type ClaimsOptions } from './principal.js';
import { REASONS, unauthorized } from './token-errors.js';
import type { VerifiedToken } from './tokens.js';

export interface Authenticator {
  /** The principal of a bearer token in `tenant`; rejects with UnauthorizedError (401). */
  authenticate(token: string, tenant: string): Promise<Principal>;
  /** The principal of a request without a token, when public permissions are allowed. */
  anonymous?: (tenant: string) => Principal;
}

export interface AuthenticatorDeps {
  verifier: { verifyToken(token: string): Promise<VerifiedToken> };
  clock: Clock;
  claims: ClaimsOptions;
  /**
   * Called with the claims of each token the first time it is verified, and the rights they give
   * (`isLocal`: signed by the built-in identity provider).
   */
  observe: (claims: Record<string, unknown>, rights: ObservedRights) => void;
  allowPublic: boolean;
  /**
   * Whether the built-in identity provider still has a user or client with this `sub`: asked at every
   * request with one of its tokens, so it must be an in-memory lookup. Undefined: no provider.
   */
  isLocalSubject?: ((sub: string) => boolean) | undefined;
}

/** What a verified token makes its subject: an administrator or not, and its assignees (tenant-independent). */
export interface ObservedRights {
  admin: boolean;
  assignees: readonly string[];
  isLocal: boolean;
}

interface Verified {
  claims: Record<string, unknown>;
  /** Epoch ms after which the token is refused (its `exp`). */
  expiresAt: number;
  /** Principals of the token per tenant. */
  principals: Map<string, Principal>;
  /** The `sub` of a token the built-in identity provider signed, checked at each use; undefined otherwise. */
  localSub: string | undefined;
}

/** Distinct tokens kept verified. */
const VERIFIED_CACHE = 1_024;

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { verifier, clock, claims: claimsOptions, observe, isLocalSubject } = deps;
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
        if (clock.now() >= known.expiresAt) {
          verified.delete(token);
          throw new UnauthorizedError('Invalid token', 'The token has expired');
        }
        if (known.localSub !== undefined && isLocalSubject !== undefined && !isLocalSubject(known.localSub)) {
          verified.delete(token);
          throw unauthorized(REASONS.subjectGone);
        }
        return principal(known, tenant);
      }
      const { claims, isLocal } = await verifier.verifyToken(token);
      // The verifier requires `exp`; a token without one would never be let in here.
      const exp = typeof claims.exp === 'number' ? claims.exp * 1_000 : 0;
      // NOTE: the verifier requires a non-empty string `sub`.
      const localSub = isLocal ? String(claims.sub) : undefined;
      if (localSub !== undefined && isLocalSubject !== undefined && !isLocalSubject(localSub)) throw unauthorized(REASONS.subjectGone);
      const entry: Verified = { claims, expiresAt: exp, principals: new Map(), localSub };
      // NOTE: admin and assignees do not depend on the tenant; the default tenant's principal is kept.
      const rights = principal(entry, '');
      observe(claims, { admin: rights.admin, assignees: rights.assignees, isLocal });
      verified.set(token, entry);
      return principal(entry, tenant);
    },
    ...(deps.allowPublic ? { anonymous: publicPrincipal } : {}),
  };
}
