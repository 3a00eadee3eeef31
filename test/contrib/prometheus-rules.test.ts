// contrib/prometheus holds together for promtool (Debian package prometheus): the alerting rules
// check, their unit tests (alerts.test.yml) pass, and fail once an alert is changed; the example
// configuration checks with its rule file.

import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';

const DIR = fileURLToPath(new URL('../../contrib/prometheus/', import.meta.url));
const tmp = tempDir('edgeld-promtool-');
afterAll(() => tmp.remove());

function promtool(args: string[], cwd = DIR): { status: number | null; out: string } {
  const run = spawnSync('promtool', args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw new Error(`promtool could not run (apt-get install prometheus): ${run.error.message}`);
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

const alertNames = (yaml: string): string[] => [...yaml.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]!);

describe('contrib/prometheus with promtool', () => {
  const alerts = readFileSync(join(DIR, 'alerts.yml'), 'utf8');

  it('checks alerts.yml: every rule valid, each with a for, a severity, a summary and a description', () => {
    const names = alertNames(alerts);
    expect(names).toEqual(expect.arrayContaining([
      'EdgeldDown', 'EdgeldWalGrowing', 'EdgeldOutboxNotDraining', 'EdgeldNotificationsFailing', 'EdgeldDiskBudgetNear', 'EdgeldMemoryHigh',
    ]));
    const run = promtool(['check', 'rules', 'alerts.yml']);
    expect(run.out).toContain(`SUCCESS: ${names.length} rules found`);
    expect(run.status).toBe(0);
    for (const block of alerts.split(/^\s+- alert: /m).slice(1)) {
      const name = block.split('\n')[0];
      expect(block, name).toMatch(/^\s+for: \d+[smh]$/m);
      expect(block, name).toMatch(/^\s+severity: (warning|critical)$/m);
      expect(block, name).toMatch(/^\s+summary: ".+"$/m);
      expect(block, name).toMatch(/^\s+description: ".+"$/m);
    }
  });

  it('passes the unit tests of alerts.test.yml, which cover every alert', () => {
    const tests = readFileSync(join(DIR, 'alerts.test.yml'), 'utf8');
    const tested = new Set([...tests.matchAll(/^\s+alertname: (\w+)$/gm)].map((m) => m[1]));
    expect([...tested].sort()).toEqual(alertNames(alerts).sort());
    const run = promtool(['test', 'rules', 'alerts.test.yml']);
    expect(run.out).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('fails those unit tests once an alert waits longer or its threshold moves', () => {
    copyFileSync(join(DIR, 'alerts.test.yml'), join(tmp.path, 'alerts.test.yml'));
    const slower = alerts.replace('expr: up{job="edgeld"} == 0\n        for: 2m', 'expr: up{job="edgeld"} == 0\n        for: 5m')
      .replace('> 200 * 1024 * 1024', '> 300 * 1024 * 1024');
    expect(slower).not.toBe(alerts);
    writeFileSync(join(tmp.path, 'alerts.yml'), slower);
    const run = promtool(['test', 'rules', 'alerts.test.yml'], tmp.path);
    expect(run.status).not.toBe(0);
    expect(run.out).toContain('alertname: EdgeldDown');
    expect(run.out).toContain('alertname: EdgeldMemoryHigh');
  });

  it('checks the example prometheus.yml with the rule file beside it', () => {
    const run = promtool(['check', 'config', 'prometheus.yml']);
    expect(run.out).toContain('SUCCESS');
    expect(run.status).toBe(0);
    expect(readFileSync(join(DIR, 'prometheus.yml'), 'utf8')).toMatch(/^\s+- job_name: edgeld$/m);
  });
});
