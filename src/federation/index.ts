// The federation module: store-and-forward of local changes to a cloud NGSI-LD broker (current
// state by batch upsert, every instance through the temporal API, deletions), with parking of
// refused entities, bounded outbox, backoff and OAuth 2.0 client credentials; and the gateway's
// registration upstream as a context source of what it holds; and the downlink from the cloud.

export {
  createFederation, FEDERATION_READER, type Federation, type FederationDeps, type FederationOptions, type FederationStatus,
} from './drain.js';
export { UpstreamError } from './errors.js';
export { createFederationClient, type UpstreamClient } from './client.js';
export {
  createRegistrationKeeper, type RegistrationKeeper, type RegistrationKeeperDeps, type RegistrationKeeperOptions, type RegistrationStatus,
} from './registration-keeper.js';
export type { RegisterMode, RegistrationFacts } from './registration-body.js';
export { createDownlink, type Downlink, type DownlinkStatus } from './downlink.js';
export { REFUSAL_REASONS } from './downlink-apply.js';

import type { FederationStatus } from './drain.js';

/** The status when no upstream is configured. */
export function disabledStatus(): FederationStatus {
  return {
    enabled: false, url: '', outboxDepth: 0, oldestPending: undefined, lastSuccess: undefined, lastError: undefined, parked: 0, dropped: 0,
    sent: { entities: 0, instances: 0 }, registration: undefined, downlink: undefined,
  };
}
