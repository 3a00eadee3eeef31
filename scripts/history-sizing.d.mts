// Types for history-sizing.mjs, so tests written in TypeScript can call its arithmetic directly.

export interface RowBytes {
  readonly raw: number;
  readonly minute: number;
  readonly hour: number;
}

export interface SizingRow {
  readonly instances: number;
  readonly perDay: RowBytes;
  readonly rawOnly: number;
  readonly tiered: number;
  readonly afterYear: number;
}

export declare const MEASURED: RowBytes;
export declare function daysToFill(perDay: Readonly<Record<string, number>>, keep: Readonly<Record<string, number>>, usable: number): number;
export declare function sizingRow(bytes: RowBytes, sensors: number, everyS: number, usable: number): SizingRow;
export declare function sizingTable(bytes: RowBytes, cardGb?: number, usableShare?: number): string;
