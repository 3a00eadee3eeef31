// The federation drain when an upstream is configured (a consumer of the journal feed), and the
// metrics it adds.

import type { Config } from '../config/index.js';
import { createFederation, FEDERATION_READER, type Federation } from '../federation/index.js';
import type { MetricsSource } from '../http/index.js';
import type { ContextService } from '../jsonld/index.js';
import { allowEntriesOf, createHostAllowList, createOutboundFetch, type Clock, type Logger } from '../lib/index.js';
import type { JournalFeed, Store } from '../store/index.js';
import { addDuration, parseDuration } from '../temporal/index.js';

export interface FederationWiring {
  config: Config;
  store: Store;
  feed: JournalFeed;
  contexts: ContextService;
  clock: Clock;
  log: Logger;
}

/**
 * The federation drain when an upstream is configured. Otherwise its journal reader is forgotten, so
 * that a cursor left from an earlier configuration no longer holds changes back from pruning.
 */
export function buildFederation(deps: FederationWiring): Federation | undefined {
  const { config, store, contexts, log } = deps;
  const fed = config.federation;
  if (fed.upstream.url === '') {
    if (store.journal.cursor(FEDERATION_READER) !== undefined) {
      store.journal.dropReader(FEDERATION_READER);
      log.info('federation off: its pending changes are no longer kept');
    }
    return undefined;
  }
  // The schema accepts only ISO 8601 durations longer than zero for federation.outbox.max-age.
  const maxAge = parseDuration(fed.outbox.maxAge);
  if (!maxAge) throw new Error(`federation.outbox.max-age: '${fed.outbox.maxAge}' is too large a duration`);
  const up = fed.upstream;
  return createFederation({
    store, feed: deps.feed, clock: deps.clock, log: log.child('federation'),
    context: async () => {
      const resolved = await contexts.resolve(up.context === '' ? undefined : up.context);
      return { mapper: resolved, linkUrl: resolved.linkUrl ?? up.context };
    },
    horizon: (now) => addDuration(now, maxAge, -1),
    // The token endpoint through the outbound client: its own host and port, or public addresses.
    ...(up.tokenUrl === '' ? {} : { fetch: createOutboundFetch(createHostAllowList(allowEntriesOf([up.tokenUrl]), true)) }),
    options: {
      url: up.url, upstreamTenant: up.tenant, tenant: fed.tenant, types: up.types === '' ? [] : up.types.split(','),
      batchSize: fed.batchSize, lingerMs: fed.linger, timeoutMs: fed.timeout, retryBaseMs: fed.retryBase, retryMaxMs: fed.retryMax, maxRows: fed.outbox.maxRows,
      ...(up.tokenUrl === '' ? {} : { token: { url: up.tokenUrl, clientId: up.clientId, clientSecret: up.clientSecret } }),
    },
  });
}

/** The metrics of the federation drain (none when it is off). */
export function federationMetrics(federation: Federation | undefined): MetricsSource[] {
  if (federation === undefined) return [];
  return [
    { name: 'edgeld_federation_outbox_depth', help: 'Journal changes not yet acknowledged by the upstream broker', collect: () => federation.status().outboxDepth },
    { name: 'edgeld_federation_parked', help: 'Entity changes the upstream broker refused, kept with their error', collect: () => federation.status().parked },
    {
      name: 'edgeld_federation_dropped_total', help: 'Changes skipped by the outbox bounds or pruned before they were forwarded', type: 'counter',
      collect: () => federation.status().dropped,
    },
    { name: 'edgeld_federation_sent_instances_total', help: 'History instances acknowledged upstream', type: 'counter', collect: () => federation.status().sent.instances },
  ];
}
