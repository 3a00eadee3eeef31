// The GeoJSON representation of entities (NGSI-LD §4.5.17): a Feature per entity whose geometry is
// the value of the chosen GeoProperty, and a FeatureCollection for lists.

import type { Entity, Iri, Json } from './model.js';
import type { TermMapper } from './terms.js';
import type { JsonObject } from './json.js';
import { renderEntity, type RenderOptions } from './render.js';

export type GeoJsonOptions = RenderOptions & { geometryProperty: Iri };

/**
 * The geometry of the Feature: the GeoProperty's default instance, else its first instance; null
 * when the entity has no such GeoProperty. Taken from the entity itself, so a projection that hides
 * the attribute from `properties` still leaves the geometry in place.
 */
function featureGeometry(entity: Entity, geometryProperty: Iri): Json {
  const instances = (entity.attrs[geometryProperty] ?? []).filter((a) => a.kind === 'GeoProperty');
  const chosen = instances.find((a) => a.datasetId === undefined) ?? instances[0];
  return chosen?.kind === 'GeoProperty' ? chosen.value : null;
}

/** `{id, type: "Feature", geometry, properties: {type, ...attributes}}` in the chosen representation. */
export function renderGeoJson(entity: Entity, mapper: TermMapper, opts: GeoJsonOptions): JsonObject {
  const { geometryProperty, ...renderOpts } = opts;
  const { id: _id, ...properties } = renderEntity(entity, mapper, renderOpts);
  return { id: entity.id, type: 'Feature', geometry: featureGeometry(entity, geometryProperty), properties };
}

/** A FeatureCollection of the entities' Features. */
export function renderFeatureCollection(entities: readonly Entity[], mapper: TermMapper, opts: GeoJsonOptions): JsonObject {
  return { type: 'FeatureCollection', features: entities.map((e) => renderGeoJson(e, mapper, opts)) };
}
