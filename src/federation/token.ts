// OAuth 2.0 client credentials (RFC 6749 §4.4) against the cloud's token endpoint: the shared client
// of lib, its failures as upstream failures (the drain keeps its batch and tries again later).

import { createClientCredentials, TokenEndpointError, type ClientCredentialsOptions, type TokenSource } from '../lib/index.js';
import { UpstreamError } from './errors.js';
import { describeReply } from './replies.js';

export type { TokenSource } from '../lib/index.js';

export function createTokenSource(opts: Omit<ClientCredentialsOptions, 'describe' | 'scope'>): TokenSource {
  const inner = createClientCredentials({ ...opts, describe: describeReply });
  return {
    get: (signal) => inner.get(signal).catch((err: unknown) => {
      throw err instanceof TokenEndpointError ? new UpstreamError(err.message, { cause: err.cause ?? err }) : err;
    }),
    invalidate: () => inner.invalidate(),
  };
}
