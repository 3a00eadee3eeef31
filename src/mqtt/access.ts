// Who may connect to the embedded broker, publish and subscribe (edge.md §1), and the hand-off of
// measurements to ingestion before they are acknowledged.
//
// Authentication off: every client is anonymous and may do everything; measurements are written as
// the broker's own work. Authentication on: a client connects with a user name and a password that
// is either its device secret (user name `<tenant>/<deviceId>`, the client id must be the same) or a
// token the HTTP API accepts (any user name). A device publishes only its own measurement topics;
// a token's subject writes with its own permissions (write on the entity). Subscribing to
// measurement topics is for administrators and each device to its own; subscribing to a topic that
// notifications are published on needs the consent of `maySubscribe`.

import type { AuthenticateError, Client, PublishPacket, Subscription } from 'aedes';
import { anonymousIn, type Principal } from '../ngsi/index.js';
import { boundedMemo, type Logger } from '../lib/index.js';
import type { MqttAccessHooks } from './hooks.js';
import { DEFAULT_TENANT_SEGMENT, MEASUREMENT_PREFIX, parseMeasurementTopic, type Ingest } from './ingest.js';

/** CONNACK return codes of MQTT 3.1.1. */
const IDENTIFIER_REJECTED = 2;
const BAD_USERNAME_OR_PASSWORD = 4;
const SYS_PREFIX = '$SYS/';

export interface MqttAuthentication {
  /** The principal of a token in a tenant; rejects when the token is not valid. */
  principal(token: string, tenant: string): Promise<Principal>;
  /** Whether `secret` is the MQTT secret of a registered device. */
  deviceSecret(tenant: string, deviceId: string, secret: string): Promise<boolean>;
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
}

type Identity =
  | { kind: 'anonymous' }
  | { kind: 'token'; token: string }
  | { kind: 'device'; tenant: string; deviceId: string; principal?: Principal };

const ANONYMOUS: Identity = { kind: 'anonymous' };
/** Tenants whose anonymous principal is kept (a client naming more starts the memo over). */
const MAX_ANONYMOUS_TENANTS = 1000;

/** The subject a device writes as (audit, ownership of what it creates). */
export function deviceSubject(tenant: string, deviceId: string): string {
  return `urn:ngsi-ld:Device:${tenant === '' ? DEFAULT_TENANT_SEGMENT : tenant}:${deviceId}`;
}

/** The `<tenant>/<deviceId>` user name of a device, or undefined. */
function deviceOfUsername(username: string | undefined): { tenant: string; deviceId: string } | undefined {
  if (username === undefined) return undefined;
  const topic = parseMeasurementTopic(`${MEASUREMENT_PREFIX}${username}/status`);
  return topic && { tenant: topic.tenant, deviceId: topic.deviceId };
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

export function createMqttAccess(deps: MqttAccessDeps): MqttAccessHooks {
  const { log, ingest, auth } = deps;
  const identities = new WeakMap<Client, Identity>();
  // NOTE: a principal is read-only, so the one of a device and those of anonymous writers are made
  // once, not per message; the write path also keys its grouping on the principal object.
  const anonymousOf = boundedMemo(MAX_ANONYMOUS_TENANTS, anonymousIn);

  const refuse = (done: (error: AuthenticateError | null, success: boolean | null) => void, code: number): void => {
    const err = new Error(code === IDENTIFIER_REJECTED ? 'identifier rejected' : 'bad user name or password') as AuthenticateError;
    err.returnCode = code;
    done(err, false);
  };

  /** The principal a client writes the measurements of `tenant`/`deviceId` as; undefined: not allowed. */
  const actorOf = (identity: Identity, tenant: string, deviceId: string): Principal | undefined | Promise<Principal | undefined> => {
    switch (identity.kind) {
      case 'anonymous':
        return anonymousOf(tenant);
      case 'device': {
        if (identity.tenant !== tenant || identity.deviceId !== deviceId) return undefined;
        const subject = deviceSubject(tenant, deviceId);
        // NOTE: a registered device writes the one entity the registry (managed by administrators)
        // maps it to, and publishing is limited to its own topics: that mapping is its permission.
        return (identity.principal ??= { tenant, subject, admin: true, assignees: [subject], groups: [] });
      }
      case 'token':
        return auth?.principal(identity.token, tenant).catch(() => undefined);
    }
  };

  const principalOfClient = async (identity: Identity): Promise<Principal | undefined> => {
    if (identity.kind === 'token') return auth?.principal(identity.token, '').catch(() => undefined);
    return undefined;
  };

  return {
    authenticate(client, username, password, done) {
      if (auth === undefined) {
        identities.set(client, ANONYMOUS);
        done(null, true);
        return;
      }
      if (password === undefined || password.length === 0) {
        log.info('mqtt client refused: no password', { clientId: client.id });
        refuse(done, BAD_USERNAME_OR_PASSWORD);
        return;
      }
      const secret = password.toString('utf8');
      const device = deviceOfUsername(username);
      const asDevice = device ? auth.deviceSecret(device.tenant, device.deviceId, secret).catch(() => false) : Promise.resolve(false);
      void asDevice.then(async (isDevice) => {
        if (isDevice && device) {
          if (client.id !== username) {
            log.info('mqtt device refused: client id differs from user name', { clientId: client.id });
            refuse(done, IDENTIFIER_REJECTED);
            return;
          }
          identities.set(client, { kind: 'device', ...device });
          done(null, true);
          return;
        }
        const valid = await auth.principal(secret, '').then(() => true, () => false);
        if (!valid) {
          log.info('mqtt client refused: bad user name or password', { clientId: client.id });
          refuse(done, BAD_USERNAME_OR_PASSWORD);
          return;
        }
        identities.set(client, { kind: 'token', token: secret });
        done(null, true);
      });
    },

    authorizePublish(client, packet: PublishPacket, done) {
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
          log.info('mqtt publish on a notification topic refused', { clientId: client.id, topic: packet.topic });
          done(new Error('notification topics are published by the broker only'));
          return;
        }
        done(null);
        return;
      }
      const topic = parseMeasurementTopic(packet.topic);
      const identity = identities.get(client) ?? ANONYMOUS;
      const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
      if (topic === undefined) {
        log.warn('mqtt measurement dropped', { clientId: client.id, topic: packet.topic, reason: 'topic' });
        done(null);
        return;
      }
      // NOTE: Aedes acknowledges a QoS 1 publish (PUBACK) once this calls back: only after the commit.
      // A dropped message is acknowledged too (MQTT 3.1.1 has no negative acknowledgement): the
      // client would otherwise resend it forever.
      const actor = actorOf(identity, topic.tenant, topic.deviceId);
      const handled = actor instanceof Promise ? actor.then((a) => ingest.handle(a, topic, payload)) : ingest.handle(actor, topic, payload);
      const answer = (): void => done(null);
      void handled.then(answer, answer);
    },

    authorizeSubscribe(client, subscription: Subscription, done) {
      if (auth === undefined) {
        done(null, subscription);
        return;
      }
      const identity = identities.get(client);
      const filter = subscription.topic;
      const deny = (why: string): void => {
        log.info('mqtt subscription refused', { clientId: client.id, topic: filter, why });
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
      void principalOfClient(identity).then((principal) => {
        if (principal === undefined) return deny('token no longer valid');
        if (principal.admin) return done(null, subscription);
        if (filterReaches(filter, ['ngsi'])) return deny('measurement topics are for administrators and their devices');
        if (!auth.maySubscribe(filter, principal)) return deny('notifications of a subscription of another subject');
        return done(null, subscription);
      });
    },
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
