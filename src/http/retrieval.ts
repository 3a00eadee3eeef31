// Retrieval options shared by entity retrieve and query (NGSI-LD §6.3.7, §4.21 pick/omit,
// §4.15 lang, §4.5.17 GeoJSON, join): parsed once, expanded with the request context.

import {
  BadRequestDataError, LOCATION, ResourceNotFoundError, renderEntity, renderFeatureCollection, renderGeoJson,
  type Entity, type EntityId, type Iri, type Json, type RenderOptions, type TermMapper,
} from '../ngsi/index.js';
import { bool, csv, int, oneOf, representation, type Params } from './params.js';
import { APP_GEO_JSON, type ResponseMediaType } from './media.js';

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

const MEMBER = (mapper: TermMapper) => (name: string): 'id' | 'type' | Iri =>
  name === 'id' || name === 'type' ? name : mapper.expandTerm(name);

export function parseRetrieval(params: Params, mapper: TermMapper): Retrieval {
  const rep = representation(params);
  const attrs = csv(params, 'attrs')?.map((a) => mapper.expandTerm(a));
  const pick = csv(params, 'pick')?.map(MEMBER(mapper));
  const omit = csv(params, 'omit')?.map(MEMBER(mapper));
  if (attrs && (pick || omit)) throw new BadRequestDataError('attrs cannot be combined with pick or omit');
  if (pick && omit) throw new BadRequestDataError('pick and omit cannot be combined');
  const join = oneOf(params, 'join', ['inline', 'flat', '@none'] as const);
  const joinLevel = int(params, 'joinLevel', 1, 10) ?? 1;
  if (params.has('joinLevel') && (join === undefined || join === '@none')) {
    throw new BadRequestDataError('joinLevel needs join=inline or join=flat');
  }
  bool(params, 'local');
  const lang = params.get('lang');
  if (lang !== undefined && !/^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*|@none)(,(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*|@none))*$/.test(lang)) {
    throw new BadRequestDataError(`Invalid lang '${lang}'`);
  }
  // Interface 4.1: details=true asks for extra information on consumption: the system attributes
  // (createdAt, modifiedAt) of the entity and of each attribute, as options=sysAttrs does.
  const details = bool(params, 'details') === true;
  const render: RenderOptions = { format: rep.format, sysAttrs: rep.sysAttrs || details };
  if (attrs) render.attrs = new Set(attrs);
  if (pick) render.pick = new Set(pick);
  if (omit) render.omit = new Set(omit);
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

/** Ids of the entities an entity's relationships point to. */
export function linkedIds(entity: Entity): EntityId[] {
  const ids = new Set<EntityId>();
  for (const instances of Object.values(entity.attrs)) {
    for (const a of instances) {
      if (a.kind === 'Relationship') for (const o of Array.isArray(a.object) ? a.object : [a.object]) ids.add(o);
      if (a.kind === 'ListRelationship') for (const o of a.objectList) ids.add(o);
    }
  }
  return [...ids];
}

export type LinkedLoader = (ids: EntityId[]) => Map<EntityId, Entity>;

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
  let flat: Entity[] = [];
  if (r.join !== undefined) {
    const known = new Map<EntityId, Entity>(visible.map((e) => [e.id, e]));
    let frontier = visible;
    for (let level = 0; level < r.joinLevel && frontier.length > 0; level++) {
      const wanted = frontier.flatMap(linkedIds).filter((id) => !known.has(id));
      const found = wanted.length > 0 ? load([...new Set(wanted)]) : new Map<EntityId, Entity>();
      for (const [id, e] of found) known.set(id, e);
      frontier = [...found.values()];
      flat = flat.concat(frontier);
    }
    if (r.join === 'inline') opts.linked = (id) => known.get(id);
  }
  const geo = mediaType === APP_GEO_JSON;
  if (single && r.join !== 'flat') {
    const entity = visible[0]!;
    const out = geo ? renderGeoJson(entity, mapper, { ...opts, geometryProperty: r.geometryProperty })
      : renderEntity(entity, mapper, opts);
    if (r.render.attrs && !Object.keys(entity.attrs).some((a) => r.render.attrs?.has(a))) {
      throw new ResourceNotFoundError('None of the requested attributes exists', entity.id);
    }
    return out;
  }
  const all = r.join === 'flat' ? [...visible, ...flat] : visible;
  if (geo) return renderFeatureCollection(all, mapper, { ...opts, geometryProperty: r.geometryProperty });
  return all.map((e) => renderEntity(e, mapper, opts));
}
