// Entry points from untrusted compact JSON (already JSON-parsed, context resolved upstream) to the
// model: whole entities, attribute maps of update bodies, merge fragments and single attributes.

import type { Attribute, Entity, EntityId, Iri } from './model.js';
import { ENTITY_CORE_MEMBERS, NGSI_LD_NULL, SPECIFIC_ACCESS_POLICY } from './vocab.js';
import type { TermMapper } from './terms.js';
import { BadRequestDataError } from './errors.js';
import { isPlainObject } from './json.js';
import { isAbsoluteUri, isScopePath } from './names.js';
import {
  isDeletion, type AttributeInput, type AttributeInputs, type ExpiresAt, type EntityFragment, type EntityMembers, type FragmentInput,
} from './fragment.js';
import { formatDateTime, parseDateTime } from './time.js';
import {
  checkInstances, child, expandName, fail, parseAttributeInput, parseFragmentInput, parseInstances,
  type ParseContext,
} from './parse-attribute.js';

export interface ParseOptions {
  /** The instant stamped as createdAt/modifiedAt on everything parsed. */
  now: number;
}

function rootContext(mapper: TermMapper, now: number, allowNull: boolean): ParseContext {
  return { mapper, now, allowNull, path: '' };
}

/** The body as an object whose core members are not JSON null. */
function readObject(doc: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(doc)) throw new BadRequestDataError(`${what} must be a JSON object`);
  for (const key of ['id', 'type', 'scope', 'expiresAt']) {
    if (doc[key] === null) throw new BadRequestDataError(`JSON null is not allowed (at ${key})`);
  }
  return doc;
}

function readId(v: unknown, ctx: ParseContext): EntityId {
  if (typeof v !== 'string') fail(ctx, 'Entity id must be a string');
  if (!isAbsoluteUri(v)) fail(ctx, `Entity id '${v}' is not an absolute URI`);
  return v;
}

/** `type`: one name or a non-empty array of names, expanded (NGSI-LD §4.16 multi-typing). */
function readTypes(v: unknown, ctx: ParseContext): Iri[] {
  const names = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(names) || names.length === 0) fail(ctx, 'Entity type must be a name or a non-empty array of names');
  const types = names.map((n, i) => {
    const at = Array.isArray(v) ? child(ctx, i) : ctx;
    if (typeof n !== 'string') fail(at, 'Entity type must be a string');
    const iri = expandName(n, at);
    // A name the context maps to a keyword (`"type": "type"`) names no type.
    if (!isAbsoluteUri(iri)) fail(at, `Entity type '${n}' does not expand to an IRI`);
    return iri;
  });
  return [...new Set(types)];
}

/** `scope`: one scope path or an array of them (NGSI-LD §4.18); NGSI-LD Null when allowed. */
function readScope(v: unknown, ctx: ParseContext): string[] | 'deleted' {
  if (v === NGSI_LD_NULL && ctx.allowNull) return 'deleted';
  const scopes = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(scopes)) fail(ctx, 'scope must be a scope path or an array of scope paths');
  for (const [i, s] of scopes.entries()) {
    if (typeof s !== 'string' || !isScopePath(s)) fail(child(ctx, i), `'${String(s)}' is not a scope path like /A/B`);
  }
  return [...new Set(scopes.map(String))];
}

/**
 * `expiresAt` of an entity (NGSI-LD §4.22 transient entities): a DateTime (§4.6.3), else
 * BadRequestData; NGSI-LD Null when allowed (the entity becomes permanent). A past instant is
 * accepted: the entity is due at once.
 */
function readExpiresAt(v: unknown, ctx: ParseContext): ExpiresAt | 'deleted' {
  if (v === NGSI_LD_NULL && ctx.allowNull) return 'deleted';
  if (typeof v !== 'string') fail(ctx, 'expiresAt must be a DateTime string');
  const at = parseDateTime(v);
  if (at === undefined) fail(ctx, `'${v}' is not an ISO 8601 DateTime with a time zone`);
  return v === formatDateTime(at) ? { at } : { at, text: v };
}

/** Calls `each` for every attribute member of an entity-shaped body (core members skipped). */
function forEachAttribute(
  body: Record<string, unknown>, ctx: ParseContext, each: (iri: Iri, raw: unknown, at: ParseContext) => void,
): void {
  for (const [key, raw] of Object.entries(body)) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    const at = child(ctx, key);
    if (key.startsWith('@')) fail(at, `JSON-LD keyword '${key}' is not supported here`);
    if (raw === null) fail(at, 'JSON null is not allowed');
    each(expandName(key, at), raw, at);
  }
}

/** Adds instances under an attribute, checking the multi-attribute rules across names that expand alike. */
function addInstances<T extends { datasetId?: string }>(
  into: Record<Iri, T[]>, iri: Iri, instances: T[], ctx: ParseContext,
): void {
  const all = [...(into[iri] ?? []), ...instances];
  checkInstances(all, ctx);
  into[iri] = all;
}

/** Interface §2.1, §2.6 rule 5: specificAccessPolicy is a Property whose value is `read` or `write`. */
const ACCESS_POLICIES: readonly unknown[] = ['read', 'write'];
function checkAccessPolicy(instances: Attribute[] | undefined, ctx: ParseContext): void {
  if (instances === undefined) return;
  const ok = instances.length === 1 && instances[0]!.kind === 'Property' && ACCESS_POLICIES.includes(instances[0]!.value);
  if (!ok) fail(ctx, 'specificAccessPolicy must be one Property whose value is read or write');
}

function onlyAttributes(inputs: AttributeInput[], ctx: ParseContext): Attribute[] {
  return inputs.map((a) => (isDeletion(a) ? fail(ctx, 'NGSI-LD Null is only allowed in updates') : a));
}

/**
 * An entity for create, replace or upsert (NGSI-LD §5.6.1, §5.6.18). `id` and `type` are required;
 * `opts.id` (the id from the path) fills a missing `id` and must match a given one. System members
 * (createdAt, modifiedAt, deletedAt) and `@context` are ignored; `expiresAt` makes it transient
 * (§4.22); NGSI-LD Null is refused.
 */
export function parseEntity(doc: unknown, mapper: TermMapper, opts: ParseOptions & { id?: EntityId }): Entity {
  const body = readObject(doc, 'An entity');
  const ctx = rootContext(mapper, opts.now, false);
  if (body.id === undefined && opts.id === undefined) fail(ctx, 'Entity id is missing');
  const id = body.id === undefined && opts.id !== undefined ? opts.id : readId(body.id, child(ctx, 'id'));
  assertSameEntityId(id, opts.id);
  if (body.type === undefined) fail(ctx, 'Entity type is missing');
  const types = readTypes(body.type, child(ctx, 'type'));
  const attrs: Record<Iri, Attribute[]> = {};
  forEachAttribute(body, ctx, (iri, raw, at) => {
    addInstances(attrs, iri, onlyAttributes(parseInstances(raw, at, (item, c) => parseAttributeInput(item, c, iri)), at), at);
  });
  checkAccessPolicy(attrs[SPECIFIC_ACCESS_POLICY], child(ctx, 'specificAccessPolicy'));
  const entity: Entity = { id, types, attrs, createdAt: opts.now, modifiedAt: opts.now };
  if (body.scope !== undefined) {
    const scope = readScope(body.scope, child(ctx, 'scope'));
    if (scope !== 'deleted' && scope.length > 0) entity.scope = scope;
  }
  if (body.expiresAt !== undefined) {
    const expiry = readExpiresAt(body.expiresAt, child(ctx, 'expiresAt'));
    if (expiry !== 'deleted') {
      entity.expiresAt = expiry.at;
      if (expiry.text !== undefined) entity.expiresAtText = expiry.text;
    }
  }
  return entity;
}

/**
 * The attributes of POST/PATCH /entities/{id}/attrs (NGSI-LD §5.6.2, §5.6.3): whole attributes, and
 * with `allowNull` deletions for NGSI-LD Null. Entity members (id, type, scope, @context) are ignored.
 */
export function parseAttributes(
  body: unknown, mapper: TermMapper, opts: ParseOptions & { allowNull: boolean },
): AttributeInputs {
  const obj = readObject(body, 'The attributes');
  const ctx = rootContext(mapper, opts.now, opts.allowNull);
  const out: AttributeInputs = {};
  forEachAttribute(obj, ctx, (iri, raw, at) => {
    addInstances(out, iri, parseInstances(raw, at, (item, c) => parseAttributeInput(item, c, iri)), at);
  });
  return out;
}

/**
 * The entity members of an attribute write body (POST/PATCH /entities/{id}/attrs, batch update):
 * types to add (NGSI-LD §4.16), the scope (§4.18) and expiresAt (§4.22); NGSI-LD Null removes
 * either when `allowNull`.
 */
export function parseEntityMembers(body: unknown, mapper: TermMapper, opts: ParseOptions & { allowNull: boolean }): EntityMembers {
  const obj = readObject(body, 'The attributes');
  const ctx = rootContext(mapper, opts.now, opts.allowNull);
  const out: EntityMembers = {};
  if (obj.type !== undefined) out.types = readTypes(obj.type, child(ctx, 'type'));
  if (obj.scope !== undefined) out.scope = readScope(obj.scope, child(ctx, 'scope'));
  if (obj.expiresAt !== undefined) out.expiresAt = readExpiresAt(obj.expiresAt, child(ctx, 'expiresAt'));
  return out;
}

/**
 * The body of a merge (PATCH /entities/{id}, NGSI-LD §5.6.17): optional id, types to add, scope,
 * and attribute fragments (only the given members change; NGSI-LD Null deletes).
 */
export function parseEntityFragment(body: unknown, mapper: TermMapper, opts: ParseOptions): EntityFragment {
  const obj = readObject(body, 'An entity fragment');
  const ctx = rootContext(mapper, opts.now, true);
  const out: EntityFragment = { attrs: {} };
  if (obj.id !== undefined) out.id = readId(obj.id, child(ctx, 'id'));
  Object.assign(out, parseEntityMembers(obj, mapper, { now: opts.now, allowNull: true }));
  forEachAttribute(obj, ctx, (iri, raw, at) => {
    addInstances(out.attrs, iri, parseInstances(raw, at, parseFragmentInput), at);
  });
  return out;
}

/**
 * The body of PATCH /entities/{id}/attrs/{attrName} (NGSI-LD §5.6.4): one attribute fragment.
 * `datasetId` selects the instance; NGSI-LD Null as payload deletes it, as a sub-attribute deletes that.
 */
export function parseAttributeFragment(
  body: unknown, mapper: TermMapper, opts: ParseOptions & { attr?: Iri },
): FragmentInput {
  const ctx = { ...rootContext(mapper, opts.now, true), path: opts.attr === undefined ? '' : mapper.compactIri(opts.attr) };
  if (Array.isArray(body) && body.every(isPlainObject)) fail(ctx, 'An attribute fragment must be a single instance');
  return parseFragmentInput(body, ctx);
}

/** The body of PUT /entities/{id}/attrs/{attrName} (NGSI-LD §5.6.19): one whole attribute instance. */
export function parseAttribute(body: unknown, attr: Iri, mapper: TermMapper, opts: ParseOptions): Attribute {
  const ctx = { ...rootContext(mapper, opts.now, false), path: mapper.compactIri(attr) };
  if (Array.isArray(body) && body.every(isPlainObject)) fail(ctx, 'An attribute must be a single instance here');
  const input = parseAttributeInput(body, ctx, attr);
  return isDeletion(input) ? fail(ctx, 'NGSI-LD Null is only allowed in updates') : input;
}

/** The `id` of a body, when given, must be the id of the path (NGSI-LD §5.6.17, §5.6.18). */
export function assertSameEntityId(bodyId: EntityId | undefined, pathId: EntityId | undefined): void {
  if (bodyId !== undefined && pathId !== undefined && bodyId !== pathId) {
    throw new BadRequestDataError('Entity id does not match the id in the path', `body: ${bodyId}, path: ${pathId}`);
  }
}
