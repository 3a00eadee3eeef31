// The HTTP authorization matrix (authentication on, built-in identity provider on): every route and
// method the app registers × every kind of caller, one test per cell, on the real app and real data.
//
// Callers: none (no Authorization header), forged (an administrator's claims signed by a key the
// broker does not trust), expired (an administrator's token past its exp), stranger (a valid token,
// no permission on anything), reader / writer (read / write permission on the target entity), owner
// (created the target: own on the entity, creator of the subscription), admin (the admin role), and
// absent (the stranger naming a target that does not exist, where the path names one).
//
// A row says what a route needs; the expected outcome of each cell follows from it (expectedOf):
//   open       outside the token check (tokens are not even read): everyone
//   anonymous  no token needed; a token given is verified (served @contexts)
//   token      any valid token
//   read, write, own   that right on the target entity (own: its owner; for a subscription: its creator)
//   admin      the admin role
// and what a caller without it gets: 403 by default, `refused` otherwise ('hidden': a 2xx answer that
// leaves the target out or untouched, 404: existence hidden), `unreadable` for those that may not
// even read the target (their listings never show it). `cells` names a documented exception.
// Outcomes: 'ok' (2xx or 3xx, and for a listing the target in it), 'hidden', or the status.
//
// Every cell that writes runs on targets of its own (a fresh world), so a delete that succeeds takes
// nothing from the next cell. A route registered without a row here fails the first test.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0 } from '../helpers/broker.js';
import {
  ABSENT, ASSET, REGISTRATION, SUBSCRIPTION, TYPE, V1, at, del, enc, get, send, startMatrixBroker, temperature, type Caller, type MatrixBroker, type Req,
  type Res, type World,
} from '../helpers/http-matrix.js';

/** The callers (test/helpers/http-matrix.ts), and `absent`: the stranger naming a target that does not exist. */
type Who = Caller | 'absent';
const WHO: readonly Who[] = ['none', 'forged', 'expired', 'stranger', 'reader', 'writer', 'owner', 'admin', 'absent'];
type Need = 'open' | 'anonymous' | 'token' | 'read' | 'write' | 'own' | 'admin';
type Outcome = 'ok' | 'hidden' | 401 | 403 | 404 | 503;

/** How far each subject's rights go on the target (and each need's threshold). */
const RANK: Partial<Record<Who | Need, number>> = { stranger: 0, reader: 1, writer: 2, owner: 3, admin: 4, token: 0, read: 1, write: 2, own: 3 };

interface Row {
  /** What the route needs (see the head of this file). */
  need: Need;
  /** What a subject without the right gets (default 403). */
  refused?: Outcome;
  /** What a subject that may not even read the target gets (default: as refused). */
  unreadable?: Outcome;
  /** Documented exceptions, by caller. */
  cells?: Partial<Record<Who, Outcome>>;
  /** What a caller that may gets (default 'ok'). */
  answer?: Outcome;
  /** What a caller without a token gets when public permissions are on, where expectedWithPublic cannot tell. */
  withPublic?: Outcome;
  /** A label when a route has several rows (targets of different kinds). */
  label?: string;
  req: (w: World) => Promise<Req> | Req;
  /** A listing: the target is in the answer when its text contains this. */
  mentions?: (w: World) => Promise<string> | string;
  /** A selection that acts on the target: whether the target was acted on. */
  effect?: (w: World) => Promise<boolean>;
  /** A batch: a 207 answer's outcome is the target's own error status. */
  batch?: true;
  /** Whether each cell gets targets of its own (default: every method but GET). */
  fresh?: boolean;
}

/** A new entity id of the caller's own making (nobody holds any permission on it). */
let made = 0;
const madeEntity = (): { id: string; type: string; made: object } => ({ id: `urn:ngsi-ld:MatrixMade:m${++made}`, type: 'MatrixMade', made: { type: 'Property', value: made } });
const permission = (base: string): Record<string, Row | Row[]> => ({
  [`POST ${base}`]: { need: 'own', req: async (w) => send('POST', base, { type: 'Permission', target: { id: await w.entity() }, assignee: 'urn:ngsi-ld:User:frank', action: 'read' }) },
  [`GET ${base}`]: { need: 'own', refused: 'hidden', req: async (w) => get(`${base}?targetId=${enc(await w.entity())}&action=read`), mentions: (w) => w.permission() },
  [`GET ${base}/:id`]: [
    { label: "another's", need: 'own', req: async (w) => get(`${base}/${enc(await w.permission())}`) },
    { label: "the reader's", need: 'own', cells: { reader: 'ok' }, req: async (w) => get(`${base}/${enc(await w.readerPermission())}`) },
  ],
  [`PATCH ${base}/:id`]: { need: 'own', req: async (w) => send('PATCH', `${base}/${enc(await w.permission())}`, { action: 'write' }) },
  [`DELETE ${base}/:id`]: { need: 'own', req: async (w) => del(`${base}/${enc(await w.permission())}`) },
  // Beside :id (one route in the table): the permissions assigned to the caller; the target is the reader's.
  [`GET ${base}/assigned`]: {
    need: 'token', cells: { stranger: 'hidden', writer: 'hidden', owner: 'hidden', admin: 'hidden' },
    req: async (w) => get(`${base}/assigned?targetId=${enc(await w.entity())}&action=read`), mentions: (w) => w.readerPermission(),
  },
});

const MATRIX: Record<string, Row | Row[]> = {
  // Operations, the identity provider and the dashboard: outside /ngsi-ld/, no token read.
  'GET /health': { need: 'open', req: () => get('/health') },
  // Not ready here (the MQTT listener is not started): the same answer for everyone.
  'GET /ready': { need: 'open', answer: 503, req: () => get('/ready') },
  'GET /metrics': { need: 'open', req: () => get('/metrics') },
  // The token endpoint reads Authorization as client authentication: a Bearer token there is a failed one (RFC 6749 §2.3.1).
  'POST /auth/token': {
    need: 'open', cells: { forged: 401, expired: 401, stranger: 401, reader: 401, writer: 401, owner: 401, admin: 401 },
    req: () => ({ method: 'POST', path: '/auth/token', form: { grant_type: 'password', username: 'zed', password: 'matrix password' } }),
  },
  'GET /auth/jwks': { need: 'open', req: () => get('/auth/jwks') },
  'GET /.well-known/openid-configuration': { need: 'open', req: () => get('/.well-known/openid-configuration') },
  'GET /': { need: 'open', req: () => get('/') },
  'GET /ui': { need: 'open', req: () => get('/ui/') },
  'GET /ui/config.json': { need: 'open', req: () => get('/ui/config.json') },
  'GET /ui/assets/:file': { need: 'open', req: () => get(`/ui/assets/${ASSET}`) },

  // Entities (behaviour §8: queries filter silently; existence is told before permission).
  [`POST ${V1}/entities`]: { need: 'token', req: () => send('POST', `${V1}/entities`, madeEntity()) },
  [`GET ${V1}/entities`]: { need: 'read', refused: 'hidden', req: async (w) => get(`${V1}/entities?type=${await w.type()}`), mentions: (w) => w.entity() },
  // Purge deletes what the caller may read of the selection: the rest is left alone, silently.
  [`DELETE ${V1}/entities`]: { need: 'own', unreadable: 'hidden', req: async (w) => del(`${V1}/entities?id=${enc(await w.entity())}`), effect: (w) => w.gone() },
  [`GET ${V1}/entities/:id`]: { need: 'read', req: async (w) => get(`${V1}/entities/${enc(await w.entity())}`) },
  [`PUT ${V1}/entities/:id`]: { need: 'write', req: async (w) => send('PUT', `${V1}/entities/${enc(await w.entity())}`, { type: TYPE, temperature: temperature(30) }) },
  [`PATCH ${V1}/entities/:id`]: { need: 'write', req: async (w) => send('PATCH', `${V1}/entities/${enc(await w.entity())}`, { temperature: temperature(31) }) },
  [`DELETE ${V1}/entities/:id`]: { need: 'own', req: async (w) => del(`${V1}/entities/${enc(await w.entity())}`) },
  [`POST ${V1}/entities/:id/attrs`]: { need: 'write', req: async (w) => send('POST', `${V1}/entities/${enc(await w.entity())}/attrs`, { humidity: { type: 'Property', value: 40 } }) },
  [`PATCH ${V1}/entities/:id/attrs`]: { need: 'write', req: async (w) => send('PATCH', `${V1}/entities/${enc(await w.entity())}/attrs`, { temperature: temperature(32) }) },
  [`PATCH ${V1}/entities/:id/attrs/:attr`]: { need: 'write', req: async (w) => send('PATCH', `${V1}/entities/${enc(await w.entity())}/attrs/temperature`, { value: 33 }) },
  [`PUT ${V1}/entities/:id/attrs/:attr`]: { need: 'write', req: async (w) => send('PUT', `${V1}/entities/${enc(await w.entity())}/attrs/temperature`, temperature(34)) },
  [`DELETE ${V1}/entities/:id/attrs/:attr`]: { need: 'write', req: async (w) => del(`${V1}/entities/${enc(await w.entity())}/attrs/temperature`) },
  [`POST ${V1}/entityOperations/query`]: {
    need: 'read', refused: 'hidden', fresh: false, req: async (w) => send('POST', `${V1}/entityOperations/query`, { type: 'Query', entities: [{ type: await w.type() }] }), mentions: (w) => w.entity(),
  },
  [`POST ${V1}/entityOperations/create`]: { need: 'token', req: () => send('POST', `${V1}/entityOperations/create`, [madeEntity()]) },
  [`POST ${V1}/entityOperations/upsert`]: { need: 'write', batch: true, req: async (w) => send('POST', `${V1}/entityOperations/upsert`, [{ id: await w.entity(), type: TYPE, temperature: temperature(35) }]) },
  [`POST ${V1}/entityOperations/update`]: { need: 'write', batch: true, req: async (w) => send('POST', `${V1}/entityOperations/update`, [{ id: await w.entity(), temperature: temperature(36) }]) },
  [`POST ${V1}/entityOperations/merge`]: { need: 'write', batch: true, req: async (w) => send('POST', `${V1}/entityOperations/merge`, [{ id: await w.entity(), temperature: temperature(37) }]) },
  [`POST ${V1}/entityOperations/delete`]: { need: 'own', batch: true, req: async (w) => send('POST', `${V1}/entityOperations/delete`, [await w.entity()]) },

  // Discovery: only what the caller may read exists for it.
  [`GET ${V1}/types`]: [
    { need: 'read', refused: 'hidden', req: () => get(`${V1}/types`), mentions: (w) => w.type() },
    { label: 'details', need: 'read', refused: 'hidden', req: () => get(`${V1}/types?details=true`), mentions: (w) => w.type() },
  ],
  [`GET ${V1}/types/:type`]: { need: 'read', refused: 404, req: async (w) => get(`${V1}/types/${await w.type()}`) },
  [`GET ${V1}/attributes`]: [
    { need: 'read', refused: 'hidden', req: () => get(`${V1}/attributes`), mentions: (w) => w.attribute() },
    { label: 'details', need: 'read', refused: 'hidden', req: () => get(`${V1}/attributes?details=true`), mentions: (w) => w.attribute() },
  ],
  [`GET ${V1}/attributes/:attr`]: { need: 'read', refused: 404, req: async (w) => get(`${V1}/attributes/${await w.attribute()}`) },

  // Temporal.
  [`GET ${V1}/temporal/entities`]: {
    need: 'read', refused: 'hidden', req: async (w) => get(`${V1}/temporal/entities?type=${await w.type()}&timerel=after&timeAt=${at(T0 - 3_600_000)}`), mentions: (w) => w.entity(),
  },
  [`POST ${V1}/temporal/entities`]: [
    { label: 'a new entity', need: 'token', req: () => send('POST', `${V1}/temporal/entities`, { ...madeEntity(), made: [{ type: 'Property', value: 1, observedAt: at(T0) }] }) },
    { label: 'an existing entity', need: 'write', req: async (w) => send('POST', `${V1}/temporal/entities`, { id: await w.entity(), type: TYPE, temperature: [temperature(38)] }) },
  ],
  [`POST ${V1}/temporal/entityOperations/query`]: {
    need: 'read', refused: 'hidden', fresh: false, mentions: (w) => w.entity(),
    req: async (w) => send('POST', `${V1}/temporal/entityOperations/query`, { type: 'Query', entities: [{ type: await w.type() }], temporalQ: { timerel: 'after', timeAt: at(T0 - 3_600_000) } }),
  },
  [`GET ${V1}/temporal/entities/:id`]: { need: 'read', req: async (w) => get(`${V1}/temporal/entities/${enc(await w.entity())}`) },
  [`DELETE ${V1}/temporal/entities/:id`]: { need: 'own', req: async (w) => del(`${V1}/temporal/entities/${enc(await w.entity())}`) },
  [`POST ${V1}/temporal/entities/:id/attrs`]: { need: 'write', req: async (w) => send('POST', `${V1}/temporal/entities/${enc(await w.entity())}/attrs`, { temperature: [temperature(39)] }) },
  [`DELETE ${V1}/temporal/entities/:id/attrs/:attr`]: { need: 'write', req: async (w) => del(`${V1}/temporal/entities/${enc(await w.entity())}/attrs/temperature`) },
  [`PATCH ${V1}/temporal/entities/:id/attrs/:attr/:instanceId`]: {
    need: 'write', req: async (w) => send('PATCH', `${V1}/temporal/entities/${enc(await w.entity())}/attrs/temperature/${enc(await w.instance())}`, { value: 40 }),
  },
  [`DELETE ${V1}/temporal/entities/:id/attrs/:attr/:instanceId`]: {
    need: 'write', req: async (w) => del(`${V1}/temporal/entities/${enc(await w.entity())}/attrs/temperature/${enc(await w.instance())}`),
  },

  // Subscriptions belong to their creator (behaviour §8).
  [`POST ${V1}/subscriptions`]: { need: 'token', req: () => send('POST', `${V1}/subscriptions`, SUBSCRIPTION) },
  [`GET ${V1}/subscriptions`]: { need: 'own', refused: 'hidden', req: () => get(`${V1}/subscriptions`), mentions: (w) => w.subscription() },
  [`GET ${V1}/subscriptions/:id`]: { need: 'own', req: async (w) => get(`${V1}/subscriptions/${enc(await w.subscription())}`) },
  [`PATCH ${V1}/subscriptions/:id`]: { need: 'own', req: async (w) => send('PATCH', `${V1}/subscriptions/${enc(await w.subscription())}`, { description: 'changed' }) },
  [`DELETE ${V1}/subscriptions/:id`]: { need: 'own', req: async (w) => del(`${V1}/subscriptions/${enc(await w.subscription())}`) },
  // Context source registration subscriptions: owned as subscriptions are.
  [`POST ${V1}/csourceSubscriptions`]: { need: 'token', req: () => send('POST', `${V1}/csourceSubscriptions`, SUBSCRIPTION) },
  [`GET ${V1}/csourceSubscriptions`]: { need: 'own', refused: 'hidden', req: () => get(`${V1}/csourceSubscriptions`), mentions: (w) => w.csourceSubscription() },
  [`GET ${V1}/csourceSubscriptions/:id`]: { need: 'own', req: async (w) => get(`${V1}/csourceSubscriptions/${enc(await w.csourceSubscription())}`) },
  [`PATCH ${V1}/csourceSubscriptions/:id`]: { need: 'own', req: async (w) => send('PATCH', `${V1}/csourceSubscriptions/${enc(await w.csourceSubscription())}`, { description: 'changed' }) },
  [`DELETE ${V1}/csourceSubscriptions/:id`]: { need: 'own', req: async (w) => del(`${V1}/csourceSubscriptions/${enc(await w.csourceSubscription())}`) },
  // Context source registrations reroute every subject's reads and writes: only an administrator
  // writes one. The world's registration is an administrator's, so reading it needs that too.
  [`POST ${V1}/csourceRegistrations`]: { need: 'admin', req: () => send('POST', `${V1}/csourceRegistrations`, REGISTRATION) },
  [`GET ${V1}/csourceRegistrations`]: { need: 'admin', refused: 'hidden', req: () => get(`${V1}/csourceRegistrations?type=NeverWritten`), mentions: (w) => w.registration() },
  [`GET ${V1}/csourceRegistrations/:id`]: { need: 'admin', cells: { absent: 404 }, req: async (w) => get(`${V1}/csourceRegistrations/${enc(await w.registration())}`) },
  [`PATCH ${V1}/csourceRegistrations/:id`]: { need: 'admin', cells: { absent: 404 }, req: async (w) => send('PATCH', `${V1}/csourceRegistrations/${enc(await w.registration())}`, { description: 'changed' }) },
  [`DELETE ${V1}/csourceRegistrations/:id`]: { need: 'admin', cells: { absent: 404 }, req: async (w) => del(`${V1}/csourceRegistrations/${enc(await w.registration())}`) },

  // @contexts (docs/auth.md): one served context needs no token, except a Cached one; deleting needs the admin role.
  [`POST ${V1}/jsonldContexts`]: { need: 'token', req: () => send('POST', `${V1}/jsonldContexts`, { '@context': { matrix: 'https://example.org/matrix#' } }) },
  [`GET ${V1}/jsonldContexts`]: [
    // Without a token (public permissions on): the contexts listed, but not the Cached ones (docs/auth.md).
    { label: 'a Hosted context', need: 'token', withPublic: 'ok', req: () => get(`${V1}/jsonldContexts?details=true`), mentions: (w) => w.context() },
    { label: 'a Cached context', need: 'token', withPublic: 'hidden', req: () => get(`${V1}/jsonldContexts?details=true`), mentions: (w) => w.cachedContext() },
  ],
  [`GET ${V1}/jsonldContexts/:id`]: [
    { label: 'the core context', need: 'anonymous', req: async (w) => get(`${V1}/jsonldContexts/${enc(await w.coreContext())}`) },
    { label: 'a Hosted context', need: 'anonymous', req: async (w) => get(`${V1}/jsonldContexts/${enc(await w.context())}`) },
    { label: 'a Cached context', need: 'anonymous', cells: { none: 404 }, req: async (w) => get(`${V1}/jsonldContexts/${enc(await w.cachedContext())}`) },
  ],
  [`DELETE ${V1}/jsonldContexts/:id`]: { need: 'admin', cells: { absent: 404 }, req: async (w) => del(`${V1}/jsonldContexts/${enc(await w.context())}`) },

  // Permissions (interface 4.7, 5 rule 5): managed and seen by administrators of their target.
  ...permission(`${V1}/auth/permissions`),
  ...permission('/auth/permissions'),
  // Subjects (interface 4.8).
  [`GET ${V1}/auth/subjects/groups`]: { need: 'token', req: () => get(`${V1}/auth/subjects/groups`) },
  [`GET ${V1}/auth/subjects/users`]: { need: 'admin', req: () => get(`${V1}/auth/subjects/users`) },
  [`DELETE ${V1}/auth/subjects/users/:sub`]: { need: 'admin', req: async (w) => del(`${V1}/auth/subjects/users/${enc(await w.user())}`) },

  // Devices, the federation status and the storage figures: the admin role.
  'POST /edgeld/v1/devices': { need: 'admin', req: () => send('POST', '/edgeld/v1/devices', { deviceId: `new${++made}` }) },
  'GET /edgeld/v1/devices': { need: 'admin', req: async (w) => (await w.device(), get('/edgeld/v1/devices')), mentions: (w) => w.device() },
  'GET /edgeld/v1/devices/:deviceId': { need: 'admin', req: async (w) => get(`/edgeld/v1/devices/${enc(await w.device())}`) },
  'PATCH /edgeld/v1/devices/:deviceId': { need: 'admin', req: async (w) => send('PATCH', `/edgeld/v1/devices/${enc(await w.device())}`, { entityType: 'Thermostat' }) },
  'DELETE /edgeld/v1/devices/:deviceId': { need: 'admin', req: async (w) => del(`/edgeld/v1/devices/${enc(await w.device())}`) },
  'POST /edgeld/v1/devices/:deviceId/secret': { need: 'admin', req: async (w) => send('POST', `/edgeld/v1/devices/${enc(await w.device())}/secret`, {}) },
  // The commands of a device's entity: whoever may read the entity (the same answers as retrieving it);
  // outside behaviour §8's public reads, so a token is needed even where public permissions are on.
  'GET /edgeld/v1/commands': { need: 'read', withPublic: 401, req: async (w) => (await w.entity(), get(`/edgeld/v1/commands?entity=${enc(await w.commanded())}`)) },
  [`GET ${V1}/federation/status`]: { need: 'admin', req: () => get(`${V1}/federation/status`) },
  // The database's use of the disk and its budget: an operator's business.
  'GET /edgeld/v1/storage': { need: 'admin', req: () => get('/edgeld/v1/storage') },
};

/** Routes that are a value of a registered route's last parameter, answered by their own handlers (resourceBeside). */
const BESIDE = new Set([`GET ${V1}/auth/permissions/assigned`, 'GET /auth/permissions/assigned']);


/** The outcome a row documents for a caller. */
function expectedOf(row: Row, who: Who): Outcome {
  const given = row.cells?.[who];
  if (given !== undefined) return given;
  // Existence is told before permission (404), except where the admin role is checked first.
  if (who === 'absent') return row.need === 'admin' ? 403 : 404;
  const ok = row.answer ?? 'ok';
  if (row.need === 'open') return ok;
  if (who === 'none') return row.need === 'anonymous' ? ok : 401;
  if (who === 'forged' || who === 'expired') return 401;
  if (row.need === 'anonymous' || row.need === 'token') return ok;
  if (row.need === 'admin') return who === 'admin' ? ok : row.refused ?? 403;
  const rank = RANK[who] ?? 0;
  if (rank >= (RANK[row.need] ?? 0)) return ok;
  return rank < 1 ? row.unreadable ?? row.refused ?? 403 : row.refused ?? 403;
}

/**
 * With allow-public-permission on, a caller without a token (behaviour §8: only the reads public
 * permissions can allow work without one, 401 for anything else): `public` on targets with a public
 * read permission, `none` on targets without.
 */
function expectedWithPublic(row: Row, route: string, who: 'none' | 'public'): Outcome {
  if (row.withPublic !== undefined) return row.withPublic;
  if (row.need === 'open' || row.need === 'anonymous') return expectedOf(row, 'none');
  if (!route.startsWith('GET ') || row.need !== 'read') return 401;
  if (who === 'public') return row.answer ?? 'ok';
  const refused = row.unreadable ?? row.refused ?? 403;
  // A refused request without a token is told to authenticate (RFC 9110 §15.5.2), not 403.
  return refused === 403 ? 401 : refused;
}

const labelled = (route: string, row: Row): string => `${route}${row.label ? ` (${row.label})` : ''}`;

/** Runs one cell: the outcome of `r` for `caller` on `world`, as the row reads it. */
async function runCell(m: MatrixBroker, row: Row, world: World, caller: Caller): Promise<{ outcome: Outcome | number; res: Res; r: Req }> {
  const r = await row.req(world);
  const mention = row.mentions === undefined ? undefined : await row.mentions(world);
  const res = await m.call(r, caller);
  if (row.batch && res.status === 207) {
    const target = await world.entity();
    const errors = (res.json as { errors: Array<{ entityId: string; error: { status: number } }> }).errors;
    return { outcome: errors.find((e) => e.entityId === target)?.error.status ?? 207, res, r };
  }
  if (res.status >= 400) return { outcome: res.status, res, r };
  const shown = mention === undefined || res.text.includes(mention);
  const acted = row.effect === undefined || (await row.effect(world));
  return { outcome: shown && acted ? 'ok' : 'hidden', res, r };
}

function checkCell(row: Row, who: string, expected: Outcome, cell: { outcome: Outcome | number; res: Res; r: Req }): void {
  const { outcome, res, r } = cell;
  expect(outcome, `${r.method} ${r.path} as ${who}: ${res.status} ${res.text.slice(0, 300)}`).toBe(expected);
  if (res.status === 401) {
    // RFC 9110 §15.5.2: a 401 names the scheme; Bearer wherever a token is what is missing.
    expect(res.headers.get('www-authenticate'), 'WWW-Authenticate').toMatch(row.need === 'open' ? /./ : /^Bearer/);
  }
}

const isFresh = (route: string, row: Row): boolean => row.fresh ?? !route.startsWith('GET ');

describe('HTTP authorization matrix', () => {
  let m: MatrixBroker;
  let shared: World;

  beforeAll(async () => {
    m = await startMatrixBroker();
    shared = m.newWorld();
  });
  afterAll(() => m?.close());

  it('has an authorization expectation for every route the app registers, and none for a route it does not', () => {
    const registered = new Set(m.broker.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`));
    const rows = new Set(Object.keys(MATRIX));
    const missing = [...registered].filter((r) => !rows.has(r)).map((r) => `route ${r} has no authorization expectation`);
    const stale = [...rows].filter((r) => !registered.has(r) && !BESIDE.has(r)).map((r) => `row ${r} names no registered route`);
    expect([...missing, ...stale]).toEqual([]);
  });

  /** The callers of a row: `absent` (the stranger naming a target that does not exist) where the path names one. */
  const callersOf = (route: string, row: Row): readonly Who[] => (route.includes(':') && row.need !== 'open' ? WHO : WHO.filter((w) => w !== 'absent'));
  const cells = Object.entries(MATRIX).flatMap(([route, rows]) => [rows].flat().flatMap((row) =>
    callersOf(route, row).map((who): [string, Who, Outcome, Row] => [labelled(route, row), who, expectedOf(row, who), row])));

  it.each(cells)('%s × %s → %s', async (route, who, expected, row) => {
    const world = who === 'absent' ? ABSENT : isFresh(route, row) ? m.newWorld() : shared;
    checkCell(row, who, expected, await runCell(m, row, world, who === 'absent' ? 'stranger' : who));
  });
});

describe('HTTP authorization matrix with public permissions on, without a token', () => {
  let m: MatrixBroker;
  const shared: Partial<Record<'none' | 'public', World>> = {};

  beforeAll(async () => {
    m = await startMatrixBroker({ allowPublic: true });
    shared.none = m.newWorld();
    shared.public = m.newWorld({ readable: 'public' });
  });
  afterAll(() => m?.close());

  const cells = Object.entries(MATRIX).flatMap(([route, rows]) => [rows].flat().flatMap((row) =>
    (['none', 'public'] as const).map((who): [string, 'none' | 'public', Outcome, Row, boolean] =>
      [labelled(route, row), who, expectedWithPublic(row, route, who), row, isFresh(route, row)])));

  it.each(cells)('%s × %s → %s', async (_route, who, expected, row, fresh) => {
    const world = fresh ? m.newWorld(who === 'public' ? { readable: 'public' } : {}) : shared[who]!;
    checkCell(row, who, expected, await runCell(m, row, world, 'none'));
  });
});
