// A registration back to compact JSON for the API (NGSI-LD §5.2.9): names compacted with the
// request's context, mode and operations shown with their defaults.

import { formatDateTime, type Json, type JsonObject, type TermMapper } from '../ngsi/index.js';
import { withoutSecret } from './source-auth.js';
import type { EntityInfo, Registration, RegistrationInfo, TimeInterval } from './model.js';

function renderEntityInfo(e: EntityInfo, mapper: TermMapper): JsonObject {
  const out: JsonObject = {};
  if (e.id !== undefined) out.id = e.id;
  if (e.idPattern !== undefined) out.idPattern = e.idPattern;
  out.type = mapper.compactIri(e.type);
  return out;
}

function renderInfo(info: RegistrationInfo, mapper: TermMapper): JsonObject {
  const out: JsonObject = {};
  if (info.entities !== undefined) out.entities = info.entities.map((e) => renderEntityInfo(e, mapper));
  if (info.propertyNames !== undefined) out.propertyNames = info.propertyNames.map((n) => mapper.compactIri(n));
  if (info.relationshipNames !== undefined) out.relationshipNames = info.relationshipNames.map((n) => mapper.compactIri(n));
  return out;
}

const renderInterval = (t: TimeInterval): JsonObject => (t.endAt === undefined ? { startAt: t.startAt } : { startAt: t.startAt, endAt: t.endAt });

/** The registration as the API shows it; `@context` is the edge's business. */
export function renderRegistration(reg: Registration, mapper: TermMapper, opts: { sysAttrs?: boolean } = {}): JsonObject {
  const out: JsonObject = { id: reg.id, type: 'ContextSourceRegistration' };
  if (reg.registrationName !== undefined) out.registrationName = reg.registrationName;
  if (reg.description !== undefined) out.description = reg.description;
  out.information = reg.information.map((i) => renderInfo(i, mapper));
  if (reg.tenant !== undefined) out.tenant = reg.tenant;
  if (reg.observationInterval !== undefined) out.observationInterval = renderInterval(reg.observationInterval);
  if (reg.managementInterval !== undefined) out.managementInterval = renderInterval(reg.managementInterval);
  if (reg.location !== undefined) out.location = reg.location;
  if (reg.observationSpace !== undefined) out.observationSpace = reg.observationSpace;
  if (reg.operationSpace !== undefined) out.operationSpace = reg.operationSpace;
  if (reg.expiresAt !== undefined) out.expiresAt = reg.expiresAtText ?? formatDateTime(reg.expiresAt);
  out.endpoint = reg.endpoint;
  // NOTE: a registration's OAuth 2.0 client secret is never shown (source-auth.ts).
  if (reg.contextSourceInfo !== undefined) out.contextSourceInfo = withoutSecret(reg.contextSourceInfo);
  if (reg.scope !== undefined) out.scope = reg.scope.length === 1 ? (reg.scope[0] ?? '') : [...reg.scope];
  out.mode = reg.mode;
  out.operations = [...reg.operations];
  if (reg.management !== undefined) out.management = { ...reg.management };
  for (const [iri, value] of Object.entries(reg.properties)) out[mapper.compactIri(iri)] = value as Json;
  if (opts.sysAttrs === true) {
    out.createdAt = formatDateTime(reg.createdAt);
    out.modifiedAt = formatDateTime(reg.modifiedAt);
  }
  return out;
}
