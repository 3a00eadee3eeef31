// The access seam of the embedded broker: who may connect, publish and subscribe. Today every
// connection is anonymous and allowed; authentication and per-topic permissions plug in here.

import type { AuthenticateError, Client, PublishPacket, Subscription } from 'aedes';
import type { Logger } from '../lib/index.js';

/** The Aedes hooks that decide access, in the shape Aedes calls them. */
export interface MqttAccessHooks {
  authenticate(client: Client, username: string | undefined, password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void): void;
  authorizePublish(client: Client | null, packet: PublishPacket, done: (error?: Error | null) => void): void;
  authorizeSubscribe(client: Client, subscription: Subscription,
    done: (error: Error | null, subscription?: Subscription | null) => void): void;
}

const SYS_PREFIX = '$SYS/';

/**
 * Anonymous access: every client may connect, subscribe to anything and publish anywhere but `$SYS/`.
 * TODO: when `application.authentication.enabled` can be true, check username + password (device
 * secret or JWT) in `authenticate` and the permission policy per topic in the two authorize hooks.
 */
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
  };
}

