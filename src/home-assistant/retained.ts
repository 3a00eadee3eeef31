// The retained messages of the integration in the broker's store: which are its own (the discovery
// configs of this node id, everything under edgeld/ha/), so that those of devices gone while the
// gateway was down or the integration off are removed, and all of them when it is turned off.

import type { Store } from '../store/index.js';
import { HOME_ASSISTANT_PREFIX, type DiscoveryOptions } from './discovery.js';

const PAGE = 500;

/** Whether a retained topic is one the integration publishes (with these options). */
function isOwnTopic(o: DiscoveryOptions, topic: string): boolean {
  if (topic.startsWith(HOME_ASSISTANT_PREFIX)) return true;
  if (!topic.startsWith(`${o.prefix}/`)) return false;
  const levels = topic.slice(o.prefix.length + 1).split('/');
  return levels.length === 4 && levels[1] === o.nodeId && levels[3] === 'config';
}

/** The integration's retained topics in the store, in topic order. */
export function ownRetainedTopics(store: Pick<Store, 'mqttSessions'>, o: DiscoveryOptions): string[] {
  const out: string[] = [];
  for (const prefix of [`${o.prefix}/`, HOME_ASSISTANT_PREFIX]) {
    for (let after = prefix, page = store.mqttSessions.retainedPage(after, PAGE); page.length > 0; page = store.mqttSessions.retainedPage(after, PAGE)) {
      const inside = page.filter(({ topic }) => topic.startsWith(prefix));
      out.push(...inside.map(({ topic }) => topic).filter((topic) => isOwnTopic(o, topic)));
      if (inside.length < page.length) break;
      after = page[page.length - 1]!.topic;
    }
  }
  return out;
}

/**
 * The integration is off: its retained messages are deleted from the store before the broker loads
 * them, so that Home Assistant no longer discovers anything of this gateway. Returns how many.
 */
export function removeOwnRetained(store: Pick<Store, 'mqttSessions'>, o: DiscoveryOptions): number {
  const topics = ownRetainedTopics(store, o);
  for (const topic of topics) store.mqttSessions.deleteRetained(topic);
  return topics.length;
}
