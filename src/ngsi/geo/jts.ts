// The one door to JSTS (the JavaScript port of JTS): GeoJSON shapes become JTS geometries, related
// with the OGC Simple Features predicates (DE-9IM) in the planar lon/lat space RFC 7946 §3.1.1 uses.

import type Geometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
import GeometryFactory from 'jsts/org/locationtech/jts/geom/GeometryFactory.js';
import GeoJSONReader from 'jsts/org/locationtech/jts/io/GeoJSONReader.js';
import RelateOp from 'jsts/org/locationtech/jts/operation/relate/RelateOp.js';
import IsValidOp from 'jsts/org/locationtech/jts/operation/valid/IsValidOp.js';
import type { Shape } from './shapes.js';

/** The OGC predicates of NGSI-LD §4.10, read as "entity geometry <relation> query geometry". */
export type TopologicalRelation = 'within' | 'contains' | 'intersects' | 'disjoint' | 'equals' | 'overlaps';

/** A shape turned into a JTS geometry once, to relate it many times. */
export interface JtsShape {
  readonly geometry: Geometry;
}

// NOTE: the reader keeps no state between reads, so one instance serves every caller.
const reader = new GeoJSONReader(new GeometryFactory());

/** The JTS geometry of a shape; undefined when JTS cannot build it. */
export function toJts(shape: Shape): JtsShape | undefined {
  try {
    const geometry: Geometry = reader.read(shape);
    return { geometry };
  } catch {
    return undefined;
  }
}

/** Whether the subject (entity) geometry stands in `relation` to the object (query) geometry. */
export function relate(relation: TopologicalRelation, subject: JtsShape, object: JtsShape): boolean {
  const a = subject.geometry;
  const b = object.geometry;
  try {
    switch (relation) {
      // JTS: a within b ⇔ b contains a.
      case 'within': return RelateOp.contains(b, a) === true;
      case 'contains': return RelateOp.contains(a, b) === true;
      case 'intersects': return RelateOp.intersects(a, b) === true;
      case 'disjoint': return RelateOp.intersects(a, b) !== true;
      case 'equals': return RelateOp.equalsTopo(a, b) === true;
      case 'overlaps': return RelateOp.overlaps(a, b) === true;
    }
  } catch {
    // NOTE: JTS gives up on some invalid stored geometries (e.g. self-intersecting rings); such a
    // geometry matches no relation rather than failing the whole query.
    return false;
  }
}

/**
 * Why a geometry is not topologically valid in the OGC sense (self-intersecting ring, hole outside
 * its shell, too few distinct points, ...), or undefined when it is valid.
 */
export function topologyProblem(shape: JtsShape): string | undefined {
  const op = new IsValidOp(shape.geometry);
  if (op.isValid()) return undefined;
  const error = op.getValidationError();
  const message: unknown = error.getMessage();
  const at: unknown = error.getCoordinate();
  const where = isCoordinate(at) ? ` near [${at.x}, ${at.y}]` : '';
  return `${typeof message === 'string' ? message : 'invalid geometry'}${where}`;
}

function isCoordinate(v: unknown): v is { x: number; y: number } {
  return typeof v === 'object' && v !== null
    && typeof Reflect.get(v, 'x') === 'number' && typeof Reflect.get(v, 'y') === 'number';
}
