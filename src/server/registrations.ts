// Context source registrations for the composition root: the use cases, and what "this broker
// itself" means for a registration's endpoint (its public URL, or its HTTP port on a loopback host).

import type { Config } from '../config/index.js';
import type { ChangeEvent } from '../events.js';
import type { Clock, IdGenerator } from '../lib/index.js';
import { createRegistrationService, type RegistrationService } from '../registrations/index.js';
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

export function buildRegistrations(deps: {
  config: Config; runtime: Runtime; store: Store; clock: Clock; newId: IdGenerator; announce: (change: ChangeEvent) => void;
}): RegistrationService {
  return createRegistrationService({
    store: deps.store, clock: deps.clock, newId: deps.newId, isSelf: selfEndpointCheck(deps.config, deps.runtime), announce: deps.announce,
  });
}
