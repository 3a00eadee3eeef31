// Shared by the dashboard tests: the page built once per file into a temp directory (esbuild, as
// npm run build does), a real broker on ephemeral ports of 127.0.0.1 serving it (real clock, temp
// SQLite, embedded MQTT broker), and a headless Chromium with a fresh profile.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { buildUi } from '../../scripts/build-ui.mjs';
import { systemClock, silentLogger } from '../../src/lib/index.js';
import { createBroker, type Broker } from '../../src/server.js';
import { testConfig, type ConfigPatch } from '../helpers/broker.js';

export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Builds the page into a fresh temp directory; the caller removes it. */
export async function buildPage(): Promise<{ dir: string; gzipTotal: number; files: Array<{ name: string; bytes: number; gzipBytes: number }> }> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeld-ui-'));
  const built = await buildUi({ outDir: join(dir, 'ui') });
  return { dir: built.outDir, gzipTotal: built.gzipTotal, files: built.files };
}

/** What a dashboard test file shares: the page built once, and what each test starts, closed after it. */
export interface UiHarness {
  /** The built page's directory (set once the file's tests start). */
  readonly dir: string;
  /** Closed after each test, the last pushed first. */
  readonly cleanups: Array<() => Promise<void> | void>;
  /** A browser, closed after the test. */
  open(errors: string[]): Promise<Browser>;
  /** A broker serving the page, closed after the test. */
  broker(config?: ConfigPatch): Promise<UiBroker>;
}

/** Registers the hooks of a dashboard test file (call it at the top level of the file). */
export function useUiHarness(): UiHarness {
  let dir = '';
  const cleanups: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    dir = (await buildPage()).dir;
  });
  afterAll(() => {
    rmSync(dirname(dir), { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    get dir() {
      return dir;
    },
    cleanups,
    async open(errors) {
      const browser = await launchBrowser(errors);
      cleanups.push(() => browser.close());
      return browser;
    },
    async broker(config = {}) {
      const b = await startUiBroker({ uiDir: dir, config });
      cleanups.push(() => b.close());
      return b;
    },
  };
}

export interface UiBroker {
  broker: Broker;
  /** http://127.0.0.1:<port> */
  base: string;
  mqttPort: number;
  /** fetch() against the broker, JSON in and out. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; json: unknown }>;
  close(): Promise<void>;
}

/** The real broker with a temp database, listening on 127.0.0.1 (HTTP and MQTT on free ports). */
export async function startUiBroker(opts: { uiDir: string; config?: ConfigPatch }): Promise<UiBroker> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeld-ui-data-'));
  const config = testConfig({
    ...opts.config, server: { port: 0, host: '127.0.0.1' }, mqtt: { port: 0, host: '127.0.0.1' }, storage: { dir: dataDir }, log: { level: 'silent' },
  });
  const broker = createBroker({ config, log: silentLogger, clock: systemClock, dbPath: join(dataDir, 'edgeld.db'), dashboardDir: opts.uiDir });
  const port = await broker.listen();
  const base = `http://127.0.0.1:${port}`;
  return {
    broker, base, mqttPort: broker.mqttPort ?? 0,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${base}${path}`, {
        method, headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, headers: res.headers, json };
    },
    close: async () => {
      await broker.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

export interface Browser { context: BrowserContext; page: Page; close(): Promise<void> }

/** Headless Chromium (the Debian package) with a fresh profile; the page's console errors are collected. */
export async function launchBrowser(errors: string[] = []): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'edgeld-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 }, timeout: 20_000,
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (m) => {
    // The resource a failed load names (the text does not), so a test can tell which answer failed.
    if (m.type() === 'error') errors.push(m.location().url ? `${m.text()} (${m.location().url})` : m.text());
  });
  return {
    context, page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The page's console errors but the 404 of the commands of an entity that is no device's: the page
 * asks, and shows no card when the answer is 404 (the browser logs the failed load anyway).
 */
export const withoutCommandMisses = (errors: readonly string[]): string[] =>
  errors.filter((e) => !/status of 404\b.*\/edgeld\/v1\/commands\?/.test(e));

/** A screenshot of the page under test-artifacts/ (gitignored). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}
