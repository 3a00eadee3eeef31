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
import {
  createPermissionService, createSubjectRightsCache, createSubjectService, type PermissionService, type SubjectRightsCache, type SubjectService,
} from '../permissions/index.js';
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
  /** The rights of subjects now (what subscription owners' notifications follow), kept until a subject changes. */
  rights: SubjectRightsCache;
  /** Registers what to do once a subject is deleted (a registry user, or a user or client of the identity provider). */
  onSubjectGone(listener: (subject: string) => void): void;
}

/** Tells the rights cache of every change of a subject, and the listeners of the deleted ones. */
function createSubjectEvents(rights: SubjectRightsCache, log: Logger): {
  gone: Array<(subject: string) => void>;
  changed(subject: string | undefined, deleted: boolean): void;
} {
  const gone: Array<(subject: string) => void> = [];
  return {
    gone,
    changed(subject, deleted) {
      rights.changed(subject);
      if (!deleted || subject === undefined) return;
      for (const listener of gone) {
        try {
          listener(subject);
        } catch (err) {
          log.warn('what follows a deleted subject failed', { subject, err });
        }
      }
    },
  };
}

function buildIdentity(deps: AuthDeps, events: ReturnType<typeof createSubjectEvents>): IdentityProvider | undefined {
  const { config, clock, log, store } = deps;
  const idp = config.application.identityProvider;
  const audience = config.application.authentication.audience;
  if (!idp.enabled) return undefined;
  return createIdentityProvider({
    persistence: store.identity, clock, newId: deps.newId ?? uuid, issuer: () => idp.issuer || deps.publicUrl(), tokenLifetimeSec: idp.tokenLifetime,
    algorithm: idp.algorithm, checkSecret: deps.checkSecret, log: log.child('idp'), ...(audience ? { audience } : {}),
    // Users or clients changed (scripts/idp.mjs): every owner's rights are read again; the removed ones are gone.
    onSubjectsChanged: (removed) => {
      events.changed(undefined, false);
      for (const sub of removed) events.changed(sub, true);
    },
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
  const claims = { adminRole: authConfig.adminRole, claimsPaths: authConfig.claimsPaths.split(',') };
  // NOTE: the identity provider tells the cache of its changes, so it is built after the cache, which reads it.
  let identity: IdentityProvider | undefined;
  const rights = createSubjectRightsCache({
    subjects: store.subjects, claims, ...(config.application.identityProvider.enabled ? { localSubject: (sub: string) => identity?.localSubject(sub) } : {}),
  });
  const events = createSubjectEvents(rights, log.child('subjects'));
  const subjects = createSubjectService({
    store, core, clock, log: log.child('subjects'), cascade: config.search.onOwnerDeleteCascadeEntities, onChange: events.changed,
  });
  identity = buildIdentity(deps, events);
  const verifier = buildVerifier(deps, identity);
  const auth = verifier && createAuthenticator({
    verifier, clock, observe: (tokenClaims, observed) => subjects.observe(tokenClaims, observed),
    claims,
    allowPublic: authConfig.allowPublicPermission,
    // A deleted user's or client's tokens stop working at the next refresh of the provider's subjects.
    isLocalSubject: identity && ((sub) => identity.hasSubject(sub)),
  });
  return { permissions, subjects, verifier, auth, identity, rights, onSubjectGone: (listener) => void events.gone.push(listener) };
}
