// The auth module's public surface: token verification (jose), principals from claims, the pure
// permission policy, and the built-in identity provider. Persistence is injected (store implements it).

/**
 * Verifies bearer JWTs against the identity provider's JWKS (cached on disk), a local key file and
 * in-process keys; refusals are UnauthorizedErrors that say why.
 */
export { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './tokens.js';
