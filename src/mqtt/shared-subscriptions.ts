// Shared subscriptions on the embedded broker, wired into Aedes through what Aedes 1.x and 2.x both
// have: each connection's parsed packets (the `$share/` filters renamed, share-name.ts), the access
// hooks (a shared filter authorized as its filter, and joined once granted), the broker's events
// (UNSUBSCRIBE, connections that end) and its emitter (shared-groups.ts).

import type { Aedes, Client } from 'aedes';
import type { Logger, MqttSessionStore } from '../lib/index.js';
import type { MqttQos } from '../subscriptions/index.js';
import type { MqttAccessHooks } from './hooks.js';
import { parserOf } from './aedes-client.js';
import { clientShareFilter, parseShareName, renameSharedFilters, STORED_SHARE_PREFIX } from './share-name.js';
import { createSharedGroups, type SharedGroups } from './shared-groups.js';

const PAGE = 256;

/** Renames the `$share/` filters of the client's SUBSCRIBE and UNSUBSCRIBE packets before Aedes handles them. */
export function renameSharedFiltersOf(client: Client, log: Logger): void {
  const parser = parserOf(client);
  if (parser === undefined) {
    log.warn('the shared subscriptions of this client cannot be seen: they match nothing', { clientId: client.id });
    return;
  }
  // NOTE: a listener put first sees each packet before Aedes handles it.
  parser.prependListener('packet', renameSharedFilters);
}

/**
 * The access hooks with shared filters: one is authorized as its filter is (the same ACL), and the
 * client joins its group once granted; a bad share name is refused. No client receives a message
 * published on the stored form of a shared filter.
 */
export function withSharedSubscriptions(hooks: MqttAccessHooks, groups: () => SharedGroups | undefined, log: Logger): MqttAccessHooks {
  const inner = hooks.authorizeSubscribe;
  const forward = hooks.authorizeForward;
  return {
    ...hooks,
    authorizeSubscribe: (client, subscription, done) => {
      const name = parseShareName(subscription.topic);
      if (name === undefined) {
        inner(client, subscription, done);
        return;
      }
      if (name === 'invalid') {
        log.info('mqtt subscription refused', { clientId: client.id, topic: clientShareFilter(subscription.topic), why: 'not a shared subscription: $share/<group>/<filter>' });
        done(null, null);
        return;
      }
      inner(client, { ...subscription, topic: name.filter }, (err, granted) => {
        if (err || !granted) {
          done(err, null);
          return;
        }
        // At most QoS 1: a group follows each message to its PUBACK (QoS 2 exchanges stay Aedes' own, with its session queue).
        const qos: MqttQos = granted.qos > 0 ? 1 : 0;
        groups()?.join(client, subscription.topic, qos);
        done(null, { ...subscription, qos });
      });
    },
    authorizeForward: (client, packet) => (packet.topic.startsWith(STORED_SHARE_PREFIX) ? null : forward(client, packet)),
  };
}

/** The groups of `aedes`, kept current from its events; the persistent members of `store` are members from the start. */
export function startSharedGroups(aedes: Aedes, hooks: MqttAccessHooks, store: MqttSessionStore | undefined, log: Logger): SharedGroups {
  const groups = createSharedGroups({ aedes, mayRead: (client, packet) => hooks.authorizeForward(client, packet) !== null, log });
  aedes.on('unsubscribe', (filters, client) => groups.leave(client, filters));
  aedes.on('clientDisconnect', (client) => groups.disconnected(client));
  aedes.on('clientReady', (client) => groups.connected(client));
  if (store === undefined) return groups;
  let after: { clientId: string; topic: string } | undefined;
  for (let page = store.subscriptionsPage(after, PAGE); page.length > 0; page = store.subscriptionsPage(after, PAGE)) {
    for (const s of page) if (s.topic.startsWith(STORED_SHARE_PREFIX)) groups.restore(s.clientId, s.topic, s.qos > 0 ? 1 : 0);
    const last = page[page.length - 1]!; // NOTE: page.length > 0
    after = { clientId: last.clientId, topic: last.topic };
  }
  return groups;
}
