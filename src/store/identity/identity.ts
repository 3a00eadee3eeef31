// Persistence of the built-in identity provider: users, OAuth clients and token signing keys.
// Roles and groups are stored as JSON lists; secrets arrive already hashed (auth owns the format).

import type BetterSqlite3 from 'better-sqlite3';
import type { IdentityClient, IdentitySubject, IdentityUser, SigningKeyRecord } from '../../lib/index.js';
import { AlreadyExistsError } from '../../ngsi/index.js';

export interface IdentityRepository {
  findUser(username: string): IdentityUser | undefined;
  findClient(clientId: string): IdentityClient | undefined;
  /** Throws AlreadyExistsError when the username or the sub is taken. */
  insertUser(user: IdentityUser): void;
  /** Throws AlreadyExistsError when the client id or the sub is taken. */
  insertClient(client: IdentityClient): void;
  deleteUser(username: string): boolean;
  deleteClient(clientId: string): boolean;
  /** In creation order. */
  listUsers(page: { limit: number; offset: number }): IdentityUser[];
  listClients(page: { limit: number; offset: number }): IdentityClient[];
  /** Every signing key, newest first. */
  signingKeys(): SigningKeyRecord[];
  /** Adds a key; a key with the same kid is left as it is. */
  addSigningKey(key: SigningKeyRecord): void;
  /** The `sub`, roles and groups of every user and client (at most `limit`). */
  subjects(limit: number): IdentitySubject[];
  /**
   * Changes whenever users or clients may have changed: a commit by another connection (such as
   * scripts/idp.mjs, which writes while the broker runs) or an insert or delete through this repository.
   */
  changeMark(): string;
}

interface UserRow {
  username: string;
  sub: string;
  password_hash: string;
  given_name: string | null;
  family_name: string | null;
  roles: string;
  groups: string;
  created_at: number;
}

interface ClientRow {
  client_id: string;
  sub: string;
  secret_hash: string;
  roles: string;
  groups: string;
  created_at: number;
}

interface KeyRow {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
}

const USER_COLUMNS = 'username, sub, password_hash, given_name, family_name, roles, groups, created_at';
const CLIENT_COLUMNS = 'client_id, sub, secret_hash, roles, groups, created_at';
/** Far more than a gateway ever holds; a rotation adds one key. */
const MAX_KEYS = 100;

/** A JSON list of strings as written by this module or the idp script; anything else reads as empty. */
function stringList(text: string): string[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function toUser(r: UserRow): IdentityUser {
  const user: IdentityUser = {
    username: r.username, sub: r.sub, passwordHash: r.password_hash, roles: stringList(r.roles), groups: stringList(r.groups), createdAt: r.created_at,
  };
  if (r.given_name !== null) user.givenName = r.given_name;
  if (r.family_name !== null) user.familyName = r.family_name;
  return user;
}

const toClient = (r: ClientRow): IdentityClient => ({
  clientId: r.client_id, sub: r.sub, secretHash: r.secret_hash, roles: stringList(r.roles), groups: stringList(r.groups), createdAt: r.created_at,
});

const toKey = (r: KeyRow): SigningKeyRecord => ({
  kid: r.kid, alg: r.alg, privateJwk: r.private_jwk, publicJwk: r.public_jwk, createdAt: r.created_at,
});

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export function createIdentityRepository(db: BetterSqlite3.Database): IdentityRepository {
  const userByName = db.prepare<[string], UserRow>(`SELECT ${USER_COLUMNS} FROM idp_users WHERE username = ?`);
  const clientById = db.prepare<[string], ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM idp_clients WHERE client_id = ?`);
  const insertUser = db.prepare<[UserRow]>(
    `INSERT INTO idp_users (${USER_COLUMNS}) VALUES (@username, @sub, @password_hash, @given_name, @family_name, @roles, @groups, @created_at)`,
  );
  const insertClient = db.prepare<[ClientRow]>(
    `INSERT INTO idp_clients (${CLIENT_COLUMNS}) VALUES (@client_id, @sub, @secret_hash, @roles, @groups, @created_at)`,
  );
  const deleteUser = db.prepare<[string]>('DELETE FROM idp_users WHERE username = ?');
  const deleteClient = db.prepare<[string]>('DELETE FROM idp_clients WHERE client_id = ?');
  const users = db.prepare<[number, number], UserRow>(`SELECT ${USER_COLUMNS} FROM idp_users ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`);
  const clients = db.prepare<[number, number], ClientRow>(`SELECT ${CLIENT_COLUMNS} FROM idp_clients ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`);
  const keys = db.prepare<[number], KeyRow>(
    'SELECT kid, alg, private_jwk, public_jwk, created_at FROM idp_signing_keys ORDER BY created_at DESC, rowid DESC LIMIT CAST(? AS INTEGER)',
  );
  const subjects = db.prepare<[number], { sub: string; roles: string; groups: string }>(
    'SELECT sub, roles, groups FROM idp_users UNION ALL SELECT sub, roles, groups FROM idp_clients LIMIT CAST(? AS INTEGER)',
  );
  // NOTE: PRAGMA data_version changes on this connection only when another connection committed.
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let localChanges = 0;
  const addKey = db.prepare<[KeyRow]>(
    `INSERT INTO idp_signing_keys (kid, alg, private_jwk, public_jwk, created_at) VALUES (@kid, @alg, @private_jwk, @public_jwk, @created_at)
     ON CONFLICT (kid) DO NOTHING`,
  );

  const insertOrThrow = (run: () => void, what: string): void => {
    try {
      run();
    } catch (err) {
      if (isUniqueViolation(err)) throw new AlreadyExistsError('Already exists', `${what} already exists`, { cause: err });
      throw err;
    }
  };

  return {
    findUser(username) {
      const row = userByName.get(username);
      return row && toUser(row);
    },
    findClient(clientId) {
      const row = clientById.get(clientId);
      return row && toClient(row);
    },
    insertUser(u) {
      const row: UserRow = {
        username: u.username, sub: u.sub, password_hash: u.passwordHash, given_name: u.givenName ?? null, family_name: u.familyName ?? null,
        roles: JSON.stringify(u.roles), groups: JSON.stringify(u.groups), created_at: u.createdAt,
      };
      insertOrThrow(() => insertUser.run(row), `A user named ${u.username} or with sub ${u.sub}`);
      localChanges += 1;
    },
    insertClient(cl) {
      const row: ClientRow = {
        client_id: cl.clientId, sub: cl.sub, secret_hash: cl.secretHash, roles: JSON.stringify(cl.roles), groups: JSON.stringify(cl.groups),
        created_at: cl.createdAt,
      };
      insertOrThrow(() => insertClient.run(row), `A client ${cl.clientId} or with sub ${cl.sub}`);
      localChanges += 1;
    },
    deleteUser(username) {
      localChanges += 1;
      return deleteUser.run(username).changes > 0;
    },
    deleteClient(clientId) {
      localChanges += 1;
      return deleteClient.run(clientId).changes > 0;
    },
    listUsers: (p) => users.all(p.limit, p.offset).map(toUser),
    listClients: (p) => clients.all(p.limit, p.offset).map(toClient),
    signingKeys: () => keys.all(MAX_KEYS).map(toKey),
    addSigningKey(k) {
      addKey.run({ kid: k.kid, alg: k.alg, private_jwk: k.privateJwk, public_jwk: k.publicJwk, created_at: k.createdAt });
    },
    subjects: (limit) => subjects.all(limit).map((r) => ({ sub: r.sub, roles: stringList(r.roles), groups: stringList(r.groups) })),
    changeMark: () => `${dataVersion.get() ?? 0}.${localChanges}`,
  };
}
