// Types for check-deps.mjs, so tests written in TypeScript can call the checker directly.

export interface FoundImport {
  readonly specifier: string;
  readonly line: number;
  readonly typeOnly: boolean;
}

export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export declare const LAYERS: readonly (readonly string[])[];
export declare const SAME_LAYER_ALLOWED: readonly (readonly [string, string])[];
export declare const LIBRARY_HOMES: Readonly<Record<string, readonly string[]>>;
export declare function stripComments(text: string): string;
export declare function findImports(source: string): FoundImport[];
export declare function checkDeps(srcDir: string): Violation[];
export declare function formatViolation(v: Violation): string;
