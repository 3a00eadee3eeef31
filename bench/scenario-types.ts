// The shape of a benchmark scenario: what it sends, the data it needs first, and how it is measured.

import type { BenchRequest } from './load.js';

/** Shared by the scenarios of one target: counters of what was requested and a seeded random source. */
export interface BenchState {
  /** Entities `urn:ngsi-ld:Sensor:0` … `urn:ngsi-ld:Sensor:<created - 1>` have been requested. */
  created: number;
  /** Batch entities `urn:ngsi-ld:Gauge:0` … `<batched - 1>` have been requested. */
  batched: number;
  /** History instances sent to the ingest series so far. */
  ingested: number;
  readonly random: () => number;
}

/** Checks an expected answer's body; returns what is wrong with it, if anything. */
export type Check = (body: string) => string | undefined;

/** Requests sent one at a time, unmeasured, before the scenarios that need their data. */
export interface SetupStep {
  readonly requests: number;
  readonly expectStatus: number;
  /** Builds the n-th request of the step (0-based). */
  readonly request: (n: number) => BenchRequest;
}

/** Data some scenarios need, loaded once per target before the first of them runs. */
export interface Dataset {
  readonly name: string;
  /** What the data is, for the report's notes. */
  readonly note: string;
  readonly steps: readonly SetupStep[];
  /** Loaded through endpoints that may not exist yet (see Scenario.isOptional). */
  readonly isOptional?: boolean;
}

/** What one request carries, when throughput is counted in items rather than requests. */
export interface Items {
  readonly perRequest: number;
  /** The throughput unit: `entities/s`, `instances/s`. */
  readonly unit: string;
}

/**
 * How a scenario is measured. With one request in flight, throughput is items over the summed
 * request times, so building the next body in the load generator is not counted. `measureWrites`:
 * the server's write_bytes over the measured requests, per request or, with items, per item.
 */
export type Measure =
  /** For the run's duration: throughput, p50 and p99 latency (the run's concurrency unless given). */
  | { readonly kind: 'rate'; readonly concurrency?: number; readonly items?: Items; readonly measureWrites?: boolean }
  /** A fixed number of requests, one at a time, once: items/s and the p50 latency. */
  | { readonly kind: 'total'; readonly requests: number; readonly items: Items; readonly measureWrites?: boolean }
  /** A handful of requests, one at a time: the median ms per request. */
  | { readonly kind: 'latency'; readonly repetitions: number };

/** A ratio the broker should reach against the ceiling, reported as met or missed. */
export interface Target {
  /** `value` is the scenario's main row, `p50` its `.p50` row. */
  readonly row: 'value' | 'p50';
  readonly atMost?: number;
  readonly atLeast?: number;
}

export interface Scenario {
  /** Key in the report: `create`, `query.q`, `temporal.ingest`. */
  readonly name: string;
  /** Rows of one group are printed together. */
  readonly group: 'entities' | 'query' | 'batch' | 'temporal' | 'auth' | 'tls';
  readonly description: string;
  readonly expectStatus: number;
  /** Unmeasured requests sent before the measurement, to warm the JIT and caches. */
  readonly warmup: number;
  readonly measure: Measure;
  readonly dataset?: Dataset;
  /**
   * The endpoint may not exist yet: when every answer is 404, 405 or 501 the scenario is reported as
   * not available, without failing the run. Elsewhere such answers are failures.
   */
  readonly isOptional?: boolean;
  /** An earlier scenario whose writes this one reads: skipped when that one was not measured. */
  readonly needs?: string;
  /** Report the size of an answer in the notes. */
  readonly noteBytes?: boolean;
  readonly target?: Target;
  /** Checks the first expected answer (see LoadOptions.check). */
  readonly check?: Check;
  /** The next request of a client (0 … concurrency - 1): a client keeps its credentials, as real ones do. */
  readonly request: (state: BenchState, client: number) => BenchRequest;
}
