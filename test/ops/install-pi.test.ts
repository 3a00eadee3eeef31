// scripts/install-pi.sh --dry-run: the install steps a gateway gets (service user, application tree
// with production dependencies only, configuration file, unit, enable, start), printed without root
// and without changing anything.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/install-pi.sh', import.meta.url));

function dryRun(...args: string[]): { status: number | null; out: string; err: string } {
  const res = spawnSync('bash', [SCRIPT, '--dry-run', ...args], { encoding: 'utf8', timeout: 15_000 });
  return { status: res.status, out: res.stdout, err: res.stderr };
}

describe('scripts/install-pi.sh --dry-run', () => {
  it('prints every step in order and exits 0 without root', () => {
    const res = dryRun();
    expect(res.status, res.err).toBe(0);
    const steps = [
      /npm ci --omit=dev/,
      /would run: install -d -m 0750 -o root -g edgeld \/etc\/edgeld$/m,
      /\/etc\/edgeld\/edgeld\.env/,
      /would run: install -m 0644 \S+\/systemd\/edgeld\.service \/etc\/systemd\/system\/edgeld\.service$/m,
      /would run: systemctl daemon-reload$/m,
      /would run: systemctl enable edgeld\.service$/m,
      /would run: systemctl restart edgeld\.service$/m,
    ];
    const hasUser = spawnSync('getent', ['passwd', 'edgeld']).status === 0;
    if (!hasUser) expect(res.out).toMatch(/would run: useradd --system .* edgeld$/m);
    let from = 0;
    for (const step of steps) {
      const m = step.exec(res.out.slice(from));
      expect(m, `${String(step)} after offset ${from} in:\n${res.out}`).not.toBeNull();
      from += m!.index + m![0].length;
    }
  });

  it('does not start the service with --no-start, and refuses an unknown argument', () => {
    const res = dryRun('--no-start');
    expect(res.status, res.err).toBe(0);
    expect(res.out).not.toContain('restart');
    const bad = dryRun('--frobnicate');
    expect(bad.status).toBe(2);
    expect(bad.err).toContain('unknown argument: --frobnicate');
  });
});
