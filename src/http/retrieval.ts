// Retrieval options shared by entity retrieve and query (NGSI-LD §6.3.7, §4.21 pick/omit,
// §4.15 lang, §4.5.17 GeoJSON, join): parsed once, expanded with the request context.

import { createHash } from 'node:crypto';
import {
  BadRequestDataError, ENTITY_CORE_MEMBERS, LOCATION, ResourceNotFoundError, followLinks, isLanguagePreference, nameProblem, parseProjection,
  renderEntity, renderFeatureCollection, renderGeoJson,
  type Entity, type Iri, type Json, type LinkedLoader, type ProjectionTree, type Reached, type RenderOptions, type TermMapper,
} from '../ngsi/index.js';
import { createGenerations } from '../lib/index.js';
import { bool, csv, int, oneOf, representation, type Params } from './params.js';
import { APP_GEO_JSON, APP_JSON, type ResponseMediaType } from './media.js';

export const RETRIEVAL_PARAMS = [
  'attrs', 'pick', 'omit', 'options', 'format', 'lang', 'geometryProperty', 'join', 'joinLevel', 'datasetId', 'local', 'details',
] as const;

export interface Retrieval {
  render: RenderOptions;
  join: 'inline' | 'flat' | undefined;
  joinLevel: number;
  datasetIds: Set<string> | undefined;
  geometryProperty: Iri;
  /** Attribute filter for listing (`attrs`): entities having at least one of them. */
  attrs: Iri[] | undefined;
}

/** An attribute name of `attrs`: not a core member of the entity (NGSI-LD §5.7.2: 400 BadRequestData). */
export function checkAttrName(name: string): string {
  if (ENTITY_CORE_MEMBERS.has(name) && name !== 'scope') throw new BadRequestDataError(`'${name}' is not an attribute name`, 'attrs lists attributes; id and type are always shown');
  const problem = nameProblem(name);
  if (problem !== undefined) throw new BadRequestDataError('Invalid attribute name in attrs', problem);
  return name;
}

export function parseRetrieval(params: Params, mapper: TermMapper): Retrieval {
  const rep = representation(params);
  const attrs = csv(params, 'attrs')?.map((a) => mapper.expandTerm(checkAttrName(a)));
  const projection = (name: 'pick' | 'omit'): ProjectionTree | undefined => {
    const text = params.get(name);
    return text === undefined ? undefined : parseProjection(text, (n) => mapper.expandTerm(n));
  };
  const pick = projection('pick');
  const omit = projection('omit');
  if (attrs && (pick || omit)) throw new BadRequestDataError('attrs cannot be combined with pick or omit');
  if (pick && omit) {
    const both = [...pick.keys()].filter((m) => omit.has(m));
    throw new BadRequestDataError('pick and omit cannot be combined', both.length > 0 ? `both name ${both.join(', ')}` : undefined);
  }
  const join = oneOf(params, 'join', ['inline', 'flat', '@none'] as const);
  const joinLevel = int(params, 'joinLevel', 1, 10) ?? 1;
  if (params.has('joinLevel') && (join === undefined || join === '@none')) {
    throw new BadRequestDataError('joinLevel needs join=inline or join=flat');
  }
  bool(params, 'local');
  const lang = params.get('lang');
  if (lang !== undefined && !isLanguagePreference(lang)) {
    throw new BadRequestDataError(`Invalid lang '${lang}'`, 'Language tags or *, comma-separated, each with an optional ;q= weight');
  }
  // Interface 4.1: details=true asks for extra information on consumption: the system attributes
  // (createdAt, modifiedAt) of the entity and of each attribute, as options=sysAttrs does.
  const details = bool(params, 'details') === true;
  const render: RenderOptions = { format: rep.format, sysAttrs: rep.sysAttrs || details };
  if (attrs) render.attrs = new Set(attrs);
  if (pick) render.pick = pick;
  if (omit) render.omit = omit;
  if (lang !== undefined) render.lang = lang;
  const datasetIds = csv(params, 'datasetId');
  const gp = params.get('geometryProperty');
  return {
    render,
    join: join === '@none' ? undefined : join,
    joinLevel,
    datasetIds: datasetIds ? new Set(datasetIds) : undefined,
    geometryProperty: gp === undefined ? LOCATION : mapper.expandTerm(gp),
    attrs,
  };
}

/** Keeps only the instances of the requested datasetIds (`@none` is the default instance). */
function selectDatasets(entity: Entity, datasetIds: Set<string> | undefined): Entity {
  if (!datasetIds) return entity;
  const attrs: Entity['attrs'] = {};
  for (const [attr, instances] of Object.entries(entity.attrs)) {
    const kept = instances.filter((i) => datasetIds.has(i.datasetId ?? '@none'));
    if (kept.length > 0) attrs[attr] = kept;
  }
  return { ...entity, attrs };
}


/**
 * The mapper with its compactions remembered for one response: a page compacts the same few type and
 * attribute IRIs once per entity, and the context's own memo pays for recency on every hit.
 */
function withCompactionMemo(mapper: TermMapper): TermMapper {
  const memo = new Map<Iri, string>();
  return {
    expandTerm: (term) => mapper.expandTerm(term),
    compactIri: (iri) => {
      let compacted = memo.get(iri);
      if (compacted === undefined) {
        compacted = mapper.compactIri(iri);
        memo.set(iri, compacted);
      }
      return compacted;
    },
  };
}

/** Renders entities for a response, following joins up to joinLevel. */
export function renderForResponse(
  entities: Entity[], r: Retrieval, contextMapper: TermMapper, mediaType: ResponseMediaType, load: LinkedLoader, single: boolean,
): Json {
  const mapper = single ? contextMapper : withCompactionMemo(contextMapper);
  const visible = entities.map((e) => selectDatasets(e, r.datasetIds));
  const opts: RenderOptions = { ...r.render };
  let flat: Reached[] = [];
  if (r.join !== undefined) {
    const { known, reached } = followLinks(visible, opts, r.joinLevel, load);
    flat = reached;
    if (r.join === 'inline') {
      opts.linked = (id) => known.get(id);
      opts.joinLevel = r.joinLevel;
    }
  }
  const geo = mediaType === APP_GEO_JSON;
  // join=flat with nothing linked answers a retrieval with the entity alone, as join=inline does.
  if (single && (r.join !== 'flat' || flat.length === 0)) {
    const entity = visible[0]!;
    const out = geo ? renderGeoJson(entity, mapper, { ...opts, geometryProperty: r.geometryProperty })
      : renderEntity(entity, mapper, opts);
    if (r.render.attrs && !Object.keys(entity.attrs).some((a) => r.render.attrs?.has(a))) {
      throw new ResourceNotFoundError('None of the requested attributes exists', entity.id);
    }
    // NGSI-LD §4.21: a projection that leaves no member of the entity finds nothing.
    if (!geo && Object.keys(out).length === 0) throw new ResourceNotFoundError('Nothing of the entity is left by pick and omit', entity.id);
    return out;
  }
  if (geo) return renderFeatureCollection([...visible, ...flat.map((f) => f.entity)], mapper, { ...opts, geometryProperty: r.geometryProperty });
  // NGSI-LD §4.21: an entity the projection leaves empty is not part of the answer.
  const projected = opts.pick !== undefined || opts.omit !== undefined;
  const rendered = visible.map((e) => renderEntity(e, mapper, opts)).filter((o) => !projected || Object.keys(o).length > 0);
  return r.join === 'flat' ? [...rendered, ...flat.map((f) => renderEntity(f.entity, mapper, f.opts))] : rendered;
}

/**
 * The JSON text of each entity rendered under a context and a representation, kept with the entity.
 * NOTE: the store hands back the same frozen Entity for an unchanged document (its decoding cache), so
 * the object stands for the document's version: a changed entity is a new object, the text of the old
 * one goes with it, and nothing can be served stale. A listing of unchanged entities then costs no
 * rendering and no serialization. One representation per entity is kept: the last one asked for.
 */
const renderedTexts = new WeakMap<Entity, { context: TermMapper; variant: string; text: string }>();

/** Listings whose encoded answer is kept: the last few answered (dashboards poll the same pages). */
const KEPT_PAGES = 8;
/** Largest answer kept, so the kept ones hold at most 1 MiB. */
const KEPT_PAGE_BYTES = 128 * 1024;

interface KeptPage {
  entities: readonly Entity[];
  context: TermMapper;
  variant: string;
  bytes: Uint8Array;
}

/**
 * The entity tags of kept answers served again (RFC 9110 §8.8.3): a strong tag of their bytes, made
 * the second time the same answer goes out, so an answer given once costs no hashing. A client that
 * asks again with If-None-Match (a broker forwarding a query to this one) gets a 304.
 */
const pageTags = new WeakMap<Uint8Array, string>();

function tagKept(bytes: Uint8Array): void {
  if (!pageTags.has(bytes)) pageTags.set(bytes, `"${createHash('sha1').update(bytes).digest('base64url')}"`);
}

/** The entity tag of a listing's bytes: known once the same answer was given twice. */
export const pageTag = (bytes: Uint8Array): string | undefined => pageTags.get(bytes);

/**
 * Recent answers by their first entity. NOTE: an answer is reused only for the very same entity
 * objects (each stands for one version of its document, see renderedTexts) under the same context and
 * representation: it is then byte for byte what encoding the page again would give. Keeping the bytes
 * also spares the UTF-8 encoding of the whole answer at every write to the socket.
 */
const keptPages = createGenerations<Entity, KeptPage>(KEPT_PAGES);

function samePage(kept: KeptPage, entities: readonly Entity[], context: TermMapper, variant: string): boolean {
  if (kept.context !== context || kept.variant !== variant || kept.entities.length !== entities.length) return false;
  for (let i = 0; i < entities.length; i++) if (kept.entities[i] !== entities[i]) return false;
  return true;
}

/**
 * A page of entities as the UTF-8 JSON of its array, each entity's text rendered once per version;
 * undefined when the retrieval is not a plain one (a projection, a language, datasets, a join or a
 * media type other than application/json), which the caller renders as usual.
 */
export function listingBytes(entities: readonly Entity[], r: Retrieval, context: TermMapper, mediaType: ResponseMediaType): Uint8Array | undefined {
  const o = r.render;
  if (mediaType !== APP_JSON || r.join !== undefined || r.datasetIds !== undefined || o.attrs !== undefined || o.pick !== undefined
    || o.omit !== undefined || o.lang !== undefined || o.linked !== undefined || o.attributeCreatedAt !== undefined) return undefined;
  const variant = `${o.format}${o.sysAttrs ? '+sys' : ''}`;
  const first = entities[0];
  const kept = first === undefined ? undefined : keptPages.get(first);
  if (kept !== undefined && samePage(kept, entities, context, variant)) {
    tagKept(kept.bytes);
    return kept.bytes;
  }
  let mapper: TermMapper | undefined;
  const parts = entities.map((e) => {
    const known = renderedTexts.get(e);
    if (known !== undefined && known.context === context && known.variant === variant) return known.text;
    mapper ??= withCompactionMemo(context);
    const text = JSON.stringify(renderEntity(e, mapper, o));
    renderedTexts.set(e, { context, variant, text });
    return text;
  });
  const bytes = Buffer.from(`[${parts.join(',')}]`);
  if (first !== undefined && bytes.byteLength <= KEPT_PAGE_BYTES) keptPages.set(first, { entities: [...entities], context, variant, bytes });
  return bytes;
}
