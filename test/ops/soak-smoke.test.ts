// A short run of scripts/soak.mjs against the built broker: 20 s at 500 measurements/s over MQTT with
// 10 subscriptions and a second edgeld as its federation target; every measurement is acknowledged,
// notified and held by the cloud once the outbox is empty, and both processes stop cleanly. The
// hour-long run (--long) is for a gateway or a workstation, not for CI.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOAK = fileURLToPath(new URL('../../scripts/soak.mjs', import.meta.url));

describe('scripts/soak.mjs (smoke)', () => {
  it('sustains 500 measurements/s with 10 subscriptions and a federation target for 20 s, losing nothing', async () => {
    const { status, out, err } = await new Promise<{ status: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, [SOAK, '--duration', '20', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 75_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ status: code, out, err });
      });
    });
    expect(status, err).toBe(0);
    const summary = JSON.parse(out.trim().split('\n').at(-1)!) as {
      sent: number; acked: number; notified: number; notifiedJoined: number; failures: string[]; samples: Array<{ outbox: number | null }>;
      outboxMax: number; outboxSlopePerHour: number; outboxEmptyAfterS: number | null; cloudInstances: number; cloudMissing: number;
    };
    expect(summary.failures).toEqual([]);
    expect(summary.sent).toBe(10_000);
    expect(summary.acked).toBe(summary.sent);
    // A measurement joined into the write of a later one of its device is notified by that write's notification.
    expect(summary.notified + summary.notifiedJoined).toBe(summary.acked);
    expect(summary.samples.length).toBeGreaterThanOrEqual(10);
    expect(summary.samples.every((s) => typeof s.outbox === 'number')).toBe(true);
    expect(typeof summary.outboxMax).toBe('number');
    expect(typeof summary.outboxSlopePerHour).toBe('number');
    expect(summary.outboxEmptyAfterS).not.toBeNull();
    expect(summary.cloudMissing).toBe(0);
    expect(summary.cloudInstances).toBeGreaterThanOrEqual(summary.acked);
  }, 80_000);
});
