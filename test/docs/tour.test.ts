// The README's five-minute tour works as written: its shell blocks run with bash, in order, against
// the compiled broker (dist/main.js) on a temp data dir and free ports, with the real curl,
// mosquitto_pub and mosquitto_sub. The tour reads the broker's address from $EDGELD and $MQTT_PORT
// (defaults for a human: localhost:1026 and 1883), so the commands run unchanged.

import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { connectClient, endClient } from '../helpers/mqtt.js';
import { startBrokerProcess, within, type BrokerProcess } from '../helpers/process.js';
import { ROOT, readPage, shellBlocksOfSection } from './markdown.js';

const TOUR = 'Five-minute tour';
const SECOND_TERMINAL = '# In a second terminal:';
const ENTITY = 'urn:ngsi-ld:Device:boiler-1';
/** Whether the broker's sources send the temporal NGSILD-Warning hint the tour mentions. */
const SENDS_WARNING_HINT = spawnSync('grep', ['-rlq', 'NGSILD-Warning', `${ROOT}src`]).status === 0;

const dir = tempDir('edgeld-tour-');
let broker: BrokerProcess;
let env: Record<string, string>;
const background: ChildProcess[] = [];

/** Runs one block with bash; resolves with its stdout, rejects with its stderr on a non-zero exit. */
function run(block: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-eo', 'pipefail', '-c', block], { env, timeout: 15_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${block}\nfailed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Resolves once an MQTT client of the broker has subscribed to `topic` ($SYS announcements of Aedes). */
async function subscribedTo(mqttPort: number, topic: string): Promise<() => Promise<void>> {
  const watcher = await connectClient(`mqtt://127.0.0.1:${mqttPort}`);
  const seen = new Promise<void>((resolve) => {
    watcher.on('message', (_t, payload) => {
      const { subs } = JSON.parse(payload.toString()) as { subs?: Array<{ topic: string }> };
      if (subs?.some((s) => s.topic === topic)) resolve();
    });
  });
  await watcher.subscribeAsync('$SYS/+/new/subscribes');
  return async () => {
    try {
      await within(seen, 10_000, `a subscription to ${topic}`);
    } finally {
      await endClient(watcher);
    }
  };
}

beforeAll(async () => {
  // The tour opens /ui/: the broker serves the page built into dist/ui (npm run build makes it).
  if (!existsSync(`${ROOT}dist/ui/index.html`)) {
    const { buildUi } = (await import(new URL('../../scripts/build-ui.mjs', import.meta.url).href)) as { buildUi: () => Promise<unknown> }; // a JS script
    await buildUi();
  }
  broker = await startBrokerProcess({ STORAGE_DIR: `${dir.path}/data` });
  env = { PATH: process.env['PATH'] ?? '', HOME: dir.path, EDGELD: broker.base.replace('127.0.0.1', 'localhost'), MQTT_PORT: String(broker.mqttPort) };
}, 60_000);

afterAll(async () => {
  for (const p of background) if (p.pid !== undefined && p.exitCode === null) process.kill(-p.pid, 'SIGTERM');
  if (broker) {
    broker.child.kill('SIGTERM');
    await within(broker.exited, 10_000, 'broker exit');
  }
  dir.remove();
});

describe('README five-minute tour', () => {
  it('runs every command of the tour and each shows what the tour says', async () => {
    for (const tool of ['bash', 'curl', 'mosquitto_pub', 'mosquitto_sub']) {
      expect(await run(`command -v ${tool}`), `${tool} is installed (.ci/run installs it)`).not.toBe('');
    }
    const blocks = shellBlocksOfSection(readPage('README.md'), TOUR);
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    const outputs = new Map<string, string>();
    let notifications = '';
    let notified: Promise<void> | undefined;

    for (const block of blocks) {
      if (block.startsWith(SECOND_TERMINAL)) {
        // The second terminal: it keeps running while the tour goes on.
        const subscribed = await subscribedTo(broker.mqttPort, 'tour/#');
        // Its own process group, so that ending the tour ends mosquitto_sub too, not only its shell.
        const sub = spawn('bash', ['-c', block], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        background.push(sub);
        notified = new Promise((resolve) => {
          sub.stdout.on('data', (chunk: Buffer) => {
            notifications += chunk.toString();
            if (notifications.includes('21.4')) resolve();
          });
        });
        await subscribed();
        continue;
      }
      outputs.set(block, await run(block));
    }

    const outputOf = (needle: string, nth = 0): string => {
      const found = [...outputs.entries()].filter(([block]) => block.includes(needle));
      expect(found.length, `a tour block with ${needle}`).toBeGreaterThan(nth);
      return found[nth]![1];
    };
    /** The JSON documents a block printed, one a line; other lines (status codes, headers) left out. */
    const json = (out: string): Array<Record<string, unknown>> =>
      out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const values = (doc: Record<string, unknown> | undefined): unknown[] =>
      ((doc?.['temperature'] as { values?: Array<[unknown, string]> } | undefined)?.values ?? []).map((v) => v[0]);

    // The entity, created (201) then read back.
    const created = outputOf('-X POST "$EDGELD/ngsi-ld/v1/entities"');
    expect(created.split('\n')[0]).toBe('201');
    expect(json(created)).toEqual([{ id: ENTITY, type: 'Device', temperature: { type: 'Property', value: 20.5 } }]);

    // Before any measurement: nothing on observedAt (with the hint), the write listed on modifiedAt.
    const firstHistory = outputOf('curl -si');
    expect(firstHistory).toMatch(/^HTTP\/1\.1 200/);
    const [observedBefore, modifiedBefore] = json(firstHistory);
    expect(observedBefore).toEqual({ id: ENTITY, type: 'Device' });
    expect(values(modifiedBefore)).toEqual([20.5]);
    // NOTE: the NGSILD-Warning hint is asserted once the broker's sources send it.
    if (SENDS_WARNING_HINT) expect(firstHistory).toMatch(/^NGSILD-Warning:.*timeproperty/im);

    // The subscription is created; the measurement is stored and notified on the embedded broker.
    expect(outputOf('-X POST "$EDGELD/ngsi-ld/v1/subscriptions"').trim()).toBe('201');
    expect(json(outputOf('mosquitto_pub'))).toEqual([{ id: ENTITY, type: 'Device', temperature: 21.4 }]);
    expect(notified, 'the tour has a second terminal with mosquitto_sub').toBeDefined();
    await within(notified!, 10_000, 'the notification in the second terminal');
    const [notification] = json(notifications) as Array<{ body?: { data?: unknown[] } }>;
    expect(notification?.body?.data).toEqual([{ id: ENTITY, type: 'Device', temperature: 21.4 }]);

    // The history: the measurement on observedAt, both writes on modifiedAt.
    const [observedAfter, modifiedAfter] = json(outputOf('format=temporalValues"\ncurl'));
    expect(values(observedAfter)).toEqual([21.4]);
    expect(values(modifiedAfter)).toEqual([20.5, 21.4]);

    // The dashboard answers with its page.
    expect(outputOf('/ui/').trim()).toMatch(/^200 text\/html/);
  });
});
