// The parts every other part of the broker is built on: the store, the change emitter and the
// journal feed it wakes, the context service and the one write core.

import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { createWriteAccess, createWriteCore } from '../entities/index.js';
import { createChangeEmitter, type ChangeEmitter, type WriteCore } from '../events.js';
import { createContextService, type ContextService } from '../jsonld/index.js';
import {
  allowEntryOf, createHostAllowList, createOutboundFetch, parseHostAllowList, timeOrderedUuid, type Clock, type IdGenerator, type Logger,
} from '../lib/index.js';
import { createJournalFeed, openStore, type JournalFeed, type Store } from '../store/index.js';

export interface FoundationDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  newId?: IdGenerator | undefined;
  fetch?: typeof fetch | undefined;
  dbPath?: string | undefined;
}

export interface Foundation {
  store: Store;
  events: ChangeEmitter;
  /** The journal's one reader: every consumer of changes registers on it. */
  feed: JournalFeed;
  contexts: ContextService;
  core: WriteCore;
}

/**
 * The hosts remote @contexts may come from even at non-public addresses: contexts.allowed-hosts,
 * and the upstream broker's host and its context's when federation is on (the operator's choice).
 */
function contextAllowEntries(config: Config): string[] {
  const { url, context } = config.federation.upstream;
  const upstream = url === '' ? [] : [url, context].flatMap((u) => allowEntryOf(u, true) ?? []);
  return [...parseHostAllowList(config.contexts.allowedHosts), ...upstream];
}

export function buildFoundation(deps: FoundationDeps): Foundation {
  const { config, log, clock } = deps;
  const store = openStore({
    path: deps.dbPath ?? join(config.storage.dir, 'edgeld.db'),
    busyTimeoutMs: config.storage.busyTimeout,
    minFreeBytes: config.storage.minFreeBytes,
    walLimitBytes: config.storage.walLimitBytes,
    commitWindowMs: config.storage.commitWindow,
    historyBucket: config.history.bucket,
    log: log.child('store'),
    clock,
  });
  const events = createChangeEmitter((err) => log.error('change listener failed', { err }));
  // NOTE: the one place where journal consumers are woken after commit: the emitter only wakes the
  // feed, and what each consumer reads is the journal, committed.
  const feed = createJournalFeed({ journal: store.journal, log: log.child('journal') });
  events.on((change) => feed.announce(change));
  const contextHosts = contextAllowEntries(config);
  const contexts = createContextService({
    persistence: store.contexts,
    allowRemote: config.contexts.allowRemote || contextHosts.length > 0,
    fetchTimeoutMs: config.contexts.fetchTimeout,
    maxBytes: config.contexts.maxBytes,
    log: log.child('jsonld'),
    clock,
    fetch: deps.fetch ?? createOutboundFetch(createHostAllowList(contextHosts, config.contexts.allowRemote)),
  });
  const authConfig = config.application.authentication;
  // The one write path: every write journals its changes through it (and, with authentication,
  // checks and grants permissions in the same transaction).
  const core = createWriteCore({ store, events, clock, ...(authConfig.enabled ? { access: createWriteAccess({ store, newId: deps.newId ?? timeOrderedUuid }) } : {}) });
  return { store, events, feed, contexts, core };
}
