// The world of the HTTP authorization matrix: one broker with authentication, the built-in identity
// provider and the dashboard on; a token per kind of caller; and targets made on demand through the
// API (an entity with its readers and writers, a temporal instance, a subscription, permissions,
// @contexts Hosted and Cached, a device, a known user), fresh for each cell that needs its own.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { exportSPKI, generateKeyPair } from 'jose';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import { createBroker, type Broker } from '../../src/server.js';
import { T0, readResponse, startContextServer, testConfig } from './broker.js';
import { ADMIN_ROLE, mint } from './auth.js';
import { addUser, idpConfig } from './identity.js';

/**
 * none: no Authorization header; forged: an administrator's claims signed by a key the broker does
 * not trust; expired: an administrator's token past its exp; stranger: a valid token and no permission;
 * reader / writer: read / write permission on the target entity; owner: created the targets; admin: the admin role.
 */
export type Caller = 'none' | 'forged' | 'expired' | 'stranger' | 'reader' | 'writer' | 'owner' | 'admin';

export interface Req { method: string; path: string; body?: unknown; form?: Record<string, string>; type?: string }
export interface Res { status: number; headers: Headers; text: string; json: unknown }

export const V1 = '/ngsi-ld/v1';
/** The type of every target entity (and of nothing else). */
export const TYPE = 'MatrixRoom';
export const PUBLIC_TYPE = 'PublicRoom';
const ATTRIBUTE = 'temperature';
const PUBLIC_ATTRIBUTE = 'publicTemperature';
/** The dashboard asset served. */
export const ASSET = 'app.0123abcd.js';
export const SUBSCRIPTION = { type: 'Subscription', entities: [{ type: 'NeverWritten' }], notification: { endpoint: { uri: 'http://127.0.0.1:9/matrix' } } };
export const REGISTRATION = { type: 'ContextSourceRegistration', information: [{ entities: [{ type: 'NeverWritten' }] }], endpoint: 'http://127.0.0.1:9/matrix' };

export const enc = encodeURIComponent;
export const at = (ms: number): string => new Date(ms).toISOString();
export const get = (path: string): Req => ({ method: 'GET', path });
export const del = (path: string): Req => ({ method: 'DELETE', path });
export const send = (method: string, path: string, body: unknown): Req => ({ method, path, body });
export const temperature = (value: number): object => ({ type: 'Property', value, observedAt: at(T0) });

/** The targets of a cell, made on first use. */
export interface World {
  /** The owner's entity, with the reader's and the writer's permissions on it. */
  entity(): Promise<string>;
  /** The entity's type and attribute names (once it exists). */
  type(): Promise<string>;
  attribute(): Promise<string>;
  /** A history instance of the entity's attribute. */
  instance(): Promise<string>;
  /** A permission on the entity assigned to a third subject. */
  permission(): Promise<string>;
  /** The reader's permission. */
  readerPermission(): Promise<string>;
  subscription(): Promise<string>;
  /** A context source registration of the owner's. */
  registration(): Promise<string>;
  /** A context source registration subscription of the owner's. */
  csourceSubscription(): Promise<string>;
  context(): Promise<string>;
  cachedContext(): Promise<string>;
  coreContext(): Promise<string>;
  device(): Promise<string>;
  /** The entity, written by a device that declares a command (`open`). */
  commanded(): Promise<string>;
  user(): Promise<string>;
  /** Whether the entity is gone (as an administrator sees it). */
  gone(): Promise<boolean>;
}

/** Targets that do not exist. */
export const ABSENT: World = {
  entity: async () => `urn:ngsi-ld:${TYPE}:absent`, type: async () => 'AbsentType', attribute: async () => 'absentAttribute',
  instance: async () => 'urn:ngsi-ld:Instance:absent', permission: async () => 'urn:ngsi-ld:Permission:absent',
  readerPermission: async () => 'urn:ngsi-ld:Permission:absent', subscription: async () => 'urn:ngsi-ld:Subscription:absent',
  registration: async () => 'urn:ngsi-ld:ContextSourceRegistration:absent',
  csourceSubscription: async () => 'urn:ngsi-ld:Subscription:absent-csource',
  context: async () => 'absent', cachedContext: async () => 'absent', coreContext: async () => 'absent', device: async () => 'absent',
  commanded: async () => `urn:ngsi-ld:${TYPE}:absent`,
  user: async () => 'urn:ngsi-ld:User:absent', gone: async () => true,
};

export interface MatrixBroker {
  broker: Broker;
  /** A request as `caller` (its Authorization header, if any). */
  call(r: Req, caller: Caller): Promise<Res>;
  /**
   * Targets of their own; `readable: 'public'` (allow-public-permission on): an entity of type
   * PUBLIC_TYPE whose attribute is PUBLIC_ATTRIBUTE, readable without a token.
   */
  newWorld(opts?: { readable?: 'public' }): World;
  close(): Promise<void>;
}

const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
};
const idFrom = (res: Res): string => decodeURIComponent(res.headers.get('location')?.split('/').pop() ?? '');

async function request(broker: Broker, r: Req, token: string | undefined): Promise<Res> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
  let body: string | undefined;
  if (r.form !== undefined) {
    body = new URLSearchParams(r.form).toString();
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  } else if (r.body !== undefined) {
    body = JSON.stringify(r.body);
    headers['Content-Type'] = r.type ?? 'application/json';
  }
  return readResponse(await broker.app.request(`http://127.0.0.1${r.path}`, { method: r.method, headers, ...(body === undefined ? {} : { body }) }));
}

/**
 * The broker, its callers' tokens, and a user `zed` of the identity provider (password `matrix
 * password`); `allowPublic`: application.authentication.allow-public-permission.
 */
export async function startMatrixBroker(opts: { allowPublic?: boolean } = {}): Promise<MatrixBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeld-matrix-'));
  const { publicKey, privateKey: key } = await generateKeyPair('ES256');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(keyFile, await exportSPKI(publicKey));
  // The dashboard's page, so its routes serve a real file.
  mkdirSync(join(dir, 'ui', 'assets'), { recursive: true });
  writeFileSync(join(dir, 'ui', 'index.html'), '<!doctype html><title>edgeld</title>');
  writeFileSync(join(dir, 'ui', 'assets', ASSET), 'export {};');
  const contextServer = await startContextServer();

  const application = idpConfig().application!;
  const config = testConfig({
    application: {
      ...application,
      authentication: {
        ...application.authentication!, enabled: true, publicKeyFile: keyFile, jwksUri: '', issuer: '', audience: '', adminRole: ADMIN_ROLE,
        allowPublicPermission: opts.allowPublic ?? false,
      },
    },
    mqtt: { port: 0, host: '127.0.0.1' }, server: { port: 0, host: '127.0.0.1' }, contexts: { allowedHosts: '127.0.0.1' }, log: { level: 'silent' },
  });
  const broker = createBroker({ config, log: silentLogger, clock: createFixedClock(T0), dbPath: ':memory:', dashboardDir: join(dir, 'ui') });
  addUser(broker, 'zed', 'matrix password');

  const tokens = new Map<Caller, string>();
  const subjects: Array<[Caller, string, string[]]> = [
    ['stranger', 'bob', []], ['reader', 'carol', []], ['writer', 'dave', []], ['owner', 'alice', []], ['admin', 'root', [ADMIN_ROLE]],
  ];
  for (const [caller, name, roles] of subjects) tokens.set(caller, await mint(key, T0, `urn:ngsi-ld:User:${name}`, { roles }));
  tokens.set('forged', await mint((await generateKeyPair('ES256')).privateKey, T0, 'urn:ngsi-ld:User:root', { roles: [ADMIN_ROLE] }));
  tokens.set('expired', await mint(key, T0 - 2 * 3_600_000, 'urn:ngsi-ld:User:root', { roles: [ADMIN_ROLE] }));

  const call = (r: Req, caller: Caller): Promise<Res> => request(broker, r, tokens.get(caller));
  /** A request that makes a target: it must succeed. */
  const must = async (caller: Caller, r: Req): Promise<Res> => {
    const res = await call(r, caller);
    expect(res.status, `${r.method} ${r.path}: ${res.text}`).toBeLessThan(300);
    return res;
  };
  const contextOf = async (kind: string, pick: (url: string) => boolean): Promise<string> => {
    const list = await must('admin', get(`${V1}/jsonldContexts?details=true&kind=${kind}`));
    const found = (list.json as Array<{ URL: string; localId: string }>).find((c) => pick(c.URL));
    if (found === undefined) throw new Error(`no such ${kind} context among ${list.text}`);
    return found.localId;
  };

  let worlds = 0;
  const newWorld = (opts: { readable?: 'public' } = {}): World => {
    const n = ++worlds;
    const isPublic = opts.readable === 'public';
    const type = isPublic ? PUBLIC_TYPE : TYPE;
    const attribute = isPublic ? PUBLIC_ATTRIBUTE : ATTRIBUTE;
    const grant = async (entity: string, assignee: string, action: string): Promise<string> =>
      idFrom(await must('owner', send('POST', `${V1}/auth/permissions`, { type: 'Permission', target: { id: entity }, assignee, action })));
    const entity = once(async () => {
      const id = `urn:ngsi-ld:${type}:w${n}`;
      await must('owner', send('POST', `${V1}/entities`, { id, type, [attribute]: temperature(20) }));
      if (isPublic) await grant(id, 'urn:ngsi-ld:Subject:public', 'read');
      return id;
    });
    const permissions = once(async () => {
      const id = await entity();
      const reader = await grant(id, 'urn:ngsi-ld:User:carol', 'read');
      await grant(id, 'urn:ngsi-ld:User:dave', 'write');
      return { reader, other: await grant(id, 'urn:ngsi-ld:User:erin', 'read') };
    });
    return {
      entity: async () => (await permissions(), entity()),
      type: async () => (await entity(), type),
      attribute: async () => (await entity(), attribute),
      instance: once(async () => {
        const res = await must('owner', get(`${V1}/temporal/entities/${enc(await entity())}`));
        const instances = [(res.json as Record<string, unknown>)[attribute]].flat() as Array<{ instanceId: string }>;
        return instances[0]!.instanceId;
      }),
      permission: async () => (await permissions()).other,
      readerPermission: async () => (await permissions()).reader,
      subscription: once(async () => idFrom(await must('owner', send('POST', `${V1}/subscriptions`, SUBSCRIPTION)))),
      registration: once(async () => idFrom(await must('admin', send('POST', `${V1}/csourceRegistrations`, REGISTRATION)))),
      csourceSubscription: once(async () => idFrom(await must('owner', send('POST', `${V1}/csourceSubscriptions`, SUBSCRIPTION)))),
      context: once(async () => idFrom(await must('owner', send('POST', `${V1}/jsonldContexts`, { '@context': { [`w${n}`]: `https://example.org/w${n}#` } })))),
      cachedContext: once(async () => {
        const path = `/matrix-${n}.jsonld`;
        contextServer.set(path, { '@context': { cached: 'https://example.org/cached#' } });
        const url = contextServer.url(path);
        // A request naming a remote context makes the broker fetch and cache it.
        await must('owner', { ...send('POST', `${V1}/entityOperations/query`, { type: 'Query', entities: [{ type: 'cached' }], '@context': url }), type: 'application/ld+json' });
        return contextOf('Cached', (u) => u === url);
      }),
      coreContext: once(() => contextOf('Hosted', (u) => u.includes('ngsi-ld-core-context'))),
      device: once(async () => {
        await must('admin', send('POST', '/edgeld/v1/devices', { deviceId: `dev${n}` }));
        return `dev${n}`;
      }),
      commanded: once(async () => {
        const id = await entity();
        await must('admin', send('POST', '/edgeld/v1/devices', { deviceId: `cmd${n}`, entityId: id, entityType: type, commands: [{ name: 'open' }] }));
        return id;
      }),
      user: once(async () => {
        // A user the subject registry knows: it has shown a valid token.
        const sub = `urn:ngsi-ld:User:victim${n}`;
        expect((await request(broker, get(`${V1}/types`), await mint(key, T0, sub))).status).toBe(200);
        return sub;
      }),
      gone: async () => (await call(get(`${V1}/entities/${enc(await entity())}`), 'admin')).status === 404,
    };
  };

  return {
    broker, call, newWorld,
    close: async () => {
      await broker.close();
      await contextServer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
