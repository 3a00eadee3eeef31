// The systemd unit: systemd-analyze finds nothing wrong with it, and its hardening keeps the exposure
// score at 3.0 or less ("OK"). Both run offline on the file, so they work in a container without systemd
// running; the tests are skipped only when systemd-analyze is not installed (.ci/run installs it).

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const UNIT = fileURLToPath(new URL('../../systemd/edgeld.service', import.meta.url));
const PATH = `${process.env['PATH'] ?? ''}:/usr/bin:/bin`;
const hasAnalyze = spawnSync('systemd-analyze', ['--version'], { env: { ...process.env, PATH } }).status === 0;
if (!hasAnalyze) process.stderr.write('systemd-analyze not found: the systemd unit checks are skipped (apt-get install systemd)\n');

function analyze(...args: string[]): { status: number | null; out: string; err: string } {
  const res = spawnSync('systemd-analyze', args, { encoding: 'utf8', timeout: 15_000, env: { ...process.env, PATH, SYSTEMD_COLORS: '0' } });
  return { status: res.status, out: res.stdout, err: res.stderr };
}

describe.skipIf(!hasAnalyze)('systemd/edgeld.service (systemd-analyze)', () => {
  it('has an overall exposure of 3.0 or less in `systemd-analyze security --offline=yes`', () => {
    const res = analyze('security', '--offline=yes', UNIT);
    const m = /Overall exposure level for edgeld\.service: (\d+(?:\.\d+)?) (\S+)/.exec(res.out);
    expect(m, `${res.out}\n${res.err}`).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(3.0);
    expect(m![2]).toBe('OK');
  });

  it('passes `systemd-analyze verify` with no warning about the unit', () => {
    const res = analyze('verify', UNIT);
    expect(res.status, res.err).toBe(0);
    // Warnings (unknown keys, bad values) go to stderr with the unit's file name and exit 0.
    const warnings = res.err.split('\n').filter((l) => l.includes('edgeld.service'));
    expect(warnings).toEqual([]);
  });

  it('restarts on failure, reloads the certificates with SIGHUP, runs as its own user with state and configuration directories, and keeps W^X off', () => {
    const unit = readFileSync(UNIT, 'utf8');
    for (const line of ['Restart=on-failure', 'ExecReload=/bin/kill -HUP $MAINPID', 'User=edgeld', 'StateDirectory=edgeld', 'ConfigurationDirectory=edgeld', 'EnvironmentFile=-/etc/edgeld/edgeld.env']) {
      expect(unit.split('\n')).toContain(line);
    }
    // V8's JIT needs writable and executable pages: Node aborts under MemoryDenyWriteExecute=yes.
    expect(unit).not.toMatch(/^MemoryDenyWriteExecute=/m);
  });
});
