// Types for fuzz.mjs, so tests written in TypeScript can call it directly.

/** The test files under `<root>/test` that import fast-check, relative to root, sorted. */
export function fuzzSuites(root: string): string[];
