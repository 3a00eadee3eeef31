// Context source registrations for the composition root: the use cases, distributed operations
// (their source client on its own connection pools), what "this broker itself" means for a
// registration's endpoint (its public URL, or its HTTP port on a loopback host) and in `Via`.

import { hostname } from 'node:os';
import type { Config } from '../config/index.js';
import type { ChangeEvent } from '../events.js';
import type { ContextService } from '../jsonld/index.js';
import {
  allowEntriesOf, createClientCredentials, createHostAllowList, createHttpTransport, createOutboundFetch, type Clock, type IdGenerator,
} from '../lib/index.js';
import {
  createDistributedOps, createRegistrationService, createSourceAuth, createSourceClient, createSourceIndex, type DistributedOps,
  type RegistrationService, type SourceAuth,
} from '../registrations/index.js';
import type { Store } from '../store/index.js';
import type { Runtime } from './runtime.js';

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '0.0.0.0', '[::]']);

const portOf = (url: URL): number => (url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/** Whether an endpoint names this broker: its public URL's origin, or its HTTP port on loopback. */
function selfEndpointCheck(config: Config, runtime: Runtime): (url: URL) => boolean {
  const publicOrigin = config.server.publicUrl === '' ? undefined : new URL(config.server.publicUrl).origin;
  return (url) => {
    if (publicOrigin !== undefined && url.origin === publicOrigin) return true;
    const host = url.hostname.toLowerCase();
    const loopback = LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host);
    const port = runtime.httpPort ?? config.server.port;
    return loopback && portOf(url) === port;
  };
}

/** Most connections kept open to one context source. */
const SOURCE_SOCKETS = 16;

/** This broker's identifier in `Via` (NGSI-LD §6.3.18): its public URL's host, else its host name and HTTP port. */
function viaIdOf(config: Config, runtime: Runtime): () => string {
  if (config.server.publicUrl !== '') {
    const id = `edgeld@${new URL(config.server.publicUrl).host}`;
    return () => id;
  }
  return () => `edgeld@${hostname()}:${runtime.httpPort ?? config.server.port}`;
}

/**
 * Tokens of registrations that ask for OAuth 2.0 client credentials. Their token endpoint is reached
 * as their endpoint is: at the host and port the registration names, and there only (the outbound
 * client resolves it once and connects to that address; no redirect followed).
 */
function sourceAuthOf(config: Config, clock: Clock): SourceAuth {
  return createSourceAuth({
    tokenSource: (creds) => createClientCredentials({
      ...creds, timeoutMs: config.distributed.timeout, clock, fetch: createOutboundFetch(createHostAllowList(allowEntriesOf([creds.tokenUrl]), false)),
    }),
  });
}

export function buildRegistrations(deps: {
  config: Config; runtime: Runtime; store: Store; clock: Clock; newId: IdGenerator; contexts: ContextService; announce: (change: ChangeEvent) => void;
}): { registrations: RegistrationService; distributed: DistributedOps } {
  const { config, store, clock } = deps;
  const index = createSourceIndex(store);
  const registrations = createRegistrationService({
    store, clock, newId: deps.newId, isSelf: selfEndpointCheck(config, deps.runtime), index, announce: deps.announce,
  });
  const client = createSourceClient({
    transport: createHttpTransport(SOURCE_SOCKETS), clock, viaId: viaIdOf(config, deps.runtime),
    timeoutMs: config.distributed.timeout, maxReplyBytes: config.distributed.maxReplyBytes, auth: sourceAuthOf(config, clock),
    forwardTenant: config.distributed.forwardTenant,
  });
  const distributed = createDistributedOps({
    index, client, contexts: deps.contexts, clock, enabled: config.distributed.enabled, maxEntities: config.distributed.maxEntities,
  });
  return { registrations, distributed };
}
