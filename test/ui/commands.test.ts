// The commands card in a real headless Chromium against a real broker (edge.md §6): the page of a
// device's entity shows its command; Send issues it, the device (an mqtt client) receives it on its
// cmd topic and answers OK on cmdexe, and the card shows OK without a reload. With authentication on,
// a subject that may only read sees the card without Send, and a refused write shows the broker's error.

import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import { addUser } from '../helpers/identity.js';
import { connectClient, endClient } from '../helpers/mqtt.js';
import { ROOM, VALVE, VALVE_DEVICE, seedGateway, seedValve } from './seed.js';
import { screenshot, useUiHarness, withoutCommandMisses, type Browser, type UiBroker } from './support.js';

const ui = useUiHarness();
const { cleanups, open, broker } = ui;

/** Runs the steps; when one fails, the page as it was goes to test-artifacts/ before the error. */
async function shotOnFailure(page: Browser['page'], name: string, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (err) {
    await screenshot(page, name).catch(() => undefined);
    throw err;
  }
}

const entityPage = (b: UiBroker, id: string): string => `${b.base}/ui/#/entity/${encodeURIComponent(id)}`;
const OPEN = '.card.commands tr[data-command="open"]';

describe('commands card (authentication off)', () => {
  it('issues a command with Send; the device receives it, answers OK, and the card shows OK without a reload', async () => {
    const b = await broker();
    await seedValve(b);
    await seedGateway(b);
    // The device: receives its commands and answers each OK.
    const cmdTopic = `ngsi/default/${VALVE_DEVICE}/cmd`;
    const device = await connectClient(`mqtt://127.0.0.1:${b.mqttPort}`, { clientId: VALVE_DEVICE });
    cleanups.push(() => endClient(device));
    const received: Array<{ topic: string; id: string; name: string; value: unknown }> = [];
    device.on('message', (topic, payload) => {
      const cmd = JSON.parse(payload.toString()) as { id: string; name: string; value: unknown };
      received.push({ topic, ...cmd });
      void device.publishAsync(`ngsi/default/${VALVE_DEVICE}/cmdexe`, JSON.stringify({ id: cmd.id, status: 'OK', info: { position: 100 } }), { qos: 1 });
    });
    await device.subscribeAsync(cmdTopic, { qos: 1 });

    const errors: string[] = [];
    const { page } = await open(errors);
    await shotOnFailure(page, 'failure-commands-auth-off.png', async () => {
      await page.goto(entityPage(b, VALVE));
      await page.locator(OPEN).waitFor({ timeout: 5000 });
      expect(await page.locator('.card.commands').textContent()).toContain(`device ${VALVE_DEVICE}`);
      expect(await page.locator('.card.commands').textContent()).toContain('No command issued yet.');
      await page.locator('#live[data-watches="1"]').waitFor({ timeout: 10_000 });
      // A mark on the window: it is still there after the answer, so nothing reloaded the page.
      await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));

      // Neither JSON nor one word: refused on the page, nothing sent.
      await page.fill(`${OPEN} input.command-value`, 'half open');
      await page.locator(`${OPEN} button`, { hasText: 'Send' }).click();
      await page.locator(`${OPEN} .send-note .error`, { hasText: 'Not JSON' }).waitFor({ timeout: 2000 });

      // A bare word is a string.
      await page.fill(`${OPEN} input.command-value`, 'full');
      await page.locator(`${OPEN} button`, { hasText: 'Send' }).click();
      await waitUntil(() => received.length > 0, 5000, 'the command at the device');
      expect(received).toEqual([expect.objectContaining({ topic: cmdTopic, name: 'open', value: 'full' })]);
      await page.locator(`${OPEN} td.status [data-state="OK"]`).waitFor({ timeout: 5000 });
      await page.locator(`${OPEN} td.info`, { hasText: 'position' }).waitFor({ timeout: 5000 });
      await page.locator(`.card.commands table.recent tr[data-id="${received[0]!.id}"] [data-state="OK"]`).waitFor({ timeout: 5000 });
      expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
      await screenshot(page, 'dashboard-commands.png');

      // The broker has the same story: the entity's status and the command's row.
      const entity = await b.call('GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`);
      expect((entity.json as { open_status?: { value?: unknown } }).open_status?.value).toBe('OK');
      // JSON is JSON: a second command, an object this time (PATCH of the attribute that now exists).
      await page.fill(`${OPEN} input.command-value`, '{"to": 50}');
      await page.locator(`${OPEN} button`, { hasText: 'Send' }).click();
      await waitUntil(() => received.length > 1, 5000, 'the second command at the device');
      expect(received[1]!.value).toEqual({ to: 50 });
      await page.locator('.card.commands table.recent tbody tr').nth(1).waitFor({ timeout: 5000 });
      await page.locator('.card.commands table.recent tbody tr').first().locator('[data-state="OK"]').waitFor({ timeout: 5000 });

      // An entity that is no device's has no card.
      const asked = page.waitForResponse((r) => r.url().includes('/edgeld/v1/commands?'));
      await page.goto(entityPage(b, ROOM));
      expect((await asked).status()).toBe(404);
      await page.locator('tr[data-attr="name"]').waitFor({ timeout: 5000 });
      expect(await page.locator('.card.commands').count()).toBe(0);
      expect(await page.locator('.error').count()).toBe(0);
    });
    expect(withoutCommandMisses(errors)).toEqual([]);
  });
});

describe('commands card (authentication on, built-in identity provider)', () => {
  it('shows the card without Send to a reader, and the broker\'s refusal to a writer who lost the right', async () => {
    const application = defaultConfig().application;
    const b = await broker({
      application: { authentication: { ...application.authentication, enabled: true }, identityProvider: { ...application.identityProvider, enabled: true } },
    });
    addUser(b.broker, 'operator', 'operator-password', { roles: ['service-admin'] });
    const alice = addUser(b.broker, 'alice', 'alice-password');
    const dave = addUser(b.broker, 'dave', 'dave-password');
    const token = async (username: string, password: string): Promise<string> => {
      const res = await fetch(`${b.base}/auth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password', username, password }) });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const admin = { Authorization: `Bearer ${await token('operator', 'operator-password')}` };
    await seedValve(b, admin);
    const grant = async (assignee: string, action: string): Promise<string> => {
      const res = await b.call('POST', '/ngsi-ld/v1/auth/permissions', { type: 'Permission', target: { id: VALVE }, assignee, action }, admin);
      expect(res.status).toBe(201);
      return res.headers.get('location') ?? '';
    };
    await grant(alice, 'read');
    const daveWrites = await grant(dave, 'write');

    const signIn = async (page: Browser['page'], username: string, password: string): Promise<void> => {
      await page.goto(entityPage(b, VALVE));
      await page.locator('input[name="username"]').waitFor({ timeout: 5000 });
      await page.fill('input[name="username"]', username);
      await page.fill('input[name="password"]', password);
      await page.locator('form button', { hasText: 'Sign in' }).click();
      await page.locator(OPEN).waitFor({ timeout: 5000 });
    };

    const errors: string[] = [];
    const reader = (await open(errors)).page;
    await shotOnFailure(reader, 'failure-commands-reader.png', async () => {
      await signIn(reader, 'alice', 'alice-password');
      expect(await reader.locator('.card.commands button', { hasText: 'Send' }).count()).toBe(0);
      expect(await reader.locator('.card.commands input.command-value').count()).toBe(0);
      expect(await reader.locator(`${OPEN} td`).first().textContent()).toBe('open');
      await screenshot(reader, 'dashboard-commands-reader.png');
    });

    const writer = (await open(errors)).page;
    await shotOnFailure(writer, 'failure-commands-writer.png', async () => {
      await signIn(writer, 'dave', 'dave-password');
      await writer.locator(`${OPEN} button`, { hasText: 'Send' }).waitFor({ timeout: 5000 });
      // The right goes while the page is open: the broker refuses the write and the card says why.
      expect((await b.call('DELETE', daveWrites, undefined, admin)).status).toBe(204);
      await writer.fill(`${OPEN} input.command-value`, 'true');
      await writer.locator(`${OPEN} button`, { hasText: 'Send' }).click();
      const refused = writer.locator(`${OPEN} .send-note .error[data-status="403"]`);
      await refused.waitFor({ timeout: 5000 });
      expect(await refused.textContent()).toContain('No write permission');
    });
    expect(errors.filter((e) => !/status of (401|403)/.test(e))).toEqual([]);
  });
});
