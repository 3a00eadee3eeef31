// The optional built-in identity provider: users and clients from the store, OAuth 2.0 token grants
// (RFC 6749 §4.3 password, §4.4 client credentials) answered with JWTs signed by its own keys, which
// the broker trusts without any network, as long as their subject is still one of its users or clients.

import { randomBytes } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import type { Clock, IdentityClient, IdentitySubject, IdentityUser, IdGenerator, Logger } from '../lib/index.js';
import { hashSecret, hashSecretAsync, verifySecret } from './secret-hash.js';
import { loadSigningKeys, type SigningAlgorithm, type SigningKeyPersistence } from './signing-keys.js';

export interface IdentityPersistence extends SigningKeyPersistence {
  findUser(username: string): IdentityUser | undefined;
  findClient(clientId: string): IdentityClient | undefined;
  /** The `sub`, roles and groups of every user and client (at most `limit`). */
  subjects(limit: number): IdentitySubject[];
  /** Changes whenever users or clients may have changed, whoever changed them. */
  changeMark(): string;
}

export interface IdentityProviderDeps {
  persistence: IdentityPersistence;
  clock: Clock;
  /** Draws each token's `jti`. */
  newId: IdGenerator;
  /** `iss` of issued tokens; read at each grant (the port may be known only once listening). */
  issuer: () => string;
  tokenLifetimeSec: number;
  algorithm: SigningAlgorithm;
  /** `aud` of issued tokens; none when absent. */
  audience?: string;
  /** Checks a secret against its hash (the global bound on checks); verifySecret when absent. */
  checkSecret?: (secret: string, hash: string) => Promise<boolean>;
  log: Logger;
  /**
   * Called after a refresh that found the users and clients changed, with the subjects no longer
   * among them (their subscriptions stop, their MQTT connections close).
   */
  onSubjectsChanged?: (removed: readonly string[]) => void;
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** A token request, already read from its form (RFC 6749 §4.3.2, §4.4.2). */
export type TokenGrant =
  | { grantType: 'client_credentials'; client: ClientCredentials }
  | { grantType: 'password'; username: string; password: string; client?: ClientCredentials };

/** RFC 6749 §5.1 successful response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** RFC 6749 §5.2 error codes. */
export type TokenErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type';

/** A refused token request; `code` is its RFC 6749 §5.2 error. */
export class TokenRequestError extends Error {
  override name = 'TokenRequestError';
  constructor(readonly code: TokenErrorCode, description: string) {
    super(description);
  }
}

export interface IdentityProvider {
  /** The public halves of the signing keys (RFC 7517 JWK Set): never a private member. */
  publicJwks(): { keys: JWK[] };
  /** `iss` of the tokens it issues. */
  issuer(): string;
  /** Whether `sub` is one of its users or clients, as of the last refresh (each token grant refreshes too); in memory. */
  hasSubject(sub: string): boolean;
  /** The roles and groups of one of its users or clients as of the last refresh; undefined when not one. In memory. */
  localSubject(sub: string): IdentitySubject | undefined;
  /** Reloads the users and clients when they changed since the last refresh (one cheap query otherwise). */
  refreshSubjects(): void;
  /**
   * Checks the credentials of a grant and signs a token; throws TokenRequestError when refused, and
   * SecretCheckBusyError when too many checks are in progress already.
   */
  issueToken(grant: TokenGrant): Promise<TokenResponse>;
  /** OpenID Connect Discovery 1.0 §3 metadata, with endpoints under `baseUrl`. */
  openidConfiguration(baseUrl: string): Record<string, unknown>;
  hashSecret(secret: string): string;
  verifySecret(secret: string, hash: string): Promise<boolean>;
}

/**
 * Users and clients held in memory for the per-request check of a token's subject. NOTE: far more than
 * a gateway has; beyond, the tokens of the subjects left out are refused, and a warning says so.
 */
const MAX_SUBJECTS = 100_000;

/** What the subject of a token is given besides its roles and groups. */
type Subject = { sub: string; roles: string[]; groups: string[]; claims: Record<string, unknown> };

/** The OpenID Provider Metadata of the built-in provider (discovery document). */
function openidConfiguration(issuer: string, baseUrl: string, alg: string): Record<string, unknown> {
  return {
    issuer,
    token_endpoint: `${baseUrl}/auth/token`,
    jwks_uri: `${baseUrl}/auth/jwks`,
    grant_types_supported: ['client_credentials', 'password'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [alg],
    claims_supported: [
      'iss', 'sub', 'aud', 'iat', 'exp', 'jti', 'preferred_username', 'given_name', 'family_name', 'realm_access', 'groups', 'client_id', 'azp',
    ],
  };
}

export function createIdentityProvider(deps: IdentityProviderDeps): IdentityProvider {
  const { persistence, clock, log } = deps;
  const keys = loadSigningKeys(persistence, deps.algorithm, clock.now(), log);
  let dummyHash: Promise<string> | undefined;
  // NOTE: an unknown user or client is checked against this hash, so a refusal takes as long
  // whether or not the name exists. Made off the main thread on first need: made synchronously, the
  // first unknown name of a flood of failed logins would stall every request for a whole hash.
  const dummy = (): Promise<string> => (dummyHash ??= hashSecretAsync(randomBytes(16).toString('base64url')).catch((err: unknown) => {
    dummyHash = undefined;
    throw err;
  }));
  const checkSecret = deps.checkSecret ?? verifySecret;
  let subjects = new Map<string, IdentitySubject>();
  let subjectsMark: string | undefined;

  function refreshSubjects(): void {
    const mark = persistence.changeMark();
    if (mark === subjectsMark) return;
    const list = persistence.subjects(MAX_SUBJECTS);
    if (list.length >= MAX_SUBJECTS) log.warn('too many users and clients: the tokens of some are refused', { max: MAX_SUBJECTS });
    const previous = subjects;
    subjects = new Map(list.map((s) => [s.sub, s]));
    const isFirst = subjectsMark === undefined;
    subjectsMark = mark;
    if (isFirst || deps.onSubjectsChanged === undefined) return;
    const removed = [...previous.keys()].filter((sub) => !subjects.has(sub));
    deps.onSubjectsChanged(removed);
  }
  refreshSubjects();

  async function authenticateClient(credentials: ClientCredentials): Promise<IdentityClient> {
    const client = persistence.findClient(credentials.clientId);
    const isValid = await checkSecret(credentials.clientSecret, client?.secretHash ?? await dummy());
    if (!client || !isValid) {
      log.info('token refused: client authentication failed', { clientId: credentials.clientId });
      throw new TokenRequestError('invalid_client', 'Client authentication failed');
    }
    return client;
  }

  async function subjectOf(grant: TokenGrant): Promise<Subject> {
    switch (grant.grantType) {
      case 'client_credentials': {
        const client = await authenticateClient(grant.client);
        return { sub: client.sub, roles: client.roles, groups: client.groups, claims: { client_id: client.clientId, azp: client.clientId } };
      }
      case 'password': {
        const client = grant.client ? await authenticateClient(grant.client) : undefined;
        const user = persistence.findUser(grant.username);
        const isValid = await checkSecret(grant.password, user?.passwordHash ?? await dummy());
        if (!user || !isValid) {
          log.info('token refused: wrong username or password', { username: grant.username });
          throw new TokenRequestError('invalid_grant', 'Invalid username or password');
        }
        const claims: Record<string, unknown> = { preferred_username: grant.username };
        if (user.givenName !== undefined) claims['given_name'] = user.givenName;
        if (user.familyName !== undefined) claims['family_name'] = user.familyName;
        if (client) claims['azp'] = client.clientId;
        return { sub: user.sub, roles: user.roles, groups: user.groups, claims };
      }
    }
  }

  return {
    publicJwks: () => ({ keys: keys.publicJwks.map((k) => ({ ...k })) }),
    issuer: () => deps.issuer(),
    hasSubject: (sub) => subjects.has(sub),
    localSubject: (sub) => subjects.get(sub),
    refreshSubjects,
    async issueToken(grant) {
      const subject = await subjectOf(grant);
      // A user or client added since the last refresh gets a token that works at once. NOTE: read
      // again rather than added: one removed while its grant was checked must not come back.
      refreshSubjects();
      const iat = Math.floor(clock.now() / 1000);
      const jwt = new SignJWT({ ...subject.claims, realm_access: { roles: subject.roles }, groups: subject.groups })
        .setProtectedHeader({ alg: keys.current.alg, kid: keys.current.kid, typ: 'JWT' })
        .setIssuer(deps.issuer())
        .setSubject(subject.sub)
        .setIssuedAt(iat)
        .setExpirationTime(iat + deps.tokenLifetimeSec)
        .setJti(deps.newId());
      if (deps.audience !== undefined) jwt.setAudience(deps.audience);
      const token = await jwt.sign(keys.current.privateKey);
      log.debug('token issued', { grantType: grant.grantType, sub: subject.sub });
      return { access_token: token, token_type: 'Bearer', expires_in: deps.tokenLifetimeSec };
    },
    openidConfiguration: (baseUrl) => openidConfiguration(deps.issuer(), baseUrl, keys.current.alg),
    hashSecret,
    verifySecret,
  };
}
