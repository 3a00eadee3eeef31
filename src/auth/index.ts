// The auth module's public surface: token verification (jose), principals from claims, the pure
// permission policy, and the built-in identity provider. Persistence is injected (store implements it).

// Built-in identity provider
/** Builds the identity provider over its persistence; makes and stores a signing key on first start. */
export {
  createIdentityProvider, TokenRequestError, type ClientCredentials, type IdentityPersistence, type IdentityProvider,
  type IdentityProviderDeps, type TokenErrorCode, type TokenGrant, type TokenResponse,
} from './identity-provider.js';
/** Password and client secret hashes (`scrypt$N$r$p$salt$hash`), shared with scripts/idp.mjs. */
export { hashSecret, hashSecretAsync, isSecretHash, verifySecret } from './secret-hash.js';
/** The global bound on concurrent password and secret checks, with a bounded queue. */
export {
  createSecretChecks, SecretCheckBusyError, type SecretCheckLimits, type SecretChecks, type SecretCheckStats,
} from './secret-checks.js';
export type { SigningAlgorithm, SigningKeyPersistence } from './signing-keys.js';
/**
 * Verifies bearer JWTs against the identity provider's JWKS (cached on disk), a local key file and
 * in-process keys; refusals are UnauthorizedErrors that say why.
 */
export { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './tokens.js';
export {
  actionIncludes, administers, allows, checkPermissionRules, requireRight, type HeldPermissions,
} from './policy.js';
export { claimAt, principalOf, subjectUri, type ClaimsOptions } from './principal.js';
export { createAuthenticator, type Authenticator, type AuthenticatorDeps, type ObservedRights } from './authenticator.js';
