// Wills left by a broker that stopped without closing its connections (a crash, a kill): their
// clients' connections ended unannounced, so the wills are due [MQTT-3.1.2-8], each checked against
// the publishing rules of the principal its client id's session belongs to.

import type { Aedes } from 'aedes';
import type { Logger } from '../lib/index.js';
import type { MqttAccessHooks } from './hooks.js';
import type { SqlitePersistence } from './persistence.js';
import { REFUSED_TOPIC } from './topic-classes.js';

/**
 * Publishes and removes every will stored by another broker instance than `aedes`. Aedes does the
 * same on its own only after four heartbeat intervals; at start there is no reason to wait.
 */
export async function publishStaleWills(aedes: Aedes, persistence: SqlitePersistence, hooks: MqttAccessHooks, log: Logger): Promise<number> {
  let published = 0;
  for await (const will of persistence.streamWill({ [aedes.id]: true })) {
    const clientId = String(will.clientId);
    // NOTE: wills are publish packets; streamWill yields them as Aedes stored them.
    const packet = will as Parameters<Aedes['publish']>[0];
    const topic = packet.topic;
    const refused = await new Promise<Error | null | undefined>((resolve) => hooks.authorizePublish(null, packet, resolve))
      ?? (packet.topic === REFUSED_TOPIC ? new Error('its client may not publish there') : undefined);
    if (refused) log.warn('mqtt will of an earlier run refused', { clientId, topic, err: refused.message });
    else {
      await new Promise<void>((resolve) => aedes.publish(packet, () => resolve()));
      published += 1;
    }
    await persistence.delWill({ id: clientId, brokerId: will.brokerId });
  }
  if (published > 0) log.info('mqtt wills of an earlier run published', { count: published });
  return published;
}
