// showChanges (NGSI-LD §5.2.14): each attribute instance that existed before the change also shows
// what it held then, as previousValue, previousObject, previousLanguageMap, previousVocab,
// previousJson, previousValueList or previousObjectList.

import { isPlainObject, renderEntity, type Entity, type Json, type JsonObject, type RepresentationFormat, type TermMapper } from '../ngsi/index.js';

/** The payload member of each kind and the member that carries its previous content. */
const PREVIOUS: ReadonlyArray<[string, string]> = [
  ['value', 'previousValue'], ['object', 'previousObject'], ['languageMap', 'previousLanguageMap'], ['vocab', 'previousVocab'],
  ['json', 'previousJson'], ['valueList', 'previousValueList'], ['objectList', 'previousObjectList'],
];

const asList = (rendered: Json | undefined): Json[] => (rendered === undefined ? [] : Array.isArray(rendered) ? rendered : [rendered]);

/** A rendered instance as an object: a bare concise value becomes `{value}` so it can carry previousValue. */
const asObject = (rendered: Json): JsonObject => (isPlainObject(rendered) && !('coordinates' in rendered) ? rendered : { value: rendered });

/** The previous* members of a deleted attribute: what its first instance held (normalized). */
export function previousMembersOf(entity: Entity, attr: string, before: Entity['attrs'][string], mapper: TermMapper): JsonObject {
  const old = renderEntity({ id: entity.id, types: [], attrs: { [attr]: before }, createdAt: 0, modifiedAt: 0 }, mapper, { format: 'normalized', sysAttrs: false });
  const prior = asList(old[mapper.compactIri(attr)])[0];
  const out: JsonObject = {};
  if (!isPlainObject(prior)) return out;
  for (const [member, previousMember] of PREVIOUS) {
    const value = prior[member];
    if (value !== undefined) out[previousMember] = value;
  }
  return out;
}

/**
 * Adds the previous content to the rendered entity `out` (normalized or concise), in place: `out`
 * was rendered from `entity` just before, so its attribute instances follow the entity's order.
 */
export function addPreviousValues(out: JsonObject, entity: Entity, previous: Entity, mapper: TermMapper, format: RepresentationFormat): void {
  if (format === 'keyValues') return;
  for (const [attr, before] of Object.entries(previous.attrs)) {
    const instances = entity.attrs[attr];
    const name = mapper.compactIri(attr);
    const current = out[name];
    if (instances === undefined || current === undefined) continue;
    const old = renderEntity({ id: entity.id, types: [], attrs: { [attr]: before }, createdAt: 0, modifiedAt: 0 }, mapper, { format: 'normalized', sysAttrs: false });
    const oldByDataset = new Map(before.map((a, i) => [a.datasetId ?? '', asList(old[name])[i]]));
    const rendered = asList(current).map((r, i) => {
      const prior = oldByDataset.get(instances[i]?.datasetId ?? '');
      if (!isPlainObject(prior)) return r;
      const obj = { ...asObject(r) };
      for (const [member, previousMember] of PREVIOUS) {
        const value = prior[member];
        if (value !== undefined) obj[previousMember] = value;
      }
      return obj;
    });
    out[name] = Array.isArray(current) ? rendered : (rendered[0] ?? current);
  }
}
