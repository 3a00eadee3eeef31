// The benchmark scenarios, run in order against each target. Entity scenarios live here; query,
// batch and temporal ones in their own files, joined in SCENARIOS.

import { BATCH_SCENARIOS } from './batch-scenarios.js';
import { QUERY_SCENARIOS } from './query-scenarios.js';
import type { BenchState, Scenario } from './scenario-types.js';
import { TEMPORAL_SCENARIOS } from './temporal-scenarios.js';

const ENTITIES = '/ngsi-ld/v1/entities';

export function sensorId(n: number): string {
  return `urn:ngsi-ld:Sensor:${n}`;
}

function anySensor(state: BenchState): string {
  return encodeURIComponent(sensorId(Math.floor(state.random() * Math.max(1, state.created))));
}

/** Creates, each of a new Sensor: also the baseline of `auth.create`, on a broker without authentication. */
export const CREATE: Scenario = {
  name: 'create',
  group: 'entities',
  description: 'POST /entities, one new Sensor each',
  expectStatus: 201,
  warmup: 200,
  measure: { kind: 'rate' },
  request: (state) => {
    const id = sensorId(state.created++);
    const entity = { id, type: 'Sensor', temperature: { type: 'Property', value: 21.5 } };
    return { method: 'POST', path: ENTITIES, body: JSON.stringify(entity) };
  },
};

const ENTITY_SCENARIOS: readonly Scenario[] = [
  CREATE,
  {
    name: 'retrieve',
    group: 'entities',
    description: 'GET /entities/{id} of a random Sensor',
    expectStatus: 200,
    warmup: 200,
    measure: { kind: 'rate' },
    request: (state) => ({ method: 'GET', path: `${ENTITIES}/${anySensor(state)}` }),
  },
  {
    name: 'update',
    group: 'entities',
    description: 'PATCH /entities/{id}/attrs/temperature of a random Sensor',
    expectStatus: 204,
    warmup: 200,
    measure: { kind: 'rate', measureWrites: true },
    request: (state) => ({
      method: 'PATCH',
      path: `${ENTITIES}/${anySensor(state)}/attrs/temperature`,
      body: JSON.stringify({ value: Math.round(state.random() * 4000) / 100 }),
    }),
  },
];

export const SCENARIOS: readonly Scenario[] = [...ENTITY_SCENARIOS, ...QUERY_SCENARIOS, ...BATCH_SCENARIOS, ...TEMPORAL_SCENARIOS];
