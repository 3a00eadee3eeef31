// The network address a request came from: the peer of its connection, as Node's server gives it
// to the Hono app (@hono/node-server's `incoming`). Forwarding headers are not read: nothing says
// which proxy to trust, and a client could write any address there.

import type { AppContext } from './app-env.js';

/** The connection's bindings as @hono/node-server passes them (only what is read here). */
interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: unknown } };
}

/** The peer address of the request's connection; undefined without one (a request made in-process). */
export function peerAddressOf(c: AppContext): string | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null) return undefined;
  // NOTE: the adapter's bindings are untyped in AppEnv; each member is checked below.
  const address = (env as NodeBindings).incoming?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}
