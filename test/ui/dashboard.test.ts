// The dashboard in a real headless Chromium against a real broker: the entity list shows the seeded
// entities, the chart draws the seeded series, a measurement published over MQTT appears on the open
// page within 2 s without a reload, and with authentication on a subject sees only what it may read.

import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { addUser } from '../helpers/identity.js';
import { connectClient, endClient } from '../helpers/mqtt.js';
import { ALARMS, BOILER, PUMP, ROOM, SERIES_LENGTH, SPARE, seedGateway } from './seed.js';
import { screenshot, useUiHarness, withoutCommandMisses, type Browser } from './support.js';

const ui = useUiHarness();
const { cleanups, open, broker } = ui;

const row = (id: string): string => `tr[data-id="${id}"]`;

/** Runs the steps; when one fails, the page as it was goes to test-artifacts/ before the error. */
async function shotOnFailure(page: Browser['page'], name: string, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (err) {
    await screenshot(page, name).catch(() => undefined);
    throw err;
  }
}

/** Pixels of the chart's canvas in the series' stroke colour (#2563eb, give or take antialiasing). */
function strokePixels(page: Browser['page']): Promise<number> {
  return page.locator('.chart canvas').evaluate((canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 90 && data[i + 1] > 70 && data[i + 1] < 140 && data[i + 2] > 200 && data[i + 3] > 200) n++;
    return n;
  });
}

describe('dashboard (authentication off)', () => {
  it('lists the seeded entities, charts the seeded series and shows an MQTT measurement live', async () => {
    const b = await broker();
    await seedGateway(b);
    const errors: string[] = [];
    const { page } = await open(errors);
    await shotOnFailure(page, 'failure-auth-off.png', async () => {
      await page.goto(`${b.base}/`);
      expect(new URL(page.url()).pathname).toBe('/ui/');
      await page.locator('a.type-link', { hasText: 'Device' }).waitFor({ timeout: 5000 });
      await page.locator('[data-type-count="Device"]', { hasText: /^3$/ }).waitFor({ timeout: 5000 });
      await screenshot(page, 'dashboard-types.png');

      // The entity list: every seeded device, the stale pump highlighted.
      await page.locator('a.type-link', { hasText: 'Device' }).click();
      await page.locator(row(PUMP)).waitFor({ timeout: 5000 });
      for (const id of [BOILER, SPARE, PUMP]) expect(await page.locator(row(id)).count(), id).toBe(1);
      expect(await page.locator(`${row(PUMP)}.stale`).count()).toBe(1);
      expect(await page.locator(`${row(BOILER)}.stale`).count()).toBe(0);
      await page.locator('svg.map .pt').first().waitFor({ timeout: 5000 });
      expect(await page.locator('svg.map .pt').count()).toBe(3);
      await screenshot(page, 'dashboard-entities.png');

      // The entity page: the chart draws the hour of history.
      await page.locator(`${row(BOILER)} a.entity-link`).click();
      await page.locator('tr[data-attr="temperature"] button', { hasText: 'chart' }).click();
      await page.locator(`.chart[data-points="${SERIES_LENGTH}"]`).waitFor({ timeout: 5000 });
      // The series' stroke (#2563eb) is on the canvas: the path was drawn, not only the axes.
      expect(await strokePixels(page)).toBeGreaterThan(200);
      await screenshot(page, 'dashboard-entity.png');
      await page.locator('svg.map .pt').waitFor({ timeout: 5000 });

      // Live: once the page's subscription is in place, a measurement over MQTT shows without a reload.
      await page.locator('#live[data-watches="1"]').waitFor({ timeout: 10_000 });
      const client = await connectClient(`mqtt://127.0.0.1:${b.mqttPort}`);
      cleanups.push(() => endClient(client));
      const published = Date.now();
      await client.publishAsync('ngsi/default/boiler-1/attrs', JSON.stringify({ temperature: 77.7 }), { qos: 1 });
      await page.locator('tr[data-attr="temperature"] td.value', { hasText: /^77\.7\b/ }).waitFor({ timeout: 2000 });
      await page.locator(`.chart[data-points="${SERIES_LENGTH + 1}"]`).waitFor({ timeout: Math.max(1, 2000 - (Date.now() - published)) });
      expect(Date.now() - published).toBeLessThan(2000);
      await screenshot(page, 'dashboard-live.png');

      // Health: metrics, readiness, federation and subscriptions, read from the API.
      await page.goto(`${b.base}/ui/#/health`);
      // The alarm subscription matched the measurement, and its receiver is not there.
      await page.locator('table.subs tr.failed', { hasText: ALARMS }).waitFor({ timeout: 12_000 });
      expect(await page.locator('.card h2', { hasText: 'Memory' }).count()).toBe(1);
      await screenshot(page, 'dashboard-health.png');
      expect(withoutCommandMisses(errors)).toEqual([]);
    });
  });
});

describe('dashboard (authentication on, built-in identity provider)', () => {
  it('signs in, shows only the entities the subject may read, and says 403 where it may not', async () => {
    const application = defaultConfig().application;
    const b = await broker({
      application: { authentication: { ...application.authentication, enabled: true }, identityProvider: { ...application.identityProvider, enabled: true } },
    });
    addUser(b.broker, 'operator', 'operator-password', { roles: ['service-admin'] });
    const alice = addUser(b.broker, 'alice', 'alice-password');
    const token = async (username: string, password: string): Promise<string> => {
      const res = await fetch(`${b.base}/auth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password', username, password }) });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const admin = { Authorization: `Bearer ${await token('operator', 'operator-password')}` };
    await seedGateway(b, admin);
    const grant = await b.call('POST', '/ngsi-ld/v1/auth/permissions', { type: 'Permission', target: { id: BOILER }, assignee: alice, action: 'read' }, admin);
    expect(grant.status).toBe(201);

    const errors: string[] = [];
    const { page } = await open(errors);
    await shotOnFailure(page, 'failure-auth-on.png', async () => {
      // Without a token the API answers 401: the page asks for sign-in and says why.
      await page.goto(`${b.base}/ui/`);
      await page.locator('input[name="username"]').waitFor({ timeout: 5000 });
      expect(await page.locator('.login').textContent()).toContain('401');
      await screenshot(page, 'dashboard-login.png');
      await page.fill('input[name="username"]', 'alice');
      await page.fill('input[name="password"]', 'alice-password');
      await page.locator('form button', { hasText: 'Sign in' }).click();

      // Alice reads the boiler only: one type, one entity.
      await page.locator('[data-type-count="Device"]', { hasText: /^1$/ }).waitFor({ timeout: 5000 });
      expect(await page.locator('a.type-link').allTextContents()).toEqual(['Device']);
      await page.locator('a.type-link', { hasText: 'Device' }).click();
      await page.locator(row(BOILER)).waitFor({ timeout: 5000 });
      expect(await page.locator('table.entities tbody tr').count()).toBe(1);
      for (const id of [SPARE, PUMP, ROOM]) expect(await page.locator(row(id)).count(), id).toBe(0);

      // Her live subscription is hers: MQTT with her token as password, her own topic; a change
      // written by the operator reaches her page.
      await page.locator('#live[data-watches="1"]').waitFor({ timeout: 10_000 });
      const changed = await b.call('PATCH', `/ngsi-ld/v1/entities/${BOILER}/attrs`, { temperature: { type: 'Property', value: 66.6, unitCode: 'CEL' } }, admin);
      expect(changed.status).toBe(204);
      await page.locator(`${row(BOILER)} td[data-attr="temperature"]`, { hasText: '66.6' }).waitFor({ timeout: 2000 });
      await screenshot(page, 'dashboard-auth-entities.png');

      // What she may not read is a 403, shown as such.
      await page.goto(`${b.base}/ui/#/entity/${encodeURIComponent(PUMP)}`);
      await page.locator('.error[data-status="403"]').waitFor({ timeout: 5000 });
      await page.goto(`${b.base}/ui/#/health`);
      await page.locator('.card', { hasText: 'Federation' }).locator('.error[data-status="403"]').waitFor({ timeout: 5000 });
      await screenshot(page, 'dashboard-auth-health.png');
    });
    expect(errors.filter((e) => !/status of (401|403)/.test(e))).toEqual([]);
  });
});
