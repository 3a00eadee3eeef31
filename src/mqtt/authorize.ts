// The access hooks that apply the topic classes' table (topic-classes.ts) once a client is
// authenticated: at PUBLISH (wills included), at SUBSCRIBE, and at the delivery of every message to
// every client (Aedes' authorizeForward, retained and queued messages included).
//
// A refused publish of an MQTT 3.1.1 client is acknowledged (3.1.1 has no negative acknowledgement:
// the client would resend it forever) but never retained, queued or relayed; a forged publish on a
// topic only the broker publishes on ends the connection. An MQTT 5 client's QoS 1/2 publish refused
// gets a PUBACK with the reason code that says why (reason-codes.ts), and its connection stays.

import type { Client, PublishPacket } from 'aedes';
import type { MqttAccessHooks } from './hooks.js';
import { parseAnswer } from './commands.js';
import { HOME_ASSISTANT_PREFIX } from '../home-assistant/index.js';
import { anonymousIn } from '../ngsi/index.js';
import { actorOf, identityOf, identityOfOwner, type AccessContext, type CommandAnswers, type HomeAssistantCommands, type Identity } from './identity.js';
import { MEASUREMENT_PREFIX, parseMeasurementTopic, type IngestOutcome, type UserProperties } from './ingest.js';
import { PUBACK, mayRefuseWithCode, pubackCodeOf, refuseWithCode } from './reason-codes.js';
import { REFUSED_TOPIC, classifyTopic, mayRead, notifyPrefixOf, publishRule, type Party, type TopicClass } from './topic-classes.js';

const SYS_PREFIX = '$SYS/';

/** Whether an MQTT topic filter can match a topic that starts with the given levels. */
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

/**
 * Moves a refused publish where nothing reaches: not retained, not queued for persistent sessions,
 * delivered to nobody. NOTE: Aedes has no way to drop one publish without ending the connection, so
 * the packet it goes on handling is made harmless instead.
 */
function neutralize(packet: PublishPacket): void {
  packet.topic = REFUSED_TOPIC;
  packet.retain = false;
}

/** The User Properties of an MQTT 5 publish, as log fields (none when it has none). */
const userPropertiesOf = (packet: PublishPacket): { userProperties?: UserProperties } =>
  (packet.properties?.userProperties ? { userProperties: packet.properties.userProperties } : {});

const isAdmin = (party: Party): boolean => party.kind === 'subject' && party.admin;
const isOwnDevice = (party: Party, c: TopicClass): boolean =>
  party.kind === 'device' && 'deviceId' in c && c.tenant === party.tenant && c.deviceId === party.deviceId;

/**
 * Why the will a client leaves at CONNECT may not be published by it, or undefined when it may (as
 * mosquitto 2 checks a will at CONNECT). What only ingestion can tell, a subject's write permission on
 * a measurement, is left to the publish of the will, which drops it as any other publish.
 */
export function willRefusal(ctx: AccessContext, identity: Identity, topic: string): string | undefined {
  const { auth } = ctx;
  if (auth === undefined || identity.kind === 'anonymous') return undefined;
  // [MQTT-4.7.2-1] Topics starting with `$` are the server's (the topic of refused publishes included).
  if (topic.startsWith('$')) return 'system topics are published on by the broker only';
  const { party } = identity;
  const c = classifyTopic(topic);
  const rule = publishRule(c, party, c.kind === 'free' ? auth.owners(topic) : undefined);
  if (rule === 'broker') return 'this topic is published on by the broker only';
  if (rule === 'no' || (rule === 'ingest' && party.kind === 'device' && !isOwnDevice(party, c))) return 'a topic of another device';
  return undefined;
}

export function authorizePublishWith(ctx: AccessContext): MqttAccessHooks['authorizePublish'] {
  const { log, auth } = ctx;
  return (client, packet: PublishPacket, done) => {
    // [MQTT-4.7.2-1] Topics starting with `$` are the server's.
    if (packet.topic.startsWith(SYS_PREFIX)) {
      done(new Error(`${SYS_PREFIX} topics are reserved`));
      return;
    }
    if (client !== null) {
      publishAs(ctx, identityOf(ctx, client), packet, done, mayRefuseWithCode(client, packet) ? client : null);
      return;
    }
    if (auth === undefined) {
      done(null);
      return;
    }
    // A will of an earlier run: checked against the rules of the principal its session is bound to.
    const clientId: unknown = Reflect.get(packet, 'clientId');
    const id = typeof clientId === 'string' ? clientId : '';
    const identity = identityOfOwner(id, id === '' ? undefined : ctx.sessions.sessionOwner(id));
    log.debug('mqtt will of an earlier run checked', { clientId: id, user: identity.user, topic: packet.topic });
    publishAs(ctx, identity, packet, done);
  };
}

/**
 * At MQTT 5, a publish the topic rules refused (counted as at 3.1.1 first) is refused with 0x87;
 * true when it was.
 */
function refusedAtV5(v5: Client | null, isRefused: boolean, packet: PublishPacket, done: (error?: Error | null) => void): boolean {
  if (v5 === null || !isRefused) return false;
  refuseWithCode(v5, packet, PUBACK.NOT_AUTHORIZED, 'not authorized: a topic of another device', done);
  return true;
}

/**
 * `v5`: the client when its publish can be refused with a reason code (MQTT 5, QoS 1/2), else null.
 */
function publishAs(ctx: AccessContext, identity: Identity, packet: PublishPacket, done: (error?: Error | null) => void, v5: Client | null = null): void {
  const { log, ingest, auth } = ctx;
  const { topic } = packet;
  // Authentication off: everything is relayed, measurements or not.
  let relayAnyway = true;
  let isRefused = false;
  if (auth !== undefined) {
    if (identity.kind === 'anonymous') {
      if (v5) return refuseWithCode(v5, packet, PUBACK.NOT_AUTHORIZED, 'not authenticated', done);
      neutralize(packet);
      done(null);
      return;
    }
    const { party } = identity;
    const c = classifyTopic(topic);
    const rule = publishRule(c, party, c.kind === 'free' ? auth.owners(topic) : undefined);
    if (rule === 'broker') {
      // NOTE: MQTT 3.1.1 cannot refuse one publish: an error ends the connection of a client trying to forge.
      log.info('mqtt publish on a notification topic refused', { clientId: identity.clientId, user: identity.user, topic, ...userPropertiesOf(packet) });
      done(new Error('this topic is published on by the broker only'));
      return;
    }
    if (rule === 'no') {
      log.info('mqtt publish refused: a topic of another device', { clientId: identity.clientId, user: identity.user, topic, ...userPropertiesOf(packet) });
      neutralize(packet);
      isRefused = true;
    }
    // A measurement is relayed when stored, or when its device or an administrator sent it (the
    // device's subscribers see what it sends); never when a subject without write permission did.
    relayAnyway = isAdmin(party) || isOwnDevice(party, c);
  }
  if (ctx.homeAssistant !== undefined && !isRefused && topic.startsWith(HOME_ASSISTANT_PREFIX)) {
    const c = classifyTopic(topic);
    if (c.kind === 'ha-command') {
      // NOTE: a command is a write, never a message to relay or retain (a retained press would repeat).
      const settled = (): void => {
        neutralize(packet);
        done(null);
      };
      commandFromHomeAssistant(ctx, ctx.homeAssistant, identity, c, packet).then(settled, (err: unknown) => {
        log.warn('home assistant command not handled', { clientId: identity.clientId, topic, err });
        settled();
      });
      return;
    }
  }
  if (!topic.startsWith(MEASUREMENT_PREFIX)) {
    if (!refusedAtV5(v5, isRefused, packet, done)) done(null);
    return;
  }
  const measurement = parseMeasurementTopic(topic);
  // NOTE: Aedes acknowledges a QoS 1 publish (PUBACK) once this calls back: only after the commit.
  if (measurement === undefined) {
    const c = ctx.commands === undefined || isRefused ? undefined : classifyTopic(topic);
    if (c?.kind === 'command-answer' && ctx.commands !== undefined) {
      // NOTE: an answer not recorded is not acknowledged: the connection ends and the device sends it again.
      answerCommand(ctx.commands, c, packet, log).then(() => done(null), (err: unknown) => done(err instanceof Error ? err : new Error(String(err))));
      return;
    }
    ingest.dropTopic(topic, identity);
    if (refusedAtV5(v5, isRefused, packet, done)) return;
    if (v5) return refuseWithCode(v5, packet, PUBACK.TOPIC_NAME_INVALID, 'expected ngsi/<tenant>/<deviceId>/attrs, …/attrs/<attr> or …/status', done);
    done(null);
    return;
  }
  const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
  const actor = actorOf(ctx, identity, measurement.tenant, measurement.deviceId);
  const handled = actor instanceof Promise
    ? actor.then((a) => ingest.handle(a, measurement, payload, identity, packet.properties?.userProperties))
    : ingest.handle(actor, measurement, payload, identity, packet.properties?.userProperties);
  const answer = (outcome: IngestOutcome | undefined): void => {
    if (refusedAtV5(v5, isRefused, packet, done)) return;
    if (v5 && outcome?.stored === false) {
      refuseWithCode(v5, packet, pubackCodeOf(outcome.reason), outcome.detail, done);
      return;
    }
    if (outcome?.stored === false && outcome.reason === 'disk-full' && packet.qos > 0) {
      refuseUnacknowledged(done);
      return;
    }
    if (!relayAnyway && outcome?.stored !== true) neutralize(packet);
    done(null);
  };
  void handled.then(answer, answer);
}

/**
 * Home Assistant's button, number or switch (a message on `edgeld/ha/<tenant>/<deviceId>/<command>/set`):
 * a write of the command attribute as the publishing client (its token's subject, or, with
 * authentication off, the tenant's anonymous principal), checked by the write core like any write.
 */
async function commandFromHomeAssistant(
  ctx: AccessContext, port: HomeAssistantCommands, identity: Identity, c: { tenant: string; deviceId: string; command: string }, packet: PublishPacket,
): Promise<void> {
  const actor = identity.kind === 'anonymous' ? anonymousIn(c.tenant)
    : identity.kind === 'token' && identity.token !== undefined ? await ctx.auth?.principal(identity.token, c.tenant).catch(() => undefined)
      : undefined;
  if (actor === undefined) {
    ctx.log.info('home assistant command refused: no principal may write it', { clientId: identity.clientId, user: identity.user, topic: packet.topic });
    return;
  }
  const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
  await port.command(actor, c.tenant, c.deviceId, c.command, payload);
}

/**
 * How long a QoS 1 measurement refused for want of room holds its connection before closing it: the
 * client's packets wait meanwhile, and its reconnections come no faster than this.
 */
const NO_ROOM_HOLD_MS = 2_000;

/**
 * A measurement the store has no room for (storage.min-free-bytes, storage.max-bytes) is not
 * acknowledged: MQTT 3.1.1 cannot refuse one PUBLISH, so the connection ends after a short hold,
 * and the device sends the message again when it is back (its session keeps it), once room is made.
 */
function refuseUnacknowledged(done: (err: Error | null) => void): void {
  setTimeout(() => done(new Error('no room for the measurement: not acknowledged')), NO_ROOM_HOLD_MS).unref();
}

/**
 * A device's answer on `cmdexe` (edge.md §6): checked, then applied by the dispatcher; resolves
 * after its commit (the QoS 1 PUBACK follows, so an answer acknowledged is never lost).
 */
async function answerCommand(commands: CommandAnswers, c: { tenant: string; deviceId: string }, packet: PublishPacket, log: AccessContext['log']): Promise<void> {
  const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
  const correlation = packet.properties?.correlationData;
  const answer = parseAnswer(payload, commands.maxPayload, correlation === undefined ? undefined : correlation.toString('utf8'));
  if (typeof answer === 'string') {
    commands.port.refuseAnswer(c.tenant, c.deviceId, answer);
    return;
  }
  try {
    await commands.port.answer(c.tenant, c.deviceId, answer);
  } catch (err) {
    log.error('command answer not recorded', { tenant: c.tenant, deviceId: c.deviceId, id: answer.id, err });
    throw err;
  }
}

export function authorizeSubscribeWith(ctx: AccessContext): MqttAccessHooks['authorizeSubscribe'] {
  const { log, auth, identities } = ctx;
  return (client, subscription, done) => {
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
    if (identity === undefined || identity.kind === 'anonymous') return deny('not authenticated');
    if (filter.startsWith(REFUSED_TOPIC)) return deny('refused messages reach nobody');
    if (identity.kind === 'device') {
      if (filter.startsWith('$')) return deny('system topics are for administrators');
      const own = ['ngsi', identity.tenant === '' ? 'default' : identity.tenant, identity.deviceId];
      const parts = filter.split('/');
      if (filterReaches(filter, ['ngsi']) && !(parts.length >= 3 && own.every((level, i) => parts[i] === level))) {
        return deny('a device subscribes to its own measurement topics only');
      }
      if (filterReaches(filter, ['edgeld', 'notify']) || filterReaches(filter, ['edgeld', 'dashboard']) || !auth.maySubscribe(filter, undefined)) {
        return deny('notification topics are for the subjects of their subscriptions');
      }
      return done(null, subscription);
    }
    void (identity.token === undefined ? Promise.resolve(undefined) : auth.principal(identity.token, '').catch(() => undefined)).then((principal) => {
      if (principal === undefined) return deny('token no longer valid');
      if (principal.admin) return done(null, subscription);
      if (filter.startsWith('$')) return deny('system topics are for administrators');
      if (filterReaches(filter, ['ngsi'])) return deny('measurement topics are for administrators and their devices');
      const own = principal.subject === undefined ? undefined : notifyPrefixOf(principal.subject);
      if (filterReaches(filter, ['edgeld', 'notify']) && (own === undefined || !filter.startsWith(own))) {
        return deny('notification topics of another subject');
      }
      if (!auth.maySubscribe(filter, principal.subject)) return deny('notifications of a subscription of another subject');
      return done(null, subscription);
    });
  };
}

/** Delivery of each message to each client: only what the client may read, whatever filter it matched. */
export function authorizeForwardWith(ctx: AccessContext): MqttAccessHooks['authorizeForward'] {
  const { auth, identities } = ctx;
  return (client, packet) => {
    if (auth === undefined) return packet;
    if (packet.topic === REFUSED_TOPIC) return null;
    const identity = identities.get(client);
    if (identity === undefined || identity.kind === 'anonymous') return null;
    const c = classifyTopic(packet.topic);
    return mayRead(c, identity.party, c.kind === 'free' || c.kind === 'dashboard' ? auth.owners(packet.topic) : undefined) ? packet : null;
  };
}
