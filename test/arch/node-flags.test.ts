// The V8 heap flags the broker runs with: one list (package.json config.nodeFlags) used by npm start,
// the systemd unit and the benchmark, and accepted by this node.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  config: { nodeFlags: string }; scripts: Record<string, string>;
};
const flags = pkg.config.nodeFlags;

describe('node flags', () => {
  it('npm start and the systemd unit pass package.json config.nodeFlags to node', () => {
    expect(pkg.scripts['start']).toContain('node $npm_package_config_nodeFlags dist/main.js');
    const unit = readFileSync(new URL('systemd/edgeld.service', root), 'utf8');
    expect(unit).toMatch(new RegExp(`^ExecStart=/usr/bin/node ${flags} /opt/edgeld/dist/main\\.js$`, 'm'));
  });

  it('bound the V8 heap well below what a 1 GB device can give', () => {
    const out = execFileSync(process.execPath, [...flags.split(' '), '-p', "require('v8').getHeapStatistics().heap_size_limit"], { encoding: 'utf8' });
    const limitMiB = Number(out.trim()) / 1_048_576;
    expect(limitMiB).toBeGreaterThan(64);
    expect(limitMiB).toBeLessThan(160);
  });
});
