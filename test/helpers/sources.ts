// The TypeScript sources of a tree, for the tests that read the code itself (declaration files left out).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every `.ts` file under `dir` (not `.d.ts`), depth first, as full paths. */
export function typeScriptSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? typeScriptSources(path) : path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}
