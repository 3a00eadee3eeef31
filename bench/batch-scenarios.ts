// Batch scenarios: upserts of 1,000 new entities per request, then batches of 1,000 measurements to
// entities created by the first; one request at a time, counted in entities per second.

import { meterEntity } from './meters.js';
import type { Scenario } from './scenario-types.js';

const UPSERT = '/ngsi-ld/v1/entityOperations/upsert';
const BATCH = 1_000;

function checkIds(body: string): string | undefined {
  const parsed: unknown = JSON.parse(body);
  if (!Array.isArray(parsed)) return 'the answer is not a JSON array of ids';
  return parsed.length === BATCH ? undefined : `expected ${BATCH} created ids, got ${parsed.length}`;
}

export const BATCH_SCENARIOS: readonly Scenario[] = [
  {
    name: 'batch.upsert-1000',
    group: 'batch',
    // NOTE: Gauge, not Meter, so the batches never change what the query scenarios match.
    description: 'POST /entityOperations/upsert of 1,000 Gauge entities with new ids every request (all creations)',
    expectStatus: 201,
    warmup: 3,
    measure: { kind: 'rate', concurrency: 1, items: { perRequest: BATCH, unit: 'entities/s' }, measureWrites: true },
    target: { row: 'value', atLeast: 0.3 },
    check: checkIds,
    request: (state) => {
      const first = state.batched;
      state.batched += BATCH;
      const entities = Array.from({ length: BATCH }, (_, i) => meterEntity('Gauge', first + i));
      return { method: 'POST', path: UPSERT, body: JSON.stringify(entities) };
    },
  },
  {
    name: 'batch.update-1000',
    group: 'batch',
    description: 'POST /entityOperations/upsert?options=update of a new temperature for 1,000 distinct Gauges drawn at random among those created',
    expectStatus: 204,
    warmup: 3,
    needs: 'batch.upsert-1000',
    measure: { kind: 'rate', concurrency: 1, items: { perRequest: BATCH, unit: 'entities/s' }, measureWrites: true },
    request: (state) => {
      const picked = new Set<number>();
      const population = Math.max(state.batched, BATCH);
      while (picked.size < BATCH) picked.add(Math.floor(state.random() * population));
      const entities = [...picked].map((n) => ({
        id: `urn:ngsi-ld:Gauge:${n}`, type: 'Gauge', temperature: { type: 'Property', value: Math.round(state.random() * 4000) / 100 },
      }));
      return { method: 'POST', path: `${UPSERT}?options=update`, body: JSON.stringify(entities) };
    },
  },
];
