// Types of scripts/build-ui.mjs for the TypeScript tests that build the dashboard page.

export interface BuiltFile { name: string; bytes: number; gzipBytes: number }
export const DEFAULT_OUT_DIR: string;
export function buildUi(opts?: { outDir?: string; minify?: boolean }): Promise<{ outDir: string; files: BuiltFile[]; gzipTotal: number }>;
