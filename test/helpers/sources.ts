// The TypeScript sources of a tree, for the tests that read the code itself (declaration files left
// out), and small trees written for the tests of those readers.

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Every `.ts` file under `dir` (not `.d.ts`), depth first, as full paths. */
export function typeScriptSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? typeScriptSources(path) : path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Writes `files` (path relative to `dir` → content) under `dir`, making folders as needed; returns `dir`. */
export function writeTree(dir: string, files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}
