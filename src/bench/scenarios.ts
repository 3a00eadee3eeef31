// The benchmark scenarios, run in order against each target. Add query, batch or temporal
// scenarios here; later scenarios may rely on the entities earlier ones created.

import type { BenchRequest } from './load.js';

/** Shared by the scenarios of one target: ids created so far and a seeded random source. */
export interface BenchState {
  /** Entities `urn:ngsi-ld:Sensor:0` … `urn:ngsi-ld:Sensor:<created - 1>` have been requested. */
  created: number;
  readonly random: () => number;
}

export interface Scenario {
  /** Key in the report: `create`, `retrieve`, `update`. */
  readonly name: string;
  readonly description: string;
  readonly expectStatus: number;
  /** Unmeasured requests sent before any measurement, to warm the JIT and caches. */
  readonly warmup: number;
  /** Report disk bytes written per request. */
  readonly measureWrites: boolean;
  readonly request: (state: BenchState) => BenchRequest;
}

const ENTITIES = '/ngsi-ld/v1/entities';

export function sensorId(n: number): string {
  return `urn:ngsi-ld:Sensor:${n}`;
}

function anySensor(state: BenchState): string {
  return encodeURIComponent(sensorId(Math.floor(state.random() * Math.max(1, state.created))));
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'create',
    description: 'POST /entities, one new Sensor each',
    expectStatus: 201,
    warmup: 200,
    measureWrites: false,
    request: (state) => {
      const id = sensorId(state.created++);
      const entity = { id, type: 'Sensor', temperature: { type: 'Property', value: 21.5 } };
      return { method: 'POST', path: ENTITIES, body: JSON.stringify(entity) };
    },
  },
  {
    name: 'retrieve',
    description: 'GET /entities/{id} of a random Sensor',
    expectStatus: 200,
    warmup: 200,
    measureWrites: false,
    request: (state) => ({ method: 'GET', path: `${ENTITIES}/${anySensor(state)}` }),
  },
  {
    name: 'update',
    description: 'PATCH /entities/{id}/attrs/temperature of a random Sensor',
    expectStatus: 204,
    warmup: 200,
    measureWrites: true,
    request: (state) => ({
      method: 'PATCH',
      path: `${ENTITIES}/${anySensor(state)}/attrs/temperature`,
      body: JSON.stringify({ value: Math.round(state.random() * 4000) / 100 }),
    }),
  },
];

/** A small deterministic generator (mulberry32), so every run and target sees the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
