// Why a token was refused, as an UnauthorizedError whose detail names the reason. Details are fixed
// phrases: they never quote the token, its parts or its claims.

import { errors } from 'jose';
import { UnauthorizedError } from '../ngsi/index.js';

const TITLE = 'The access token is not valid';

export const REASONS = {
  malformed: 'the token is malformed (not a signed JWT in compact form)',
  unsupportedAlgorithm: 'the token is signed with an unsupported algorithm',
  unknownKey: 'no trusted key matches the token (unknown key)',
  badSignature: 'the token signature does not verify with the trusted key (bad signature)',
  expired: 'the token has expired',
  notYetValid: 'the token is not yet valid (nbf is in the future)',
  wrongIssuer: 'the token has the wrong issuer',
  wrongAudience: 'the token has the wrong audience',
  noSubject: 'the token has no subject (sub)',
  noExpiry: 'the token has no expiry (exp): tokens must expire',
  subjectGone: 'the token\'s subject no longer exists at the identity provider',
  unverifiable: 'the token cannot be verified with the trusted keys',
} as const;

/**
 * NOTE: no `cause` is attached: jose's claim errors carry the decoded payload, which has no place in
 * an error that may be logged.
 */
export function unauthorized(reason: string): UnauthorizedError {
  return new UnauthorizedError(TITLE, reason);
}

/** The refusal for an error thrown by jose's jwtVerify. */
export function refusalOf(err: unknown): UnauthorizedError {
  return unauthorized(reasonOf(err));
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return REASONS.expired;
  if (err instanceof errors.JWTClaimValidationFailed) return claimReason(err);
  if (err instanceof errors.JWSSignatureVerificationFailed) return REASONS.badSignature;
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return REASONS.unsupportedAlgorithm;
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return REASONS.malformed;
  // A key jose refuses for the algorithm (an RSA modulus under 2048 bits) fails with a TypeError.
  return REASONS.unverifiable;
}

function claimReason(err: errors.JWTClaimValidationFailed): string {
  if (err.reason === 'missing') {
    if (err.claim === 'sub') return REASONS.noSubject;
    return err.claim === 'exp' ? REASONS.noExpiry : `the token has no ${safeClaim(err.claim)} claim`;
  }
  if (err.reason === 'invalid') return `the token's ${safeClaim(err.claim)} claim is not a valid value`;
  switch (err.claim) {
    case 'nbf': return REASONS.notYetValid;
    case 'iss': return REASONS.wrongIssuer;
    case 'aud': return REASONS.wrongAudience;
    case 'iat': return 'the token is issued in the future';
    default: return `the token's ${safeClaim(err.claim)} claim is not accepted`;
  }
}

/** jose names registered claims only; anything else is left out rather than echoed. */
function safeClaim(claim: string): string {
  return /^[a-z]{2,4}$/.test(claim) ? claim : 'required';
}
