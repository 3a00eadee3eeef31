// The access seam of the embedded broker: who may connect, publish, subscribe and receive. The broker takes
// its hooks from the caller (access.ts: devices, tokens and the permission model); these are the
// hooks of a broker started without any.

import type { AedesPublishPacket, AuthenticateError, Client, PublishPacket, Subscription } from 'aedes';
import type { Logger } from '../lib/index.js';

/** The Aedes hooks that decide access, in the shape Aedes calls them. */
export interface MqttAccessHooks {
  authenticate(client: Client, username: string | undefined, password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void): void;
  authorizePublish(client: Client | null, packet: PublishPacket, done: (error?: Error | null) => void): void;
  authorizeSubscribe(client: Client, subscription: Subscription,
    done: (error: Error | null, subscription?: Subscription | null) => void): void;
  /** Called for every message delivered to every client (retained and queued ones too); null: not delivered. */
  authorizeForward(client: Client, packet: AedesPublishPacket): AedesPublishPacket | null;
  /** The subject a client authenticated as with a token; undefined for devices and anonymous clients. */
  subjectOf?(client: Client): string | undefined;
  /** Whether a client is the device itself (absent: any client may be, authentication being off). */
  isDeviceClient?(client: Client, tenant: string, deviceId: string): boolean;
}

const SYS_PREFIX = '$SYS/';

/** Anonymous access: every client may connect, subscribe to anything and publish anywhere but `$SYS/`. */
export function createAnonymousHooks(log: Logger): MqttAccessHooks {
  return {
    authenticate: (client, username, _password, done) => {
      log.debug('mqtt client authenticated', { clientId: client.id, anonymous: username === undefined });
      done(null, true);
    },
    authorizePublish: (client, packet, done) => {
      // [MQTT-4.7.2-1] Topics starting with `$` are the server's; clients must not publish to $SYS.
      if (packet.topic.startsWith(SYS_PREFIX)) {
        log.debug('mqtt publish to $SYS refused', { clientId: client?.id, topic: packet.topic });
        done(new Error(`${SYS_PREFIX} topics are reserved`));
        return;
      }
      done(null);
    },
    authorizeSubscribe: (_client, subscription, done) => done(null, subscription),
    authorizeForward: (_client, packet) => packet,
  };
}

