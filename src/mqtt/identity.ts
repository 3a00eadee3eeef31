// A connected client as authenticated (anonymous, a device, a token's subject), what the access hooks
// share, and the principal a client writes measurements as.

import type { Client } from 'aedes';
import type { Principal } from '../ngsi/index.js';
import type { Logger, MqttSessionStore } from '../lib/index.js';
import { DEFAULT_TENANT_SEGMENT, type Ingest, type Publisher } from './ingest.js';
import type { Party } from './topic-classes.js';
import type { CommandPort } from './commands.js';

export interface MqttAuthentication {
  /** The principal of a token in a tenant; rejects when the token is not valid. */
  principal(token: string, tenant: string): Promise<Principal>;
  /** Whether `secret` is the MQTT secret of a registered device. */
  deviceSecret(tenant: string, deviceId: string, secret: string): Promise<boolean>;
  /** Whether a device is registered (its client id is kept for it). */
  isDevice(tenant: string, deviceId: string): boolean;
  /** Whether `subject` may subscribe to a filter that can match topics subscriptions notify on (none of another's). */
  maySubscribe(filter: string, subject: string | undefined): boolean;
  /** The subjects owning the subscriptions notifying on `topic` ('' for an ownerless one); undefined when none does. */
  owners(topic: string): ReadonlySet<string> | undefined;
}

/** Where the principal each client id's session belongs to is kept. */
export type MqttSessionOwners = Pick<MqttSessionStore, 'sessionOwner' | 'putSessionOwner' | 'deleteSessionOwner'>;

export interface MqttAccessStats {
  /** CONNECTs refused because their client id belongs to another principal. */
  takeoversRefused: number;
  /** CONNECTs refused because their will names a topic the client may not publish on. */
  willsRefused: number;
  /** CONNECTs refused unheard because too many password checks were in progress already. */
  busyRefused: number;
}

/** A connected client as authenticated; also the publisher named when one of its messages is dropped. */
export type Identity = Publisher & (
  | { readonly kind: 'anonymous' }
  /** token: undefined for the will of an earlier run, whose token is gone. */
  | { readonly kind: 'token'; readonly token: string | undefined; readonly party: Party & { kind: 'subject' } }
  | { readonly kind: 'device'; readonly tenant: string; readonly deviceId: string; readonly party: Party; principal?: Principal }
);

/** Where answers on `cmdexe` go, with the payload limit they are checked against. */
export interface CommandAnswers {
  port: Pick<CommandPort, 'answer' | 'refuseAnswer'>;
  maxPayload: number;
}

/** Where Home Assistant's commands (`edgeld/ha/…/set`) go. */
export interface HomeAssistantCommands {
  /** Writes the command as `actor`; resolves once written or refused. */
  command(actor: Principal, tenant: string, deviceId: string, command: string, payload: Buffer): Promise<void>;
}

/** What the hooks share. */
export interface AccessContext {
  log: Logger;
  ingest: Ingest;
  auth: MqttAuthentication | undefined;
  identities: WeakMap<Client, Identity>;
  sessions: MqttSessionOwners;
  stats: MqttAccessStats;
  /** The principal an anonymous client writes a device's measurements as (authentication off): the device's subject. */
  anonymousOf(tenant: string, deviceId: string): Principal;
  commands: CommandAnswers | undefined;
  /** Present when the Home Assistant integration is on. */
  homeAssistant: HomeAssistantCommands | undefined;
}

/** The subject a device writes as (audit, ownership of what it creates). */
export function deviceSubject(tenant: string, deviceId: string): string {
  return `urn:ngsi-ld:Device:${tenant === '' ? DEFAULT_TENANT_SEGMENT : tenant}:${deviceId}`;
}

/** The identity of a client (one made for it if it was never authenticated). */
export function identityOf(ctx: AccessContext, client: Client): Identity {
  return ctx.identities.get(client) ?? { kind: 'anonymous', clientId: client.id, user: null };
}

/**
 * The identity a will of an earlier run is published as: the principal its client id's session is
 * bound to (`device:<tenant segment>/<deviceId>` or `subject:<sub>`), without a token; nobody's when
 * unbound.
 */
export function identityOfOwner(clientId: string, owner: string | undefined): Identity {
  if (owner?.startsWith('device:')) {
    const user = owner.slice('device:'.length);
    const slash = user.indexOf('/');
    const segment = user.slice(0, slash);
    const device = { tenant: segment === DEFAULT_TENANT_SEGMENT ? '' : segment, deviceId: user.slice(slash + 1) };
    return { kind: 'device', clientId, user, ...device, party: { kind: 'device', ...device } };
  }
  const subject = owner?.startsWith('subject:') ? owner.slice('subject:'.length) : undefined;
  return { kind: 'token', clientId, user: subject ?? null, token: undefined, party: { kind: 'subject', subject, admin: false } };
}

/** The principal a client writes the measurements of `tenant`/`deviceId` as; undefined: not allowed. */
export function actorOf(ctx: AccessContext, identity: Identity, tenant: string, deviceId: string): Principal | undefined | Promise<Principal | undefined> {
  switch (identity.kind) {
    case 'anonymous':
      return ctx.anonymousOf(tenant, deviceId);
    case 'device': {
      if (identity.tenant !== tenant || identity.deviceId !== deviceId) return undefined;
      const subject = deviceSubject(tenant, deviceId);
      // NOTE: a registered device writes the one entity the registry (managed by administrators)
      // maps it to, and publishing is limited to its own topics: that mapping is its permission.
      return (identity.principal ??= { tenant, subject, admin: true, assignees: [subject], groups: [] });
    }
    case 'token':
      return identity.token === undefined ? undefined : ctx.auth?.principal(identity.token, tenant).catch(() => undefined);
  }
}
