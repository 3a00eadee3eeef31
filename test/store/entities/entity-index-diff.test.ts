// Secondary indexes updated from the previous state in memory end up exactly as when they are
// rebuilt from scratch: the diff path and the read-back path agree.

import { afterEach, describe, expect, it } from 'vitest';
import type { Entity } from '../../../src/ngsi/index.js';
import { NS, T0, entity, fileStore, property, rawRead, tempDir } from '../helpers.js';

const geo = (lon: number): Entity['attrs'][string][number] =>
  ({ kind: 'GeoProperty', value: { type: 'Point', coordinates: [lon, 45] }, createdAt: T0, modifiedAt: T0, sub: {} });
const rel = (object: string): Entity['attrs'][string][number] =>
  ({ kind: 'Relationship', object, createdAt: T0, modifiedAt: T0, sub: {} });

/** The index rows of one entity, without its rowid. */
function indexRows(file: string, id: string): unknown {
  return rawRead(file, (db) => {
    const rowid = db.prepare<[string], number>('SELECT rowid FROM entities WHERE id = ? AND deleted_at IS NULL').pluck().get(id);
    return {
      values: db.prepare('SELECT attr, inst, seq, typ, num, str FROM attr_values WHERE entity = ? ORDER BY attr, inst, seq').all(rowid),
      kinds: db.prepare('SELECT attr, kind, instances FROM entity_attr_kinds WHERE entity = ? ORDER BY attr, kind').all(rowid),
      shapes: db.prepare('SELECT attr, min_lon, max_lon, min_lat, max_lat FROM geo_shapes WHERE entity = ? ORDER BY attr, min_lon').all(rowid),
      types: db.prepare('SELECT iri FROM entity_types WHERE entity = ? ORDER BY iri').pluck().all(rowid),
    };
  });
}

describe('secondary indexes with a previous state', () => {
  const tmp = tempDir();
  afterEach(() => tmp.cleanup());

  it('match a fresh build after every kind of change', () => {
    let store = fileStore(tmp.file);
    const id = 'urn:ngsi-ld:E:diff';
    let current = entity(id, [NS + 'A'], { [NS + 'a']: [property(1)], [NS + 'loc']: [geo(4)], [NS + 'r']: [rel('urn:x:1')] });
    store.entities.insert('', current);
    const steps: Array<(e: Entity) => Entity> = [
      (e) => ({ ...e, attrs: { ...e.attrs, [NS + 'a']: [property(2)] } }),
      (e) => ({ ...e, attrs: { ...e.attrs, [NS + 'b']: [property('x'), property(true, { datasetId: 'urn:d:1' })] } }),
      (e) => ({ ...e, attrs: { ...e.attrs, [NS + 'loc']: [geo(5), { ...geo(6), datasetId: 'urn:d:2' }] } }),
      (e) => ({ ...e, types: [NS + 'A', NS + 'B'], attrs: { ...e.attrs, [NS + 'a']: [rel('urn:x:2')] } }),
      (e) => {
        const { [NS + 'b']: _b, [NS + 'loc']: _loc, ...rest } = e.attrs;
        return { ...e, types: [NS + 'B'], attrs: { ...rest, [NS + 'c']: [property([1, 2, 3])] } };
      },
    ];
    steps.forEach((step, n) => {
      const next = step(current);
      store.entities.update('', next, current);
      current = next;
      const fresh = { ...current, id: `urn:ngsi-ld:E:fresh${n}` };
      store.entities.insert('', fresh);
      store.close();
      expect(indexRows(tmp.file, id), `after step ${n}`).toEqual(indexRows(tmp.file, fresh.id));
      store = fileStore(tmp.file);
    });
    store.close();
  });
});
