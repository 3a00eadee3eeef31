// Context source registrations (NGSI-LD §5.2.9, §5.9, §5.10): the model, parsing and rendering of the
// API form, the mode rules, and the use cases over the store and its match index.

export type { Operation, Registration, RegistrationQuery } from './model.js';
export { READ_ONLY_MEMBERS, type RegistrationInput } from './input.js';
/** The API form of a registration, compacted with a request's context. */
export { renderRegistration } from './render.js';
/** The use cases. */
export { createRegistrationService, type RegistrationService } from './service.js';
/** Journaled registration states as registration subscriptions' notifications show them. */
export { registrationStateOwner, showRegistrationState } from './notify-view.js';
/** Distributed operations: the sources of an operation, the client that calls them, forwarding and merging. */
export {
  createDistributedOps, type DistributedOps, type ForwardedWrite, type ReadRequest, type RemoteEntities, type SourceFailure, type WriteRequest,
} from './distributed.js';
export { createSourceClient } from './source-client.js';
/** OAuth 2.0 client credentials of registrations (contextSourceInfo keys of edgeld's own). */
export { createSourceAuth, type SourceAuth } from './source-auth.js';
export { createSourceIndex } from './sources.js';
export { mergeEntity as mergeSourceEntity } from './merge.js';
