// Bodies of temporal writes (NGSI-LD §5.6.11, §5.6.12): attributes as arrays of instances, each with
// observedAt, every instance parsed on its own by ngsi (several may share a datasetId here).

import {
  BadRequestDataError, ENTITY_CORE_MEMBERS, type Attribute, isOutputForm, isPlainObject, parseAttributes, parseDateTime, parseEntity, type EntityId, type Iri,
  type ObservedInstance, type TermMapper,
} from '../ngsi/index.js';

/** One historical instance of an attribute. */
/** A temporal instance always carries observedAt. */
export type TemporalInstanceInput = ObservedInstance;

export interface TemporalEntityInput {
  id: EntityId;
  types: Iri[];
  scope?: string[];
  instances: TemporalInstanceInput[];
}

/** An attribute value given as instances: an array of objects, or one object. */
const instancesOf = (raw: unknown): unknown[] =>
  (Array.isArray(raw) && raw.length > 0 && raw.every(isPlainObject) ? raw : [raw]);

/**
 * The sub-attributes of every plain instance: none, in one frozen object. NOTE: an empty object per
 * instance was about a third of what parsing one allocated; attributes are never changed in place
 * (a change makes a new one), and a frozen object would throw if one were.
 */
const NO_SUB: Attribute['sub'] = Object.freeze({});

/**
 * The instance `{type: "Property", value, observedAt}` of a plain value (a finite number, a string, a
 * boolean) and nothing else, built directly: what the generic parser makes of it (a test holds the
 * two equal). Undefined for anything else: the generic parser takes it, and its errors.
 * NOTE: a temporal ingest is thousands of such instances; the generic parser costs several objects
 * and a member walk each.
 */
function plainInstance(attr: Iri, item: unknown, now: number): TemporalInstanceInput | undefined {
  if (!isPlainObject(item)) return undefined;
  let members = 0;
  for (const _ in item) members += 1;
  if (members !== 3 || item['type'] !== 'Property') return undefined;
  const value = item['value'];
  if (typeof value !== 'string' && typeof value !== 'boolean' && !(typeof value === 'number' && Number.isFinite(value))) return undefined;
  const text = item['observedAt'];
  if (typeof text !== 'string') return undefined;
  const observedAt = parseDateTime(text);
  if (observedAt === undefined) return undefined;
  const attribute: TemporalInstanceInput['attribute'] = { createdAt: now, modifiedAt: now, sub: NO_SUB, observedAt, kind: 'Property', value: value as string | number | boolean };
  if (!isOutputForm(text)) attribute.observedAtText = text;
  return { attr, attribute };
}

/** Every instance of every attribute member of `body` (entity members skipped). */
function parseInstances(body: Record<string, unknown>, mapper: TermMapper, now: number): TemporalInstanceInput[] {
  const out: TemporalInstanceInput[] = [];
  for (const [key, raw] of Object.entries(body)) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    // The name is checked and expanded by the generic parser on the first instance; those after it
    // that are plain values take the short way under the same name.
    let attr: Iri | undefined;
    instancesOf(raw).forEach((item, i) => {
      if (attr !== undefined) {
        const plain = plainInstance(attr, item, now);
        if (plain !== undefined) {
          out.push(plain);
          return;
        }
      }
      const parsed = parseAttributes({ [key]: item }, mapper, { now, allowNull: false });
      for (const [name, list] of Object.entries(parsed)) {
        attr = name;
        // NOTE: a plain first instance is built the short way too, once its name is known: instances
        // of one shape keep the code that encodes them monomorphic (a second shape among thousands
        // made each of their time members a new heap number on every read).
        const plain = list.length === 1 ? plainInstance(name, item, now) : undefined;
        if (plain !== undefined) {
          out.push(plain);
          continue;
        }
        for (const a of list) {
          if ('deleted' in a) throw new BadRequestDataError(`NGSI-LD Null is not a temporal instance (at ${key}[${i}])`);
          if (a.observedAt === undefined) {
            throw new BadRequestDataError(`Every temporal instance needs observedAt (at ${key}[${i}])`);
          }
          out.push({ attr: name, attribute: { ...a, observedAt: a.observedAt } });
        }
      }
    });
  }
  return out;
}

/** The body of POST /temporal/entities: id, type, optional scope, attributes as instance arrays. */
export function parseTemporalEntity(body: unknown, mapper: TermMapper, now: number): TemporalEntityInput {
  if (!isPlainObject(body)) throw new BadRequestDataError('A temporal entity must be a JSON object');
  const head: Record<string, unknown> = {};
  for (const key of ['id', 'type', 'scope']) if (body[key] !== undefined) head[key] = body[key];
  const entity = parseEntity(head, mapper, { now });
  const out: TemporalEntityInput = { id: entity.id, types: entity.types, instances: parseInstances(body, mapper, now) };
  if (entity.scope !== undefined) out.scope = entity.scope;
  return out;
}

/** The body of POST /temporal/entities/{id}/attrs: attributes as instance arrays (id and type ignored). */
export function parseTemporalAttributes(body: unknown, mapper: TermMapper, now: number): TemporalInstanceInput[] {
  if (!isPlainObject(body)) throw new BadRequestDataError('The attributes must be a JSON object');
  const instances = parseInstances(body, mapper, now);
  if (instances.length === 0) throw new BadRequestDataError('No attribute instance given');
  return instances;
}
