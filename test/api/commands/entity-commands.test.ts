// GET /edgeld/v1/commands?entity=… (edge.md §6): the commands a device's entity declares, whether the
// caller may issue them, and the latest issued, newest first, for whoever may read the entity, with
// the same 404 and 403 as retrieving it. Real app, authentication on, tokens minted with jose.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROLE, startAuthBroker, type AuthBroker } from '../../helpers/auth.js';
import { waitUntil } from '../../helpers/fake-cloud.js';

const VALVE = 'urn:ngsi-ld:Valve:cv1';
const PLAIN = 'urn:ngsi-ld:Valve:no-device';
const ADMIN = 'urn:ngsi-ld:User:root';
const READER = 'urn:ngsi-ld:User:carol';
const WRITER = 'urn:ngsi-ld:User:dave';
const STRANGER = 'urn:ngsi-ld:User:bob';
const admin = { claims: { roles: [ADMIN_ROLE] } };
const commandsOf = (id: string, query = ''): string => `/edgeld/v1/commands?entity=${encodeURIComponent(id)}${query}`;

interface Answer {
  entityId: string; deviceId: string; commands: Array<{ name: string; expires: string }>; writable: boolean;
  recent: Array<{ id: string; name: string; value: unknown; state: string; issuedAt: string; expiresAt: string }>;
}

describe('GET /edgeld/v1/commands', () => {
  let b: AuthBroker;

  beforeAll(async () => {
    b = await startAuthBroker();
    const must = async (method: string, path: string, body: unknown): Promise<void> => {
      const res = await b.as(ADMIN, method, path, { body, ...admin });
      expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    };
    await must('POST', '/edgeld/v1/devices', { deviceId: 'cv1', entityId: VALVE, entityType: 'Valve', commands: [{ name: 'open', expires: 'PT5M' }, { name: 'reboot' }] });
    await must('POST', '/ngsi-ld/v1/entities', { id: VALVE, type: 'Valve', position: { type: 'Property', value: 0 } });
    await must('POST', '/ngsi-ld/v1/entities', { id: PLAIN, type: 'Valve' });
    await must('POST', '/ngsi-ld/v1/auth/permissions', { type: 'Permission', target: { id: VALVE }, assignee: READER, action: 'read' });
    await must('POST', '/ngsi-ld/v1/auth/permissions', { type: 'Permission', target: { id: VALVE }, assignee: WRITER, action: 'write' });
    // Three commands a second apart; the second `open` supersedes the first.
    await must('POST', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}/attrs`, { open: { type: 'Property', value: 10 } });
    b.clock.advance(1000);
    await must('POST', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}/attrs`, { reboot: { type: 'Property', value: 'now' } });
    b.clock.advance(1000);
    const byWriter = await b.as(WRITER, 'PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}/attrs/open`, { body: { type: 'Property', value: { to: 90 } } });
    expect(byWriter.status).toBe(204);
    // The dispatcher records commands as it reads the journal: wait until it has read all three.
    await waitUntil(async () => {
      const res = await b.as(ADMIN, 'GET', commandsOf(VALVE), admin);
      const recent = (res.json as Answer | undefined)?.recent ?? [];
      return recent.length === 3 && recent.some((r) => r.state === 'EXPIRED');
    }, 5000, 'three commands recorded, the first superseded');
  });
  afterAll(() => b?.close());

  it('answers the declared commands and the latest issued, newest first, with their states', async () => {
    const res = await b.as(ADMIN, 'GET', commandsOf(VALVE), admin);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = res.json as Answer;
    expect(body).toMatchObject({
      entityId: VALVE, deviceId: 'cv1', writable: true,
      commands: [{ name: 'open', expires: 'PT5M' }, { name: 'reboot', expires: 'PT1M' }],
    });
    expect(body.recent.map((r) => [r.name, r.value, r.state])).toEqual([
      ['open', { to: 90 }, 'PENDING'], ['reboot', 'now', 'PENDING'], ['open', 10, 'EXPIRED'],
    ]);
    const [latest] = body.recent;
    expect(latest!.issuedAt).toBe(new Date(b.clock.now()).toISOString());
    expect(latest!.expiresAt).toBe(new Date(b.clock.now() + 5 * 60_000).toISOString());
    expect(new Set(body.recent.map((r) => r.id)).size).toBe(3);
  });

  it('answers at most `limit` commands (default 20, 1 to 100)', async () => {
    const one = await b.as(ADMIN, 'GET', commandsOf(VALVE, '&limit=1'), admin);
    expect(one.status).toBe(200);
    expect((one.json as Answer).recent.map((r) => r.value)).toEqual([{ to: 90 }]);
    for (const limit of ['0', '101', 'x']) {
      const res = await b.as(ADMIN, 'GET', commandsOf(VALVE, `&limit=${limit}`), admin);
      expect(res.status, limit).toBe(400);
      expect(res.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/InvalidRequest');
    }
  });

  it('tells whether the caller may write the entity, to whoever may read it', async () => {
    const reader = await b.as(READER, 'GET', commandsOf(VALVE));
    expect(reader.status).toBe(200);
    expect((reader.json as Answer).writable).toBe(false);
    expect((reader.json as Answer).recent).toHaveLength(3);
    const writer = await b.as(WRITER, 'GET', commandsOf(VALVE));
    expect(writer.status).toBe(200);
    expect((writer.json as Answer).writable).toBe(true);
  });

  it('answers as retrieving the entity does to those who may not read it: 401 without a token, 403, 404 for an unknown id', async () => {
    expect((await b.as(undefined, 'GET', commandsOf(VALVE))).status).toBe(401);
    const stranger = await b.as(STRANGER, 'GET', commandsOf(VALVE));
    expect(stranger.status).toBe(403);
    expect(stranger.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/AccessDenied');
    expect((await b.as(STRANGER, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(VALVE)}`)).status).toBe(403);
    const unknown = await b.as(STRANGER, 'GET', commandsOf('urn:ngsi-ld:Valve:nowhere'));
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toBe('https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
  });

  it('answers 404 (ProblemDetails) for an entity that is no device\'s, and in another tenant', async () => {
    const plain = await b.as(ADMIN, 'GET', commandsOf(PLAIN), admin);
    expect(plain.status).toBe(404);
    expect(plain.headers.get('content-type')).toMatch(/^application\/(problem\+)?json/);
    expect(plain.json).toMatchObject({ type: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound', status: 404 });
    const elsewhere = await b.as(ADMIN, 'GET', commandsOf(VALVE), { ...admin, headers: { 'NGSILD-Tenant': 'other' } });
    expect(elsewhere.status).toBe(404);
  });

  it('refuses an unknown parameter, a missing or invalid entity id, and other methods', async () => {
    const cases: Array<[string, string]> = [
      [commandsOf(VALVE, '&type=Valve'), 'InvalidRequest'],
      ['/edgeld/v1/commands', 'BadRequestData'],
      ['/edgeld/v1/commands?entity=not%20a%20uri', 'BadRequestData'],
    ];
    for (const [path, type] of cases) {
      const res = await b.as(ADMIN, 'GET', path, admin);
      expect(res.status, path).toBe(400);
      expect(res.json.type, path).toBe(`https://uri.etsi.org/ngsi-ld/errors/${type}`);
    }
    const post = await b.as(ADMIN, 'POST', '/edgeld/v1/commands', { ...admin, body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });
});
