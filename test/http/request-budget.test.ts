// The optional request budget of each subject (application.budget.requests-per-minute): past it,
// 429 TooManyRequests with Retry-After, per subject, refilled over the minute; administrators are
// exempt; off by default, with nothing registered.

import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.js';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../helpers/auth.js';
import { parseExposition } from '../helpers/metrics.js';

const TOO_MANY_REQUESTS = 'https://uri.etsi.org/ngsi-ld/errors/TooManyRequests';
const ENTITIES = '/ngsi-ld/v1/entities?type=Thing';

let b: AuthBroker | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

async function start(requestsPerMinute: number): Promise<AuthBroker> {
  b = await startAuthBroker({ config: { application: { budget: { ...defaultConfig().application.budget, requestsPerMinute } } } });
  return b;
}

describe('request budget per subject', () => {
  it('answers 429 TooManyRequests with Retry-After past the budget, per subject, and refills over the minute', async () => {
    const broker = await start(3);
    for (let i = 0; i < 3; i++) expect((await broker.as('bob', 'GET', ENTITIES)).status).toBe(200);
    const over = await broker.as('bob', 'GET', ENTITIES);
    expect(over.status).toBe(429);
    // Three a minute: one more every 20 s.
    expect(over.headers.get('retry-after')).toBe('20');
    expect(over.json).toMatchObject({ type: TOO_MANY_REQUESTS, status: 429, title: 'Request budget exceeded' });
    // Another subject has its own budget; an administrator has none.
    expect((await broker.as('alice', 'GET', ENTITIES)).status).toBe(200);
    for (let i = 0; i < 6; i++) expect((await broker.as('root', 'GET', ENTITIES, { claims: { roles: [ADMIN_ROLE] } })).status).toBe(200);
    broker.clock.advance(19_000);
    expect((await broker.as('bob', 'GET', ENTITIES)).headers.get('retry-after')).toBe('1');
    broker.clock.advance(1_000);
    expect((await broker.as('bob', 'GET', ENTITIES)).status).toBe(200);
    expect((await broker.as('bob', 'GET', ENTITIES)).status).toBe(429);
    const m = parseExposition((await broker.request('GET', '/metrics')).text);
    expect(m.value('edgeld_request_budget_refusals_total')).toBe(3);
    expect(m.value('edgeld_request_budget_subjects')).toBe(2);
  });

  it('counts writes and refuses them before they are read', async () => {
    const broker = await start(1);
    const create = (id: string) => broker.as('bob', 'POST', '/ngsi-ld/v1/entities', { body: { id, type: 'Thing' } });
    expect((await create('urn:ngsi-ld:Thing:1')).status).toBe(201);
    expect((await create('urn:ngsi-ld:Thing:2')).status).toBe(429);
    expect((await broker.as('root', 'GET', '/ngsi-ld/v1/entities/urn:ngsi-ld:Thing:2', { claims: { roles: [ADMIN_ROLE] } })).status).toBe(404);
  });

  it('counts anonymous reads (public permissions) by client address', async () => {
    // NOTE: startAuthBroker fills in the rest of the authentication group (its key file among them).
    b = await startAuthBroker({
      config: { application: { budget: { ...defaultConfig().application.budget, requestsPerMinute: 2 }, authentication: { allowPublicPermission: true } } },
    } as Parameters<typeof startAuthBroker>[0]);
    const broker = b;
    const from = async (address: string): Promise<number> => {
      const res = await broker.broker.app.request(`http://127.0.0.1${ENTITIES}`, {}, { incoming: { socket: { remoteAddress: address } } });
      await res.arrayBuffer();
      return res.status;
    };
    expect([await from('10.3.0.1'), await from('10.3.0.1'), await from('10.3.0.1')]).toEqual([200, 200, 429]);
    expect(await from('10.3.0.2')).toBe(200);
  });

  it('is off by default: no refusal, and no budget metrics', async () => {
    const broker = await startAuthBroker();
    b = broker;
    for (let i = 0; i < 20; i++) expect((await broker.as('bob', 'GET', ENTITIES)).status).toBe(200);
    const text = (await broker.request('GET', '/metrics')).text;
    expect(text).not.toContain('edgeld_request_budget');
  });
});
