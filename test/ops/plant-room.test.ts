// A 5-minute plant-room soak (scripts/plant-room.mjs through scripts/soak.mjs --profile plant-room)
// against the built broker: 200 devices rather than the profile's 1,000 (40 measurements/s, so that it
// fits a CI machine whose second core runs other tests), otherwise the whole profile: persistent
// sessions, 5% reconnecting each minute, garbage, 20 subscriptions (HTTP, MQTT, 3 dashboards over
// MQTT-WS), the temporal query and hourly aggregation, 10 commands a minute, federation and the
// downlink through the bad uplink (1 Mbit/s, 5% loss, 300 ms, two outages of 60 s) and a kill -9.
// Every check of its report must pass but the PUBACK latency, printed (see below). It makes a network namespace, veths and an nft table: only
// root can; elsewhere the test is skipped with the reason (CI runs as root and installs nftables).

import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cannotMakeUplink } from '../../scripts/plant-room-net.mjs';

const SOAK = fileURLToPath(new URL('../../scripts/soak.mjs', import.meta.url));
const why = cannotMakeUplink();
if (why !== undefined) console.warn(`test/ops/plant-room.test.ts skipped: ${why}`);

const dir = mkdtempSync(join(tmpdir(), 'edgeld-plant-room-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  measurements: { sent: number; acknowledged: number; storedLocally: number; inCloud: number; garbageSent: number };
  notifications: { due: number; delivered: number; joined: number; perSubscription: Array<{ kind: string }> };
  commands: { issued: number; answered: number };
  downlink: { written: number; applied: number };
  outbox: { drains: Array<{ drainedAfterS: number | null }> };
  kill: { atS: number; restarted: boolean };
  timeline: Array<{ incarnation: number; uplinkDown: boolean }>;
  checks: Array<{ name: string; ok: boolean; detail: string }>;
}

describe.skipIf(why !== undefined)('the plant-room soak, 5 minutes', () => {
  it('loses nothing through the bad uplink and the kill -9, and passes every check of its report', async () => {
    const reportFile = join(dir, 'report.json');
    const { status, err } = await new Promise<{ status: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [SOAK, '--profile', 'plant-room', '--duration', '300', '--devices', '200', '--json', '--report', reportFile],
        { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-20_000)));
      // Its own bounds end it well before; this one only keeps a hung run from holding CI.
      const timer = setTimeout(() => child.kill('SIGINT'), 840_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ status: code, err });
      });
    });
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    // NOTE: the PUBACK latency is a figure of the run alone (npm run soak), not of a test beside others:
    // here the suite's other files share the machine, so it is printed, not judged. Every other check
    // (nothing lost, everything delivered, answered and drained, the restart) holds whatever the load.
    const timing = report.checks.filter((c) => c.name.startsWith('p99 PUBACK'));
    console.info(`plant-room (5 minutes, beside the other tests): ${timing.map((c) => `${c.name}: ${c.detail}`).join('; ')}`);
    const failed = report.checks.filter((c) => !c.ok && !timing.includes(c));
    if (failed.length > 0) {
      // The whole report stays for a look (its samples, PUBACK and notification latencies over time).
      const kept = join(tmpdir(), `edgeld-plant-room-report-${process.pid}.json`);
      copyFileSync(reportFile, kept);
      console.error(`plant-room report kept in ${kept}`);
    }
    expect(failed, err).toEqual([]);
    // The soak exits 1 when any check fails: here only the latency may have.
    expect(status === 0 || (status === 1 && timing.some((c) => !c.ok)), err).toBe(true);
    const m = report.measurements;
    expect(m.sent).toBeGreaterThanOrEqual(11_900);
    expect(m.acknowledged).toBe(m.sent);
    expect(m.storedLocally).toBe(m.acknowledged);
    expect(m.inCloud).toBe(m.storedLocally);
    expect(m.garbageSent).toBeGreaterThan(0);
    expect(report.notifications.delivered + report.notifications.joined).toBe(report.notifications.due);
    expect(new Set(report.notifications.perSubscription.map((s) => s.kind))).toEqual(new Set(['http', 'mqtt', 'mqtt-ws dashboard']));
    expect(report.commands.issued).toBeGreaterThanOrEqual(40);
    expect(report.downlink.written).toBeGreaterThan(0);
    expect(report.outbox.drains).toHaveLength(2);
    expect(report.kill.restarted).toBe(true);
    // The run did go through both: samples with the uplink down, and a second gateway process.
    expect(report.timeline.some((s) => s.uplinkDown)).toBe(true);
    expect(report.timeline.some((s) => s.incarnation === 1)).toBe(true);
  }, 900_000);
});
