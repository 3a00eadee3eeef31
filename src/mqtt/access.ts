// Who may connect to the embedded broker, publish and subscribe (edge.md §1), and the hand-off of
// measurements to ingestion before they are acknowledged.
//
// Authentication off: every client is anonymous and may do everything; measurements are written as
// the broker's own work. Authentication on: a client connects with a user name and a password that
// is either its device secret or a token the HTTP API accepts (any user name). A device's user name
// and client id name it as `<tenant>/<deviceId>`, or as the bare `<deviceId>` in the default tenant;
// both must name the same device. A device publishes only its own measurement topics;
// a token's subject writes with its own permissions (write on the entity). Subscribing to
// measurement topics is for administrators and each device to its own; subscribing to a topic that
// notifications are published on needs the consent of `maySubscribe`.

import type { AuthenticateError, Client, PublishPacket, Subscription } from 'aedes';
import { anonymousIn, type Principal } from '../ngsi/index.js';
import { isDeviceId } from '../devices/index.js';
import { boundedMemo, type Logger, type LoginLimiter } from '../lib/index.js';
import type { MqttAccessHooks } from './hooks.js';
import { limitConnects } from './connect-limit.js';
import { DEFAULT_TENANT_SEGMENT, MEASUREMENT_PREFIX, parseMeasurementTopic, type Ingest, type Publisher } from './ingest.js';

/** CONNACK return codes of MQTT 3.1.1. */
const IDENTIFIER_REJECTED = 2;
const BAD_USERNAME_OR_PASSWORD = 4;
const SYS_PREFIX = '$SYS/';
/** The client id a device must connect with, as its refusal says. */
const DEVICE_CLIENT_ID = "the device's own name, <tenant>/<deviceId> or, in the default tenant, <deviceId>";
/** The client id a client with a token must connect with. */
const TOKEN_CLIENT_ID = 'any client id but the name of a registered device (<tenant>/<deviceId>, or <deviceId> in the default tenant)';

export interface MqttAuthentication {
  /** The principal of a token in a tenant; rejects when the token is not valid. */
  principal(token: string, tenant: string): Promise<Principal>;
  /** Whether `secret` is the MQTT secret of a registered device. */
  deviceSecret(tenant: string, deviceId: string, secret: string): Promise<boolean>;
  /** Whether a device is registered (its client id is kept for it). */
  isDevice(tenant: string, deviceId: string): boolean;
  /** Whether a subject may subscribe to a topic filter that can match topics notifications go to. */
  maySubscribe(filter: string, principal: Principal): boolean;
  /** Whether a client may publish on a topic (not on the topics notifications go to). */
  mayPublish(topic: string): boolean;
}

export interface MqttAccessDeps {
  log: Logger;
  ingest: Ingest;
  /** Present when authentication is on. */
  auth?: MqttAuthentication;
  /** Makes CONNECTs wait after repeated failed logins (with authentication on). */
  loginLimiter?: LoginLimiter;
}

/** A connected client as authenticated; also the publisher named when one of its messages is dropped. */
type Identity = Publisher & (
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'device'; readonly tenant: string; readonly deviceId: string; principal?: Principal }
);

interface DeviceName {
  tenant: string;
  deviceId: string;
}

/** What the three hooks share. */
interface AccessContext {
  log: Logger;
  ingest: Ingest;
  auth: MqttAuthentication | undefined;
  identities: WeakMap<Client, Identity>;
  anonymousOf(tenant: string): Principal;
}

/** Tenants whose anonymous principal is kept (a client naming more starts the memo over). */
const MAX_ANONYMOUS_TENANTS = 1000;

/** The subject a device writes as (audit, ownership of what it creates). */
export function deviceSubject(tenant: string, deviceId: string): string {
  return `urn:ngsi-ld:Device:${tenant === '' ? DEFAULT_TENANT_SEGMENT : tenant}:${deviceId}`;
}

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

/** Whether an MQTT topic filter can match a topic that starts with `ngsi/<tenant>/<deviceId>/` (given parts only). */
function filterReaches(filter: string, levels: readonly string[]): boolean {
  const parts = filter.split('/');
  for (let i = 0; i < levels.length; i++) {
    const p = parts[i];
    if (p === undefined) return false;
    if (p === '#') return true;
    if (p !== '+' && p !== levels[i]) return false;
  }
  return true;
}

function refuse(done: (error: AuthenticateError | null, success: boolean | null) => void, code: number): void {
  // NOTE: Aedes reads the CONNACK code from the error's returnCode
  const err = new Error(code === IDENTIFIER_REJECTED ? 'identifier rejected' : 'bad user name or password') as AuthenticateError;
  err.returnCode = code;
  done(err, false);
}

export function createMqttAccess(deps: MqttAccessDeps): MqttAccessHooks {
  const ctx: AccessContext = {
    log: deps.log, ingest: deps.ingest, auth: deps.auth, identities: new WeakMap(),
    // NOTE: a principal is read-only, so the one of a device and those of anonymous writers are made
    // once, not per message; the write path also keys its grouping on the principal object.
    anonymousOf: boundedMemo(MAX_ANONYMOUS_TENANTS, anonymousIn),
  };
  const authenticate = authenticateWith(ctx);
  return {
    authenticate: deps.auth && deps.loginLimiter ? limitConnects(authenticate, { limiter: deps.loginLimiter, log: deps.log }) : authenticate,
    authorizePublish: authorizePublishWith(ctx), authorizeSubscribe: authorizeSubscribeWith(ctx),
  };
}

/** The identity of a client (one made for it if it was never authenticated). */
function identityOf(ctx: AccessContext, client: Client): Identity {
  return ctx.identities.get(client) ?? { kind: 'anonymous', clientId: client.id, user: null };
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
    const asDevice = device ? auth.deviceSecret(device.tenant, device.deviceId, secret).catch(() => false) : Promise.resolve(false);
    void asDevice.then(async (isDevice) => {
      if (isDevice && device) {
        const named = deviceOfName(client.id);
        const user = deviceName(device);
        if (named === undefined || named.tenant !== device.tenant || named.deviceId !== device.deviceId) {
          log.info('mqtt device refused: its client id names another device, or none', { clientId: client.id, user, expected: DEVICE_CLIENT_ID });
          refuse(done, IDENTIFIER_REJECTED);
          return;
        }
        identities.set(client, { kind: 'device', clientId: client.id, user, ...device });
        done(null, true);
        return;
      }
      const principal = await auth.principal(secret, '').catch(() => undefined);
      if (principal === undefined) {
        log.info('mqtt client refused: bad user name or password', { clientId: client.id, user: username ?? null });
        refuse(done, BAD_USERNAME_OR_PASSWORD);
        return;
      }
      const user = principal.subject ?? username ?? null;
      // NOTE: a client taking a device's client id would end its connection and take over its session.
      const named = deviceOfName(client.id);
      if (named !== undefined && auth.isDevice(named.tenant, named.deviceId)) {
        log.info('mqtt client refused: its client id is that of a registered device', { clientId: client.id, user, expected: TOKEN_CLIENT_ID });
        refuse(done, IDENTIFIER_REJECTED);
        return;
      }
      identities.set(client, { kind: 'token', clientId: client.id, user, token: secret });
      done(null, true);
    });
  };
}

/** The principal a client writes the measurements of `tenant`/`deviceId` as; undefined: not allowed. */
function actorOf(ctx: AccessContext, identity: Identity, tenant: string, deviceId: string): Principal | undefined | Promise<Principal | undefined> {
  switch (identity.kind) {
    case 'anonymous':
      return ctx.anonymousOf(tenant);
    case 'device': {
      if (identity.tenant !== tenant || identity.deviceId !== deviceId) return undefined;
      const subject = deviceSubject(tenant, deviceId);
      // NOTE: a registered device writes the one entity the registry (managed by administrators)
      // maps it to, and publishing is limited to its own topics: that mapping is its permission.
      return (identity.principal ??= { tenant, subject, admin: true, assignees: [subject], groups: [] });
    }
    case 'token':
      return ctx.auth?.principal(identity.token, tenant).catch(() => undefined);
  }
}

function authorizePublishWith(ctx: AccessContext): MqttAccessHooks['authorizePublish'] {
  const { log, ingest, auth } = ctx;
  return (client, packet: PublishPacket, done) => {
    // [MQTT-4.7.2-1] Topics starting with `$` are the server's.
    if (packet.topic.startsWith(SYS_PREFIX)) {
      done(new Error(`${SYS_PREFIX} topics are reserved`));
      return;
    }
    if (client === null) {
      done(null);
      return;
    }
    if (!packet.topic.startsWith(MEASUREMENT_PREFIX)) {
      // NOTE: MQTT 3.1.1 cannot refuse one publish: an error ends the connection of a client
      // trying to forge notifications.
      if (auth !== undefined && !auth.mayPublish(packet.topic)) {
        log.info('mqtt publish on a notification topic refused', { clientId: client.id, user: identityOf(ctx, client).user, topic: packet.topic });
        done(new Error('notification topics are published by the broker only'));
        return;
      }
      done(null);
      return;
    }
    const topic = parseMeasurementTopic(packet.topic);
    const identity = identityOf(ctx, client);
    // NOTE: Aedes acknowledges a QoS 1 publish (PUBACK) once this calls back: only after the commit.
    // A dropped message is acknowledged too (MQTT 3.1.1 has no negative acknowledgement): the
    // client would otherwise resend it forever.
    if (topic === undefined) {
      ingest.dropTopic(packet.topic, identity);
      done(null);
      return;
    }
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    const actor = actorOf(ctx, identity, topic.tenant, topic.deviceId);
    const handled = actor instanceof Promise
      ? actor.then((a) => ingest.handle(a, topic, payload, identity))
      : ingest.handle(actor, topic, payload, identity);
    const answer = (): void => done(null);
    void handled.then(answer, answer);
  };
}

function authorizeSubscribeWith(ctx: AccessContext): MqttAccessHooks['authorizeSubscribe'] {
  const { log, auth, identities } = ctx;
  return (client, subscription: Subscription, done) => {
    if (auth === undefined) {
      done(null, subscription);
      return;
    }
    const identity = identities.get(client);
    const filter = subscription.topic;
    const deny = (why: string): void => {
      log.info('mqtt subscription refused', { clientId: client.id, user: identity?.user ?? null, topic: filter, why });
      done(null, null);
    };
    if (identity === undefined || identity.kind === 'anonymous') {
      deny('not authenticated');
      return;
    }
    if (identity.kind === 'device') {
      const own = ['ngsi', identity.tenant === '' ? DEFAULT_TENANT_SEGMENT : identity.tenant, identity.deviceId];
      const parts = filter.split('/');
      if (filterReaches(filter, ['ngsi']) && !(parts.length >= 3 && own.every((level, i) => parts[i] === level))) {
        deny('a device subscribes to its own measurement topics only');
        return;
      }
      done(null, subscription);
      return;
    }
    void (auth.principal(identity.token, '').catch(() => undefined)).then((principal) => {
      if (principal === undefined) return deny('token no longer valid');
      if (principal.admin) return done(null, subscription);
      if (filterReaches(filter, ['ngsi'])) return deny('measurement topics are for administrators and their devices');
      if (!auth.maySubscribe(filter, principal)) return deny('notifications of a subscription of another subject');
      return done(null, subscription);
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
