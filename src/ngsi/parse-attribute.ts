// Parsing one attribute instance from untrusted compact JSON into a fragment (members as given) and,
// for whole attributes, into the model. Errors are BadRequestData naming where they were found.

import type { AttributeKind, Iri } from './model.js';
import { ATTRIBUTE_KINDS, NGSI_LD, NGSI_LD_NULL } from './vocab.js';
import type { TermMapper } from './terms.js';
import { BadRequestDataError } from './errors.js';
import { expandValueKeys, findNull, isPlainObject, toJson } from './json.js';
import { GEOMETRY_TYPES, checkGeometry, looksLikeGeometry } from './geometry.js';
import { formatDateTime, parseDateTime } from './time.js';
import { isAbsoluteUri, isLanguageKey, nameProblem } from './names.js';
import {
  PAYLOAD_MEMBERS, PAYLOAD_OF, isDeletion, type AttributeFragment, type AttributeInput, type FragmentInput,
  type FragmentValue, type PayloadMember,
} from './fragment.js';
import { buildAttribute } from './build-attribute.js';

export interface ParseContext {
  mapper: TermMapper;
  now: number;
  /** NGSI-LD Null allowed (update, merge): it then means "delete". */
  allowNull: boolean;
  /** Where we are, in the compact names of the input (`temperature.value[2]`). */
  path: string;
}

export function fail(ctx: ParseContext, message: string): never {
  throw new BadRequestDataError(ctx.path === '' ? message : `${message} (at ${ctx.path})`);
}

export function child(ctx: ParseContext, key: string | number): ParseContext {
  if (typeof key === 'number') return { ...ctx, path: `${ctx.path}[${key}]` };
  return { ...ctx, path: ctx.path === '' ? key : `${ctx.path}.${key}` };
}

/** Checks a compact name and expands it through the context. */
export function expandName(name: string, ctx: ParseContext): Iri {
  const problem = nameProblem(name);
  if (problem !== undefined) fail(ctx, `Invalid name: ${problem}`);
  return ctx.mapper.expandTerm(name);
}

/** Members of an attribute that are output only or system-managed: ignored on input. */
const IGNORED_MEMBERS: ReadonlySet<string> = new Set([
  'createdAt', 'modifiedAt', 'deletedAt', 'instanceId', 'entity', 'entityList', 'lang', '@context',
]);

/** The NGSI-LD Null of each payload member (NGSI-LD §4.5: null representations per attribute kind). */
function isNullPayload(member: PayloadMember, v: unknown): boolean {
  if (v === NGSI_LD_NULL) return true;
  if (member === 'languageMap') return isPlainObject(v) && Object.keys(v).length === 1 && v['@none'] === NGSI_LD_NULL;
  if (member === 'valueList' || member === 'objectList') {
    return Array.isArray(v) && v.length === 1
      && (v[0] === NGSI_LD_NULL || (isPlainObject(v[0]) && v[0].object === NGSI_LD_NULL));
  }
  return false;
}

function readValue(raw: unknown, ctx: ParseContext, bare: boolean): FragmentValue {
  const nullAt = findNull(raw);
  if (nullAt !== undefined) fail({ ...ctx, path: ctx.path + nullAt }, 'JSON null is not allowed');
  const json = toJson(raw);
  if (json === undefined) fail(ctx, 'not a JSON value');
  return {
    property: expandValueKeys(json, ctx.mapper), geometry: checkGeometry(json), looksGeo: looksLikeGeometry(json), bare,
  };
}

function readUri(v: unknown, ctx: ParseContext, what: string): string {
  if (typeof v !== 'string' || !isAbsoluteUri(v)) fail(ctx, `${what} must be an absolute URI`);
  return v;
}

function readStringOrList(v: unknown, ctx: ParseContext, what: string): string | string[] {
  if (typeof v === 'string' && v !== '') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s !== '')) return v.map(String);
  fail(ctx, `${what} must be a non-empty string or a non-empty array of strings`);
}

function readLanguageMap(v: unknown, ctx: ParseContext): Record<string, string | string[]> {
  if (!isPlainObject(v) || Object.keys(v).length === 0) fail(ctx, 'languageMap must be a non-empty object');
  const out: Record<string, string | string[]> = {};
  for (const [tag, text] of Object.entries(v)) {
    if (!isLanguageKey(tag)) fail(child(ctx, tag), `'${tag}' is not a language tag`);
    out[tag] = readStringOrList(text, child(ctx, tag), 'a languageMap entry');
  }
  return out;
}

function readObjectList(v: unknown, ctx: ParseContext): string[] {
  if (!Array.isArray(v)) fail(ctx, 'objectList must be an array');
  return v.map((item, i) => readUri(isPlainObject(item) ? item.object : item, child(ctx, i), 'an objectList entry'));
}

function readPayload(f: AttributeFragment, member: PayloadMember, v: unknown, ctx: ParseContext): void {
  switch (member) {
    case 'value': f.value = readValue(v, ctx, false); return;
    case 'object':
      f.object = Array.isArray(v) && v.length > 0
        ? v.map((o, i) => readUri(o, child(ctx, i), 'object')) : readUri(v, ctx, 'object');
      return;
    case 'languageMap': f.languageMap = readLanguageMap(v, ctx); return;
    case 'vocab': {
      const vocab = readStringOrList(v, ctx, 'vocab');
      f.vocab = Array.isArray(vocab) ? vocab.map((t) => ctx.mapper.expandTerm(t)) : ctx.mapper.expandTerm(vocab);
      return;
    }
    case 'json': {
      // NOTE: a JsonProperty carries opaque JSON (JSON-LD @json), so nulls inside it are kept.
      const json = toJson(v);
      if (json === undefined) fail(ctx, 'json must be JSON');
      f.json = json;
      return;
    }
    case 'valueList': {
      if (!Array.isArray(v)) fail(ctx, 'valueList must be an array');
      f.valueList = v.map((item, i) => readValue(item, child(ctx, i), false).property);
      return;
    }
    case 'objectList': f.objectList = readObjectList(v, ctx); return;
  }
}

/** The `type` member: an attribute kind, or a geometry type (a bare geometry, concise GeoProperty). */
function readType(raw: Record<string, unknown>, ctx: ParseContext): AttributeKind | 'geometry' | undefined {
  const t = raw.type;
  if (t === undefined) return undefined;
  if (typeof t !== 'string') fail(child(ctx, 'type'), 'attribute type must be a string');
  const name = t.startsWith(NGSI_LD) ? t.slice(NGSI_LD.length) : t;
  const kind = ATTRIBUTE_KINDS.find((k) => k === name);
  if (kind !== undefined) return kind;
  if (GEOMETRY_TYPES.has(t)) return 'geometry';
  fail(child(ctx, 'type'), `unknown attribute type '${t}'`);
}

function readMember(f: AttributeFragment, key: string, v: unknown, ctx: ParseContext): void {
  switch (key) {
    case 'datasetId': f.datasetId = readUri(v, ctx, 'datasetId'); return;
    case 'observedAt': {
      const at = typeof v === 'string' ? parseDateTime(v) : undefined;
      if (at === undefined) fail(ctx, 'observedAt must be an ISO 8601 date-time with a time zone');
      f.observedAt = at;
      if (typeof v === 'string' && v !== formatDateTime(at)) f.observedAtText = v;
      return;
    }
    case 'unitCode':
      if (typeof v !== 'string' || v === '') fail(ctx, 'unitCode must be a non-empty string');
      f.unitCode = v;
      return;
    case 'objectType':
      if (typeof v !== 'string') fail(ctx, 'objectType must be a string');
      f.objectType = expandName(v, ctx);
      return;
    default: {
      if (key.startsWith('@')) fail(ctx, `JSON-LD keyword '${key}' is not allowed in an attribute`);
      // NGSI-LD §4.22: an attribute's expiresAt is a DateTime (§4.6.3). NOTE: kept as a sub-property;
      // transient attributes are not removed when it comes (transient entities are).
      if (key === 'expiresAt' && (typeof v !== 'string' || parseDateTime(v) === undefined)) {
        fail(ctx, 'expiresAt must be an ISO 8601 DateTime with a time zone');
      }
      const iri = expandName(key, ctx);
      f.sub[iri] = parseAttributeInput(v, ctx, iri);
    }
  }
}

function checkPayloadKind(f: AttributeFragment, members: PayloadMember[], ctx: ParseContext): void {
  if (members.length > 1) fail(ctx, `conflicting members ${members.join(', ')}`);
  const member = members[0];
  if (f.kind !== undefined && member !== undefined && member !== PAYLOAD_OF[f.kind]) {
    fail(ctx, `a ${f.kind} carries '${PAYLOAD_OF[f.kind]}', not '${member}'`);
  }
  const kind = f.kind ?? (member === 'object' ? 'Relationship' : member === 'objectList' ? 'ListRelationship' : undefined);
  const relationship = kind === 'Relationship' || kind === 'ListRelationship';
  if (f.objectType !== undefined && !relationship && (kind !== undefined || member !== undefined)) {
    fail(ctx, 'objectType is only allowed on a Relationship or ListRelationship');
  }
}

/**
 * One attribute instance as given: a fragment, or a deletion when its payload is NGSI-LD Null. A bare
 * non-object (or an array) is a `value`; a bare GeoJSON geometry is the `value` of a GeoProperty.
 */
export function parseFragmentInput(raw: unknown, ctx: ParseContext): FragmentInput {
  if (raw === null) fail(ctx, 'JSON null is not allowed');
  if (raw === NGSI_LD_NULL) {
    if (!ctx.allowNull) fail(ctx, 'NGSI-LD Null is only allowed in updates');
    return { deleted: true };
  }
  if (!isPlainObject(raw)) return { value: readValue(raw, ctx, true), sub: {} };
  const kind = readType(raw, ctx);
  if (kind === 'geometry') return { kind: 'GeoProperty', value: readValue(raw, ctx, true), sub: {} };
  const f: AttributeFragment = { sub: {} };
  if (kind !== undefined) f.kind = kind;
  const members: PayloadMember[] = [];
  let isNull = false;
  for (const [key, v] of Object.entries(raw)) {
    const here = child(ctx, key);
    if (v === null) fail(here, 'JSON null is not allowed');
    if (key === 'type' || IGNORED_MEMBERS.has(key)) continue;
    const member = PAYLOAD_MEMBERS.find((m) => m === key);
    if (member === undefined) readMember(f, key, v, here);
    else {
      members.push(member);
      if (isNullPayload(member, v)) isNull = true;
      else readPayload(f, member, v, here);
    }
  }
  checkPayloadKind(f, members, ctx);
  if (!isNull) return f;
  if (!ctx.allowNull) fail(ctx, 'NGSI-LD Null is only allowed in updates');
  return f.datasetId === undefined ? { deleted: true } : { deleted: true, datasetId: f.datasetId };
}

/** A whole attribute instance (or, in updates, a deletion). */
export function parseAttributeInput(raw: unknown, ctx: ParseContext, attr: Iri): AttributeInput {
  const input = parseFragmentInput(raw, ctx);
  if (isDeletion(input)) return input;
  const built = buildAttribute(input, attr, ctx.now);
  if (typeof built === 'string') fail(ctx, built);
  return built;
}

/** An array of attribute objects is a multi-attribute; any other array is a concise Property value. */
const isInstanceList = (raw: unknown): raw is unknown[] =>
  Array.isArray(raw) && raw.length > 0 && raw.every(isPlainObject);

/** NGSI-LD §4.5.5: at most one instance without datasetId, and no datasetId twice. */
export function checkInstances(instances: ReadonlyArray<{ datasetId?: string }>, ctx: ParseContext): void {
  const seen = new Set<string | undefined>();
  for (const i of instances) {
    if (seen.has(i.datasetId)) {
      fail(ctx, i.datasetId === undefined
        ? 'more than one instance without datasetId' : `datasetId '${i.datasetId}' appears more than once`);
    }
    seen.add(i.datasetId);
  }
}

/** All instances given for one attribute. */
export function parseInstances<T extends { datasetId?: string }>(
  raw: unknown, ctx: ParseContext, parseOne: (item: unknown, ctx: ParseContext) => T,
): T[] {
  const out = isInstanceList(raw) ? raw.map((item, i) => parseOne(item, child(ctx, i))) : [parseOne(raw, ctx)];
  checkInstances(out, ctx);
  return out;
}
