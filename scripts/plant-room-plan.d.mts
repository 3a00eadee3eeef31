// Types for plant-room-plan.mjs, so tests written in TypeScript can call its pure parts directly.

export interface Window {
  readonly start: number;
  readonly end: number;
}

export interface TimedValue {
  readonly t: number;
  readonly v: number;
}

export interface PlantRoomOptions {
  duration: number;
  devices: number;
  json: boolean;
  report: string;
  seed: number;
  core: number;
  findCapacity: boolean;
  delayMs: number;
  lossPercent: number;
  rateKbit: number;
  /** Environment variables given to the gateway beside the profile's (`--gateway-env NAME=value`). */
  gatewayEnv: Readonly<Record<string, string>>;
  /** Node flags added to the gateway's command line (--gateway-flag, repeatable). */
  gatewayFlags: readonly string[];
  step: number;
}

export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

export declare const MEASUREMENT_EVERY_S: number;
export declare const PUBACK_P99_LIMIT_MS: number;
export declare const DRAIN_LIMIT_S: number;
export declare const RSS_SLOPE_LIMIT_MIB_PER_10_MIN: number;
export declare const OUTBOX_STEADY_LAG_S: number;
export declare const DEFAULTS: Readonly<PlantRoomOptions>;
export declare function parsePlantRoomArgs(argv: readonly string[]): PlantRoomOptions;
export declare function outageSchedule(durationS: number): Window[];
export declare function killMoment(durationS: number, rand: () => number): number;
export declare function seededRandom(seed: number): () => number;
export declare function quantile(values: readonly number[], q: number): number | null;
export declare function slopeOf(points: ReadonlyArray<{ x: number; y: number }>): number;
export declare function percentilesOverTime(events: readonly TimedValue[], stepS: number): Array<{ t: number; n: number; p50: number | null; p99: number | null }>;
export declare function inWindows(t: number, windows: readonly Window[]): boolean;
export declare function drainTimes(samples: ReadonlyArray<{ t: number; outbox: number | null; lagS: number | null }>, outages: readonly Window[]):
  Array<{ outageStartS: number; outageEndS: number; drainedAfterS: number | null }>;
export declare function rssSlope(samples: ReadonlyArray<{ t: number; rss: number; incarnation: number }>, warmUpS: number): { mibPer10Min: number; spanS: number; judged: boolean };
export interface ProcessFigures { heapTotal: number | null; heapUsed: number | null; code: number | null; old: number | null; external: number | null; lagP99Ms: number | null; lagMaxMs: number | null }
export declare function processFigures(metricsText: string): ProcessFigures;
type Slope = { mibPer10Min: number; spanS: number; judged: boolean };
export declare function memoryReport(samples: ReadonlyArray<{ t: number; rss: number; incarnation: number; process: ProcessFigures | null }>, warmUpS: number): {
  heapSlope: Slope; outsideHeapSlope: Slope; heapMaxBytes: number | null; codeBytes: { first: number | null; last: number | null } | null;
  eventLoop: { worstP99Ms: number | null; maxMs: number | null; samplesOver100Ms: number };
};
/** `report`: the JSON report plant-room.mjs builds (its measurements, notifications, commands, … members). */
export declare function checks(report: object): Check[];
export declare function summaryTable(report: object): string;
