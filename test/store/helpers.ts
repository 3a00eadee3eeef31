// Shared builders for store tests: stores on ':memory:' or a temp file, and sample entities.

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFixedClock, silentLogger } from '../../src/lib/index.js';
import type { AttributeBase, Entity, Json, PropertyAttr } from '../../src/ngsi/index.js';
import { openStore, type Store, type StoreOptions } from '../../src/store/index.js';

export const T0 = Date.UTC(2024, 0, 15, 12, 0, 0);
export const NS = 'https://example.org/ns/';

export function memoryStore(overrides: Partial<StoreOptions> = {}): Store {
  return openStore({ path: ':memory:', historyBucket: 'month', log: silentLogger, clock: createFixedClock(T0), ...overrides });
}

/** A fresh temp directory; call cleanup() in afterEach. */
export function tempDir(): { dir: string; file: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'edgeld-store-'));
  return { dir, file: join(dir, 'data', 'edgeld.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function fileStore(file: string, overrides: Partial<StoreOptions> = {}): Store {
  return openStore({ path: file, historyBucket: 'month', log: silentLogger, clock: createFixedClock(T0), ...overrides });
}

/** A raw read-only connection, to check what actually lands on disk. */
export function rawRead<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export function property(value: Json, extra: Partial<AttributeBase> = {}): PropertyAttr {
  return { kind: 'Property', value, createdAt: T0, modifiedAt: T0, sub: {}, ...extra };
}

export function entity(id: string, types: string[], attrs: Entity['attrs'] = {}, at = T0): Entity {
  return { id, types, attrs, createdAt: at, modifiedAt: at };
}

/** One attribute of every kind, with sub-attributes, datasetIds and the optional members. */
export function everyKind(): Entity['attrs'] {
  const base = { createdAt: T0, modifiedAt: T0 + 5, sub: {} };
  return {
    [NS + 'temperature']: [
      { ...base, kind: 'Property', value: 21.5, unitCode: 'CEL', observedAt: T0 - 1000,
        sub: { [NS + 'accuracy']: { ...base, kind: 'Property', value: 0.5 } } },
      { ...base, kind: 'Property', value: 22, datasetId: 'urn:ngsi-ld:Dataset:b' },
    ],
    [NS + 'flags']: [{ ...base, kind: 'Property', value: { [NS + 'a']: [1, 'x', true, null], '@id': 'urn:x' } }],
    [NS + 'on']: [{ ...base, kind: 'Property', value: false }],
    [NS + 'name']: [{ ...base, kind: 'Property', value: 'Hall "A" ünïcode' }],
    [NS + 'owner']: [{ ...base, kind: 'Relationship', object: 'urn:ngsi-ld:Person:1', objectType: NS + 'Person' }],
    [NS + 'members']: [{ ...base, kind: 'Relationship', object: ['urn:a', 'urn:b'] }],
    [NS + 'location']: [{ ...base, kind: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } }],
    [NS + 'label']: [{ ...base, kind: 'LanguageProperty', languageMap: { en: 'Hall', fr: ['Salle', 'Hall'] } }],
    [NS + 'category']: [{ ...base, kind: 'VocabProperty', vocab: [NS + 'Office', NS + 'Public'] }],
    [NS + 'raw']: [{ ...base, kind: 'JsonProperty', json: { keep: { as: 'is' }, n: [1, 2] } }],
    [NS + 'readings']: [{ ...base, kind: 'ListProperty', valueList: [1, 'two', { three: 3 }] }],
    [NS + 'route']: [{ ...base, kind: 'ListRelationship', objectList: ['urn:a', 'urn:b'], objectType: NS + 'Stop' }],
  };
}
