// The IRI dictionary: type and attribute IRIs stored once, referenced everywhere by small integers.

import type BetterSqlite3 from 'better-sqlite3';
import type { Iri } from '../ngsi/index.js';
import type { CacheGroup } from './tx-cache.js';

export interface IriDictionary {
  /** The id of iri, adding it when new (inside the caller's transaction). */
  intern(iri: Iri): number;
  /** The id of iri, or undefined when it was never stored. */
  lookup(iri: Iri): number | undefined;
}

export function createIriDictionary(db: BetterSqlite3.Database, caches: CacheGroup): IriDictionary {
  const cache = caches.create<Iri, number>();
  const select = db.prepare<[string], number>('SELECT id FROM iris WHERE iri = ?').pluck();
  const insert = db.prepare<[string]>('INSERT INTO iris (iri) VALUES (?)');

  const lookup = (iri: Iri): number | undefined => {
    const cached = cache.get(iri);
    if (cached !== undefined) return cached;
    const id = select.get(iri);
    if (id !== undefined) cache.set(iri, id);
    return id;
  };

  return {
    lookup,
    intern(iri) {
      const known = lookup(iri);
      if (known !== undefined) return known;
      const id = Number(insert.run(iri).lastInsertRowid);
      cache.set(iri, id);
      return id;
    },
  };
}
