// Registrations as the notifications of registration subscriptions show them (NGSI-LD §5.11.7,
// §5.3.2): a journaled registration state read back, matched against a subscription's queries, and
// shown with only its matching RegistrationInfo elements.

import type { Json, JsonObject, TermMapper } from '../ngsi/index.js';
import type { StoredRegistration } from '../store/index.js';
import { fromStored } from './codec.js';
import { matchingPart } from './match.js';
import type { RegistrationQuery } from './model.js';
import { renderRegistration } from './render.js';

// NOTE: a journaled state is a StoredRegistration as the registration service journaled it.
const storedOf = (state: Json): StoredRegistration => state as unknown as StoredRegistration;

/** The registration of a journaled state shown for these queries (any of them), or undefined when none matches. */
export function showRegistrationState(state: Json, queries: readonly RegistrationQuery[], mapper: TermMapper): JsonObject | undefined {
  const part = matchingPart(fromStored(storedOf(state)), queries);
  return part === undefined ? undefined : renderRegistration(part, mapper);
}

/** The subject owning the registration of a journaled state (undefined: created without authentication). */
export function registrationStateOwner(state: Json): string | undefined {
  return storedOf(state).owner;
}
