// Who may connect to the embedded broker (edge.md §1), and whose a client id's session is.
//
// Authentication off: every client is anonymous and may do everything; measurements are written as
// the broker's own work. Authentication on: a client connects with a user name and a password that
// is either its device secret or a token the HTTP API accepts (any user name). A device's user name
// and client id name it as `<tenant>/<deviceId>`, or as the bare `<deviceId>` in the default tenant;
// both must name the same device. A client id belongs to the principal that first kept a session
// under it (a device's id to that device): neither its stored session nor its live connection is
// ever handed to another principal (CONNACK 5). What each may publish, subscribe to and receive is
// the topic classes' table (topic-classes.ts), applied by authorize.ts.

import type { AuthenticateError, Client } from 'aedes';
import { anonymousIn, type Principal } from '../ngsi/index.js';
import { isDeviceId } from '../devices/index.js';
import { boundedMemo, type Logger, type LoginLimiter } from '../lib/index.js';
import { SecretCheckBusyError } from '../auth/index.js';
import type { MqttAccessHooks } from './hooks.js';
import { DEFAULT_TENANT_SEGMENT, MEASUREMENT_PREFIX, parseMeasurementTopic, type Ingest } from './ingest.js';
import { authorizeForwardWith, authorizePublishWith, authorizeSubscribeWith, willRefusal } from './authorize.js';
import { MqttWillRefusedError } from './errors.js';
import type { AccessContext, CommandAnswers, HomeAssistantCommands, Identity, MqttAccessStats, MqttAuthentication, MqttSessionOwners } from './identity.js';
import { deviceSubject } from './identity.js';

export { deviceSubject, type HomeAssistantCommands, type MqttAccessStats, type MqttAuthentication, type MqttSessionOwners } from './identity.js';
import { limitConnects } from './connect-limit.js';

/** CONNACK return codes of MQTT 3.1.1. */
const IDENTIFIER_REJECTED = 2;
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;
/** The client id a device must connect with, as its refusal says. */
const DEVICE_CLIENT_ID = "the device's own name, <tenant>/<deviceId> or, in the default tenant, <deviceId>";
/** The client id a client with a token must connect with. */
const TOKEN_CLIENT_ID = 'any client id but the name of a registered device (<tenant>/<deviceId>, or <deviceId> in the default tenant)';

export interface MqttAccessDeps {
  log: Logger;
  ingest: Ingest;
  /** Present when authentication is on. */
  auth?: MqttAuthentication;
  /** Session owners kept with the sessions (SQLite); in memory when absent. */
  sessions?: MqttSessionOwners;
  /** Makes CONNECTs wait after repeated failed logins (with authentication on). */
  loginLimiter?: LoginLimiter;
  /** Answers on `cmdexe` go to the command dispatcher; absent: they are dropped as no measurement. */
  commands?: CommandAnswers;
  /** Home Assistant's commands go there; absent: the integration is off (its command topics are relayed as any). */
  homeAssistant?: HomeAssistantCommands | undefined;
}

export interface MqttAccess extends MqttAccessHooks {
  stats(): MqttAccessStats;
}

interface DeviceName {
  tenant: string;
  deviceId: string;
}

/** Tenants whose anonymous principal is kept (a client naming more starts the memo over). */
const MAX_ANONYMOUS_DEVICES = 10_000;

/**
 * The device a user name or client id names: `<tenant>/<deviceId>`, or a bare `<deviceId>` of the
 * default tenant (`th-01` is `default/th-01`); undefined for any other form.
 */
function deviceOfName(name: string | undefined): DeviceName | undefined {
  if (name === undefined) return undefined;
  if (!name.includes('/')) return isDeviceId(name) ? { tenant: '', deviceId: name } : undefined;
  const topic = parseMeasurementTopic(`${MEASUREMENT_PREFIX}${name}/status`);
  return topic && { tenant: topic.tenant, deviceId: topic.deviceId };
}

/** The name of a device in log lines: `<tenant segment>/<deviceId>`. */
function deviceName(device: DeviceName): string {
  return `${device.tenant === '' ? DEFAULT_TENANT_SEGMENT : device.tenant}/${device.deviceId}`;
}

function refuse(done: (error: AuthenticateError | null, success: boolean | null) => void, code: number): void {
  const message = code === IDENTIFIER_REJECTED ? 'identifier rejected' : code === NOT_AUTHORIZED ? 'not authorized'
    : code === SERVER_UNAVAILABLE ? 'server unavailable: too many logins in progress' : 'bad user name or password';
  // NOTE: Aedes reads the CONNACK code from the error's returnCode
  const err = new Error(message) as AuthenticateError;
  err.returnCode = code;
  done(err, false);
}

/** Session owners in memory, for a broker without durable sessions. */
function memorySessionOwners(): MqttSessionOwners {
  const owners = new Map<string, string>();
  return {
    sessionOwner: (clientId) => owners.get(clientId),
    putSessionOwner: (clientId, owner) => void owners.set(clientId, owner),
    deleteSessionOwner: (clientId) => void owners.delete(clientId),
  };
}

/**
 * With authentication off, a device's measurements are written as its subject (admin rights, no
 * assignees), so that its own writes are told from others' (a command is never its own measurement).
 */
function anonymousWriters(): AccessContext['anonymousOf'] {
  const of = boundedMemo(MAX_ANONYMOUS_DEVICES, (key: string): Principal => {
    const slash = key.indexOf('/');
    const tenant = key.slice(0, slash);
    return { ...anonymousIn(tenant), subject: deviceSubject(tenant, key.slice(slash + 1)) };
  });
  // NOTE: a tenant name holds no '/' (isTenantName): the key tells every (tenant, device) apart.
  return (tenant, deviceId) => of(`${tenant}/${deviceId}`);
}

export function createMqttAccess(deps: MqttAccessDeps): MqttAccess {
  const stats: MqttAccessStats = { takeoversRefused: 0, willsRefused: 0, busyRefused: 0 };
  const ctx: AccessContext = {
    log: deps.log, ingest: deps.ingest, auth: deps.auth, identities: new WeakMap(), sessions: deps.sessions ?? memorySessionOwners(), stats,
    commands: deps.commands,
    homeAssistant: deps.homeAssistant,
    // NOTE: a principal is read-only, so the one of a device and those of anonymous writers are made
    // once, not per message; the write path also keys its grouping on the principal object.
    anonymousOf: anonymousWriters(),
  };
  const authenticate = authenticateWith(ctx);
  return {
    authenticate: deps.auth && deps.loginLimiter ? limitConnects(authenticate, { limiter: deps.loginLimiter, log: deps.log }) : authenticate,
    authorizePublish: authorizePublishWith(ctx),
    authorizeSubscribe: authorizeSubscribeWith(ctx),
    authorizeForward: authorizeForwardWith(ctx),
    subjectOf(client) {
      const identity = ctx.identities.get(client);
      return identity?.kind === 'token' ? identity.party.subject : undefined;
    },
    isDeviceClient(client, tenant, deviceId) {
      if (deps.auth === undefined) return true;
      const identity = ctx.identities.get(client);
      return identity?.kind === 'device' && identity.tenant === tenant && identity.deviceId === deviceId;
    },
    stats: () => ({ ...stats }),
  };
}

/** The principal a session is bound to: `device:<tenant>/<deviceId>` or `subject:<sub>`. */
function ownerOf(identity: Identity): string | undefined {
  switch (identity.kind) {
    case 'anonymous': return undefined;
    case 'device': return `device:${identity.user}`;
    case 'token': return `subject:${identity.party.subject ?? ''}`;
  }
}

/** The client connected now under the same client id, if another. NOTE: Aedes keeps them in `broker.clients`; its types omit both. */
function liveClientWithId(client: Client): Client | undefined {
  const broker: unknown = Reflect.get(client, 'broker');
  const clients: unknown = typeof broker === 'object' && broker !== null ? Reflect.get(broker, 'clients') : undefined;
  const other: unknown = typeof clients === 'object' && clients !== null ? Reflect.get(clients, client.id) : undefined;
  return other !== undefined && other !== client ? other as Client : undefined; // NOTE: the values of broker.clients are Clients
}

/** The will a CONNECT carries (Aedes keeps it on the client before authenticating); undefined when none. */
function willTopicOf(client: Client): string | undefined {
  const will: unknown = Reflect.get(client, '_will'); // NOTE: Aedes' types omit `_will`, set from the CONNECT packet
  const topic: unknown = typeof will === 'object' && will !== null ? Reflect.get(will, 'topic') : undefined;
  return typeof topic === 'string' ? topic : undefined;
}

/**
 * Admits an authenticated client unless its will names a topic it may not publish on (CONNACK 5, as
 * mosquitto 2 does), or its client id belongs to another principal: a stored session (bound when
 * kept, clean: false) or a live connection (which Aedes would otherwise end) [MQTT-3.1.4-2].
 */
function admit(ctx: AccessContext, client: Client, identity: Identity, done: (error: AuthenticateError | null, success: boolean | null) => void): void {
  const willTopic = willTopicOf(client);
  const why = willTopic === undefined ? undefined : willRefusal(ctx, identity, willTopic);
  if (willTopic !== undefined && why !== undefined) {
    ctx.stats.willsRefused += 1;
    ctx.log.warn('mqtt client refused: its will names a topic it may not publish on', { clientId: client.id, user: identity.user, topic: willTopic, why });
    // NOTE: Aedes reads the CONNACK code from the error's returnCode (5, not authorized).
    done(new MqttWillRefusedError(willTopic) as AuthenticateError, false);
    return;
  }
  const owner = ownerOf(identity);
  const live = liveClientWithId(client);
  const liveIdentity = live && ctx.identities.get(live);
  const liveOwner = liveIdentity && ownerOf(liveIdentity);
  const bound = ctx.sessions.sessionOwner(client.id);
  if ((live !== undefined && liveOwner !== owner) || (bound !== undefined && bound !== owner)) {
    refuseTakeover(ctx, client, identity, 'its client id belongs to another principal', done);
    return;
  }
  if (!client.clean) {
    if (bound !== owner && owner !== undefined) ctx.sessions.putSessionOwner(client.id, owner);
  } else if (bound !== undefined) {
    // [MQTT-3.1.2-6] A clean session discards the stored one: nothing is left to hand over.
    ctx.sessions.deleteSessionOwner(client.id);
  }
  ctx.identities.set(client, identity);
  done(null, true);
}

function refuseTakeover(ctx: AccessContext, client: Client, identity: Identity, why: string, done: (error: AuthenticateError | null, success: boolean | null) => void, expected?: string): void {
  ctx.stats.takeoversRefused += 1;
  ctx.log.warn(`mqtt client refused: ${why}`, { clientId: client.id, user: identity.user, ...(expected ? { expected } : {}) });
  refuse(done, NOT_AUTHORIZED);
}

function authenticateWith(ctx: AccessContext): MqttAccessHooks['authenticate'] {
  const { log, auth, identities } = ctx;
  return (client, username, password, done) => {
    if (auth === undefined) {
      identities.set(client, { kind: 'anonymous', clientId: client.id, user: null });
      done(null, true);
      return;
    }
    if (password === undefined || password.length === 0) {
      log.info('mqtt client refused: no password', { clientId: client.id, user: username ?? null });
      refuse(done, BAD_USERNAME_OR_PASSWORD);
      return;
    }
    const secret = password.toString('utf8');
    const device = deviceOfName(username);
    const asDevice = device ? auth.deviceSecret(device.tenant, device.deviceId, secret).catch((err: unknown) => (err instanceof SecretCheckBusyError ? err : false))
      : Promise.resolve(false);
    void asDevice.then(async (isDevice) => {
      if (isDevice instanceof SecretCheckBusyError) {
        ctx.stats.busyRefused += 1;
        log.info('mqtt client refused: too many logins in progress', { clientId: client.id, user: username ?? null });
        refuse(done, SERVER_UNAVAILABLE);
        return;
      }
      if (isDevice && device) {
        const named = deviceOfName(client.id);
        const user = deviceName(device);
        if (named === undefined || named.tenant !== device.tenant || named.deviceId !== device.deviceId) {
          log.info('mqtt device refused: its client id names another device, or none', { clientId: client.id, user, expected: DEVICE_CLIENT_ID });
          refuse(done, IDENTIFIER_REJECTED);
          return;
        }
        admit(ctx, client, { kind: 'device', clientId: client.id, user, ...device, party: { kind: 'device', ...device } }, done);
        return;
      }
      const principal = await auth.principal(secret, '').catch(() => undefined);
      if (principal === undefined) {
        log.info('mqtt client refused: bad user name or password', { clientId: client.id, user: username ?? null });
        refuse(done, BAD_USERNAME_OR_PASSWORD);
        return;
      }
      const user = principal.subject ?? username ?? null;
      const identity: Identity = {
        kind: 'token', clientId: client.id, user, token: secret, party: { kind: 'subject', subject: principal.subject, admin: principal.admin },
      };
      // NOTE: a client taking a device's client id would end its connection and take over its session.
      const named = deviceOfName(client.id);
      if (named !== undefined && auth.isDevice(named.tenant, named.deviceId)) {
        refuseTakeover(ctx, client, identity, 'its client id is that of a registered device', done, TOKEN_CLIENT_ID);
        return;
      }
      admit(ctx, client, identity, done);
    });
  };
}

/** MQTT 3.1.1 §4.7: whether a topic filter (with `+` and `#`) matches a topic name. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return i > 0 || !topic.startsWith('$');
    if (i >= t.length) return false;
    if (f[i] === '+') {
      if (i === 0 && topic.startsWith('$')) return false;
      continue;
    }
    if (f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
