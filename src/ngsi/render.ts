// Entities back to compact JSON (NGSI-LD §4.5): representation, system attributes, projection
// (pick/omit §4.21, the older attrs), language filter (§4.15) and join=inline, all pure.

import type { Entity, EntityId, Iri, Json } from './model.js';
import type { TermMapper } from './terms.js';
import { SCOPE } from './vocab.js';
import type { JsonObject } from './json.js';
import { formatDateTime } from './time.js';
import { parseLanguagePreference } from './lang.js';
import { renderAttribute, type AttributeRenderContext, type RepresentationFormat } from './render-attribute.js';
import { isProjected, projectionBelow, type Member, type ProjectionTree } from './projection.js';

export type { RepresentationFormat };

export interface RenderOptions {
  format: RepresentationFormat;
  /** createdAt/modifiedAt on the entity, its attributes and sub-attributes (and the entity's expiresAt). */
  sysAttrs: boolean;
  /** createdAt alone on attributes and sub-attributes, without sysAttrs (notifications, normalized form). */
  attributeCreatedAt?: boolean;
  /** Older projection: only these attributes (id, type and scope always shown). */
  attrs?: Set<Iri>;
  /**
   * Only these members (§4.21): `id`, `type`, scope (its IRI or `scope`) and attribute IRIs; a
   * relationship's subtree projects the entity it links to.
   */
  pick?: ProjectionTree;
  /** These members left out; a member with a subtree stays, and the subtree applies to its linked entity. */
  omit?: ProjectionTree;
  /** Language filter (`lang` parameter). */
  lang?: string;
  /** join=inline: the entities relationships point to, when available. */
  linked?: (id: EntityId) => Entity | undefined;
  /** How many levels of linked entities to inline (joinLevel, default 1). */
  joinLevel?: number;
}

/** Whether a top-level member survives pick / omit / attrs; undefined when every member does. */
function memberFilter(opts: RenderOptions): ((member: Member, isAttribute: boolean) => boolean) | undefined {
  const { pick, omit, attrs } = opts;
  if (!pick && !omit && !attrs) return undefined;
  return (member, isAttribute) => {
    const name = member === SCOPE && (pick?.has('scope') === true || omit?.has('scope') === true) ? 'scope' : member;
    if (!isProjected(name, pick, omit)) return false;
    return !(attrs && isAttribute && !attrs.has(member));
  };
}

/**
 * NGSI-LD §4.5.23: the linked entity, projected by the subtree of the relationship that links it.
 * `attrs` selects the attributes of the entity asked for, not of the entities it links to: those
 * show in full unless a pick / omit subtree narrows them.
 */
export function linkedOptions(opts: RenderOptions, via: Iri): RenderOptions {
  const { pick: _pick, omit: _omit, attrs: _attrs, ...rest } = opts;
  const out: RenderOptions = { ...rest, joinLevel: (opts.joinLevel ?? 1) - 1 };
  const pick = projectionBelow(opts.pick, via);
  const omit = projectionBelow(opts.omit, via);
  if (pick) out.pick = pick;
  if (omit) out.omit = omit;
  return out;
}

function attributeContext(mapper: TermMapper, opts: RenderOptions, via: Iri | undefined): AttributeRenderContext {
  const { linked } = opts;
  const inline = linked === undefined || via === undefined || (opts.joinLevel ?? 1) < 1 ? undefined
    : (id: EntityId): JsonObject | undefined => {
      const target = linked(id);
      // NOTE: keyValues keeps its own format, the others inline the normalized form.
      const format: RepresentationFormat = opts.format === 'keyValues' ? 'keyValues' : 'normalized';
      return target && renderEntity(target, mapper, { ...linkedOptions(opts, via), format });
    };
  return {
    mapper, format: opts.format, sysAttrs: opts.sysAttrs, createdAt: opts.attributeCreatedAt === true, inline,
    lang: opts.lang === undefined ? undefined : parseLanguagePreference(opts.lang),
  };
}

const isRelationship = (instances: Entity['attrs'][string]): boolean =>
  instances?.some((a) => a.kind === 'Relationship' || a.kind === 'ListRelationship') === true;

const oneOrMany = (items: string[]): Json => (items.length === 1 && items[0] !== undefined ? items[0] : items);

/**
 * An entity in compact JSON: `id`, `type` (a name, or an array when several), `scope`, system
 * timestamps when asked, then the attributes in the chosen representation. No `@context`: that is
 * the edge's business.
 */
export function renderEntity(entity: Entity, mapper: TermMapper, opts: RenderOptions): JsonObject {
  const filter = memberFilter(opts);
  const show = (member: Member, isAttribute: boolean): boolean => filter === undefined || filter(member, isAttribute);
  const out: JsonObject = {};
  if (show('id', false)) out.id = entity.id;
  if (show('type', false)) out.type = oneOrMany(entity.types.map((t) => mapper.compactIri(t)));
  if (entity.scope !== undefined && entity.scope.length > 0 && show(SCOPE, false)) out.scope = oneOrMany(entity.scope);
  if (opts.sysAttrs) {
    out.createdAt = formatDateTime(entity.createdAt);
    out.modifiedAt = formatDateTime(entity.modifiedAt);
    if (entity.deletedAt !== undefined) out.deletedAt = formatDateTime(entity.deletedAt);
    // NGSI-LD §4.22: shown with the system members (options=sysAttrs), as createdAt is.
    if (entity.expiresAt !== undefined) out.expiresAt = entity.expiresAtText ?? formatDateTime(entity.expiresAt);
  }
  const ctx = attributeContext(mapper, opts, undefined);
  // NOTE: Object.keys visits members in the same order as Object.entries, without a pair per member.
  for (const attr of Object.keys(entity.attrs)) {
    const instances = entity.attrs[attr];
    if (instances === undefined || instances.length === 0 || !show(attr, true)) continue;
    // A relationship inlines its target with the projection below it (join=inline).
    const attrCtx = opts.linked !== undefined && isRelationship(instances) ? attributeContext(mapper, opts, attr) : ctx;
    out[mapper.compactIri(attr)] = renderAttribute(attr, instances, attrCtx);
  }
  return out;
}
