// Authentication and permissions: the permission and subject services, the token verifier (local
// keys, JWKS with a cache next to the database), the authenticator, and the optional built-in
// identity provider whose keys the verifier trusts with no network.

import { dirname, join } from 'node:path';
import {
  createAuthenticator, createIdentityProvider, createTokenVerifier, type Authenticator, type IdentityProvider, type TokenVerifier,
} from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { WriteCore } from '../events.js';
import {
  allowEntriesOf, createHostAllowList, createOutboundFetch, timeOrderedUuid, uuid, type Clock, type IdGenerator, type Logger,
} from '../lib/index.js';
import { createPermissionService, createSubjectService, type PermissionService, type SubjectService } from '../permissions/index.js';
import type { Store } from '../store/index.js';

export interface AuthDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  store: Store;
  core: WriteCore;
  newId?: IdGenerator | undefined;
  fetch?: typeof fetch | undefined;
  dbPath?: string | undefined;
  /** The URL the broker is reached at (the identity provider's default issuer). */
  publicUrl(): string;
  /** Checks a password against its hash within the gateway's bound on such checks. */
  checkSecret(secret: string, hash: string): Promise<boolean>;
}

export interface AuthParts {
  permissions: PermissionService;
  subjects: SubjectService;
  /** Undefined when authentication is off. */
  verifier: TokenVerifier | undefined;
  auth: Authenticator | undefined;
  identity: IdentityProvider | undefined;
}

function buildIdentity(deps: AuthDeps): IdentityProvider | undefined {
  const { config, clock, log, store } = deps;
  const idp = config.application.identityProvider;
  const audience = config.application.authentication.audience;
  if (!idp.enabled) return undefined;
  return createIdentityProvider({
    persistence: store.identity, clock, newId: deps.newId ?? uuid, issuer: () => idp.issuer || deps.publicUrl(), tokenLifetimeSec: idp.tokenLifetime,
    algorithm: idp.algorithm, checkSecret: deps.checkSecret, log: log.child('idp'), ...(audience ? { audience } : {}),
  });
}

function buildVerifier(deps: AuthDeps, identity: IdentityProvider | undefined): TokenVerifier | undefined {
  const { config, clock, log } = deps;
  const authConfig = config.application.authentication;
  if (!authConfig.enabled) return undefined;
  const localJwks = identity?.publicJwks();
  return createTokenVerifier({
    jwksUri: authConfig.jwksUri, publicKeyFile: authConfig.publicKeyFile, issuer: authConfig.issuer, audience: authConfig.audience,
    clockToleranceSec: authConfig.clockTolerance, refreshIntervalMs: authConfig.jwksRefreshInterval, timeoutMs: authConfig.jwksTimeout,
    // NOTE: next to the database, so a gateway restarted offline still verifies tokens; none for an in-memory store.
    ...(deps.dbPath === ':memory:' ? {} : { cacheFile: join(deps.dbPath === undefined ? config.storage.dir : dirname(deps.dbPath), 'jwks-cache.json') }),
    // The JWKS through the outbound client: the JWKS URI's host and port, or public addresses.
    fetch: deps.fetch ?? createOutboundFetch(createHostAllowList(allowEntriesOf([authConfig.jwksUri]), true)),
    // The built-in identity provider's keys are trusted with no network; they are fixed for the run,
    // so the same objects are handed over at each verification.
    ...(identity ? { localKeys: () => localJwks, localIssuer: () => identity.issuer() } : {}),
    clock, log: log.child('auth'),
  });
}

export function buildAuth(deps: AuthDeps): AuthParts {
  const { config, clock, log, store, core } = deps;
  const authConfig = config.application.authentication;
  const permissions = createPermissionService({
    store, clock, newId: deps.newId ?? timeOrderedUuid, enabled: authConfig.enabled, allowPublic: authConfig.allowPublicPermission,
  });
  const subjects = createSubjectService({ store, core, clock, log: log.child('subjects'), cascade: config.search.onOwnerDeleteCascadeEntities });
  const identity = buildIdentity(deps);
  const verifier = buildVerifier(deps, identity);
  const auth = verifier && createAuthenticator({
    verifier, clock, observe: (claims) => subjects.observe(claims),
    claims: { adminRole: authConfig.adminRole, claimsPaths: authConfig.claimsPaths.split(',') },
    allowPublic: authConfig.allowPublicPermission,
    // A deleted user's or client's tokens stop working at the next refresh of the provider's subjects.
    isLocalSubject: identity && ((sub) => identity.hasSubject(sub)),
  });
  return { permissions, subjects, verifier, auth, identity };
}
