// The subject registry (interface 2.8, 4.8; behaviour §8): users and groups learnt from the claims of
// valid tokens, listed for administrators, and the deletion of a user with, when configured, every
// entity it owns (interface 6 item 4).

import { claimAt, subjectUri, type ObservedRights } from '../auth/index.js';
import { AccessDeniedError, ResourceNotFoundError, anonymousIn, type Principal } from '../ngsi/index.js';
import type { WriteCore } from '../events.js';
import type { Clock, Logger } from '../lib/index.js';
import type { Store, SubjectRecord } from '../store/index.js';

export interface GroupView {
  id: string;
  name: string;
  /** Only in the administrator's answer, where every group is listed. */
  isMemberOf?: boolean;
}

export interface UserView {
  id: string;
  username: string;
  givenName?: string;
  familyName?: string;
  subjectInfo?: Record<string, unknown>;
}

export interface SubjectService {
  /**
   * Learns the user and groups of a verified token, and the rights it gives (what the notifications
   * of the user's subscriptions follow); writes only when something changed.
   */
  observe(claims: Record<string, unknown>, rights?: ObservedRights): void;
  /** Interface 4.8: the caller's groups; every group, with isMemberOf, for an administrator. */
  groups(actor: Principal): GroupView[];
  /** Interface 4.8: every user; administrators only (403). */
  users(actor: Principal): UserView[];
  /** Removes a user (administrators only); with cascade, every entity it owns goes for good. */
  deleteUser(actor: Principal, id: string): Promise<{ entitiesDeleted: number }>;
  /** A subject as 2.7 details show it (assignee / assigner). */
  describe(id: string): { subjectId: string; subjectType?: 'USER' | 'GROUP'; subjectInfo?: Record<string, unknown> };
}

export interface SubjectServiceDeps {
  store: Pick<Store, 'subjects' | 'permissions' | 'transaction'>;
  core: WriteCore;
  clock: Clock;
  log: Logger;
  /** search.on-owner-delete-cascade-entities */
  cascade: boolean;
  /** Told after a user's record changed (`deleted`: removed); the rights of subscription owners are read again. */
  onChange?: (subject: string, deleted: boolean) => void;
}

/** Claims that describe the token, not the user: never copied into subjectInfo. */
const TOKEN_CLAIMS = new Set([
  'iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'azp', 'typ', 'scope', 'sid', 'session_state', 'acr', 'auth_time', 'nonce', 'at_hash',
  'realm_access', 'resource_access', 'allowed-origins', 'groups', 'preferred_username', 'given_name', 'family_name', 'client_id',
  'clientId', 'clientHost', 'clientAddress',
]);

/** The member of a user's info that keeps the rights of its last token. */
export const ACCESS_INFO = 'access';

/** A group claim value as a name: Keycloak sends paths (`/Plant/Operators`). */
const groupName = (value: string): string => value.replace(/^\/+/, '');

/** Most users remembered as unchanged since their last token. */
const SEEN_CACHE = 10_000;

type SubjectRepository = SubjectServiceDeps['store']['subjects'];

function userOf(r: SubjectRecord): UserView {
  const info = r.info;
  const out: UserView = { id: subjectUri('User', r.id), username: typeof info['username'] === 'string' ? info['username'] : r.id };
  if (typeof info['givenName'] === 'string') out.givenName = info['givenName'];
  if (typeof info['familyName'] === 'string') out.familyName = info['familyName'];
  const extra = info['subjectInfo'];
  if (extra !== null && typeof extra === 'object' && Object.keys(extra).length > 0) out.subjectInfo = extra as Record<string, unknown>;
  return out;
}

/**
 * A subject of the kind by its id as stored (the claim value: `sub`, a group) or as the subject API
 * shows it (its URI, see subjectUri): permissions name subjects either way.
 */
function findSubject(subjects: SubjectRepository, kind: SubjectRecord['kind'], id: string): SubjectRecord | undefined {
  const direct = subjects.get(id);
  if (direct?.kind === kind) return direct;
  const prefix = subjectUri(kind, '');
  if (!id.startsWith(prefix)) return undefined;
  let stored: string;
  try {
    stored = decodeURIComponent(id.slice(prefix.length));
  } catch {
    return undefined;
  }
  const record = subjects.get(stored);
  return record?.kind === kind && subjectUri(kind, record.id) === id ? record : undefined;
}

/**
 * What the registry keeps of a user from the claims of its token (`sub` aside), with the rights the
 * token gave (`access`: never shown, read through subject-rights.ts).
 */
function userInfoOf(claims: Record<string, unknown>, sub: string, groups: string[], rights: ObservedRights | undefined): Record<string, unknown> {
  const subjectInfo = Object.fromEntries(Object.entries(claims).filter(([k]) => !TOKEN_CLAIMS.has(k)));
  const info: Record<string, unknown> = { username: typeof claims['preferred_username'] === 'string' ? claims['preferred_username'] : sub, groups };
  if (rights !== undefined) info[ACCESS_INFO] = { admin: rights.admin, assignees: [...rights.assignees], local: rights.isLocal };
  if (typeof claims['given_name'] === 'string') info['givenName'] = claims['given_name'];
  if (typeof claims['family_name'] === 'string') info['familyName'] = claims['family_name'];
  if (Object.keys(subjectInfo).length > 0) info['subjectInfo'] = subjectInfo;
  return info;
}

function groupsFor(subjects: SubjectRepository, actor: Principal): GroupView[] {
  if (!actor.admin) return actor.groups.map((g) => ({ id: subjectUri('Group', g), name: groupName(g) }));
  const known = new Map(subjects.list('Group').map((g) => [g.id, g]));
  for (const g of actor.groups) if (!known.has(g)) known.set(g, { id: g, kind: 'Group', info: { name: groupName(g) }, updatedAt: 0 });
  return [...known.values()].map((g) => ({
    id: subjectUri('Group', g.id), name: typeof g.info['name'] === 'string' ? g.info['name'] : groupName(g.id), isMemberOf: actor.groups.includes(g.id),
  }));
}

/** Interface 6 item 4: every entity the user owns is deleted for good (its history and permissions too); how many went. */
async function purgeOwned(deps: SubjectServiceDeps, userId: string): Promise<number> {
  const owned = deps.store.permissions.ownedBy(userId);
  const byTenant = new Map<string, string[]>();
  for (const { tenant, id: entityId } of owned) byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), entityId]);
  let entitiesDeleted = 0;
  for (const [tenant, ids] of byTenant) {
    entitiesDeleted += await deps.core.write(anonymousIn(tenant), (tx) => ids.filter((entityId) => tx.purge(entityId)).length);
  }
  return entitiesDeleted;
}

function describeSubject(subjects: SubjectRepository, id: string): ReturnType<SubjectService['describe']> {
  const record = findSubject(subjects, 'User', id) ?? findSubject(subjects, 'Group', id);
  if (record?.kind === 'User') {
    const u = userOf(record);
    const subjectInfo: Record<string, unknown> = { username: u.username };
    if (u.givenName !== undefined) subjectInfo['givenName'] = u.givenName;
    if (u.familyName !== undefined) subjectInfo['familyName'] = u.familyName;
    return { subjectId: id, subjectType: 'USER', subjectInfo };
  }
  if (record?.kind === 'Group') return { subjectId: id, subjectType: 'GROUP', subjectInfo: { name: record.info['name'] } };
  return { subjectId: id };
}

export function createSubjectService(deps: SubjectServiceDeps): SubjectService {
  const { store, clock, log, cascade } = deps;
  const { subjects } = store;
  /** The last info written per subject, so a token seen again costs no write. */
  let seen = new Map<string, string>();

  const put = (record: SubjectRecord): void => {
    const key = `${record.kind}\u0000${JSON.stringify(record.info)}`;
    if (seen.get(record.id) === key) return;
    if (subjects.put(record)) deps.onChange?.(record.id, false);
    if (seen.size >= SEEN_CACHE) seen = new Map();
    seen.set(record.id, key);
  };

  return {
    observe(claims, rights) {
      const sub = claims['sub'];
      if (typeof sub !== 'string') return;
      const now = clock.now();
      const groups = claimAt(claims, 'groups');
      const info = userInfoOf(claims, sub, groups, rights);
      try {
        store.transaction(() => {
          put({ id: sub, kind: 'User', info, updatedAt: now });
          for (const g of groups) put({ id: g, kind: 'Group', info: { name: groupName(g) }, updatedAt: now });
        });
      } catch (err) {
        // The registry is a convenience: a failed write never fails the request that carried the token.
        log.warn('subject registry not updated', { err });
      }
    },

    groups: (actor) => groupsFor(subjects, actor),

    users(actor) {
      if (!actor.admin) throw new AccessDeniedError('Access denied', 'Listing users needs the admin role');
      return subjects.list('User').map(userOf);
    },

    async deleteUser(actor, id) {
      // NOTE: the role is checked before existence: only administrators may list users, so nobody else
      // learns from a 404 which users exist.
      if (!actor.admin) throw new AccessDeniedError('Access denied', 'Deleting a user needs the admin role');
      const user = findSubject(subjects, 'User', id);
      if (!user) throw new ResourceNotFoundError('User not found', id);
      const entitiesDeleted = cascade ? await purgeOwned(deps, user.id) : 0;
      store.transaction(() => {
        // Its permissions name it by claim value or by URI (principalOf gives the user both).
        store.permissions.removeAssignedTo(user.id);
        store.permissions.removeAssignedTo(subjectUri('User', user.id));
        subjects.delete(user.id);
      });
      seen.delete(user.id);
      deps.onChange?.(user.id, true);
      log.info('user deleted', { user: user.id, entitiesDeleted });
      return { entitiesDeleted };
    },

    describe: (id) => describeSubject(subjects, id),
  };
}
