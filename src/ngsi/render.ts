// Entities back to compact JSON (NGSI-LD §4.5): representation, system attributes, projection
// (pick/omit §4.21, the older attrs), language filter (§4.15) and join=inline, all pure.

import type { Entity, EntityId, Iri, Json } from './model.js';
import type { TermMapper } from './terms.js';
import { SCOPE } from './vocab.js';
import type { JsonObject } from './json.js';
import { formatDateTime } from './time.js';
import { parseLanguagePreference } from './lang.js';
import { renderAttribute, type AttributeRenderContext, type RepresentationFormat } from './render-attribute.js';

export type { RepresentationFormat };

export interface RenderOptions {
  format: RepresentationFormat;
  /** createdAt/modifiedAt on the entity, its attributes and sub-attributes. */
  sysAttrs: boolean;
  /** Older projection: only these attributes (id, type and scope always shown). */
  attrs?: Set<Iri>;
  /** Only these top-level members: `id`, `type`, scope (its IRI or `scope`) and attribute IRIs. */
  pick?: Set<'id' | 'type' | Iri>;
  /** These top-level members left out. */
  omit?: Set<'id' | 'type' | Iri>;
  /** Language filter (`lang` parameter). */
  lang?: string;
  /** join=inline: the entities relationships point to, when available. */
  linked?: (id: EntityId) => Entity | undefined;
}

type Member = 'id' | 'type' | Iri;

/** Whether a top-level member survives pick / omit / attrs; undefined when every member does. */
function memberFilter(opts: RenderOptions): ((member: Member, isAttribute: boolean) => boolean) | undefined {
  const { pick, omit, attrs } = opts;
  if (!pick && !omit && !attrs) return undefined;
  const named = (set: Set<Member>, m: Member): boolean => set.has(m) || (m === SCOPE && set.has('scope'));
  return (member, isAttribute) => {
    if (pick && !named(pick, member)) return false;
    if (omit && named(omit, member)) return false;
    return !(attrs && isAttribute && !attrs.has(member));
  };
}

function attributeContext(mapper: TermMapper, opts: RenderOptions): AttributeRenderContext {
  const { linked } = opts;
  const inline = linked === undefined ? undefined : (id: EntityId): JsonObject | undefined => {
    const target = linked(id);
    // NOTE: one level only; keyValues keeps its own format, the others inline the normalized form.
    const format: RepresentationFormat = opts.format === 'keyValues' ? 'keyValues' : 'normalized';
    return target && renderEntity(target, mapper, { ...withoutLinked(opts), format });
  };
  return {
    mapper, format: opts.format, sysAttrs: opts.sysAttrs, inline,
    lang: opts.lang === undefined ? undefined : parseLanguagePreference(opts.lang),
  };
}

function withoutLinked(opts: RenderOptions): RenderOptions {
  const { linked: _linked, ...rest } = opts;
  return rest;
}

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
  }
  const ctx = attributeContext(mapper, opts);
  // NOTE: Object.keys visits members in the same order as Object.entries, without a pair per member.
  for (const attr of Object.keys(entity.attrs)) {
    const instances = entity.attrs[attr];
    if (instances !== undefined && instances.length > 0 && show(attr, true)) out[mapper.compactIri(attr)] = renderAttribute(attr, instances, ctx);
  }
  return out;
}
