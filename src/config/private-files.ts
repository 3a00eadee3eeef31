// Private key files the configuration names must be readable by their owner only: a TLS key that
// another account can read lets it impersonate the gateway. Checked at load, so the start stops as
// for any bad option (exit code 2), naming the file and the fix. A file that cannot be read at all is
// left to the start-up, which names the option.

import { statSync } from 'node:fs';
import type { ConfigIssue } from './errors.js';
import type { Config } from './schema.js';

/** Options naming a private key file; public keys and certificates are not among them. */
const PRIVATE_KEY_OPTIONS: ReadonlyArray<{ name: string; path: (config: Config) => string }> = [
  { name: 'server.tls-key', path: (config) => config.server.tlsKey },
  { name: 'mqtt.tls-key', path: (config) => config.mqtt.tlsKey },
];

/** Group and other permission bits. */
const SHARED_BITS = 0o077;

function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
}

/** One issue per private key file readable by group or others. */
export function privateFileIssues(config: Config, sourceOf: (option: string) => string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const option of PRIVATE_KEY_OPTIONS) {
    const path = option.path(config);
    if (path === '') continue;
    const mode = modeOf(path);
    if (mode === undefined || (mode & SHARED_BITS) === 0) continue;
    issues.push({
      option: option.name,
      source: sourceOf(option.name),
      message: `${path} is a private key readable by other users (mode 0${mode.toString(8)}): `
        + `make it readable by the account edgeld runs as only, e.g. chmod 600 ${path}`,
    });
  }
  return issues;
}
