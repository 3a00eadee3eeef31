// End-to-end federation to a cloud edgeld with authentication and its built-in identity provider on:
// the edge gets its token from the cloud's token endpoint as a non-admin client registered with
// scripts/idp.mjs; an entity another subject owns in the cloud is refused in the 207 of the batch
// upsert and parked, while the others reach the cloud and their later changes still flow.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/broker.js';
import { waitUntil } from '../helpers/fake-cloud.js';
import { killedAfterEach, startBrokerProcess, type BrokerProcess } from '../helpers/process.js';

const IDP = fileURLToPath(new URL('../../scripts/idp.mjs', import.meta.url));
const TAKEN = 'urn:ngsi-ld:Sensor:taken';
const FREE = ['urn:ngsi-ld:Sensor:f0', 'urn:ngsi-ld:Sensor:f1', 'urn:ngsi-ld:Sensor:f2', 'urn:ngsi-ld:Sensor:f3'];
const T0 = Date.parse('2026-05-01T10:00:00Z');
const at = (k: number): string => new Date(T0 + k * 1_000).toISOString();

const dir = tempDir('edgeld-e2e-federation-auth-');
const running = killedAfterEach();
afterAll(() => dir.remove());

async function start(env: Record<string, string>): Promise<BrokerProcess> {
  const p = await startBrokerProcess({ JOURNAL_PRUNE_SCHEDULE: '0 0 1 1 *', ...env });
  running.add(p);
  return p;
}

/** Registers a client with scripts/idp.mjs on the database of the running cloud; its secret. */
function addClient(db: string, clientId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [IDP, db, 'add-client', clientId], { timeout: 15_000 }, (err, stdout, stderr) => {
      const secret = /client secret \(shown only now\): (\S+)/.exec(stdout)?.[1];
      if (err || secret === undefined) reject(new Error(`idp add-client ${clientId} failed: ${stderr}`, { cause: err }));
      else resolve(secret);
    });
  });
}

async function tokenOf(base: string, clientId: string, secret: string): Promise<string> {
  const res = await fetch(`${base}/auth/token`, {
    method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  expect(res.status).toBe(200);
  const body: unknown = await res.json();
  return (body as { access_token: string }).access_token; // NOTE: the cloud's own token response, checked by status
}

async function call(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: any }> { // eslint-disable-line -- test convenience
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
  const res = await fetch(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

const sensor = (id: string, k: number): Record<string, unknown> => ({ id, type: 'Sensor', temperature: { type: 'Property', value: k, observedAt: at(k) } });

describe('federation to an edgeld cloud with authentication (processes)', () => {
  it('parks the entity another subject owns in the cloud (403 in the 207) and keeps forwarding the others', async () => {
    const cloudDir = join(dir.path, 'cloud');
    const cloud = await start({ STORAGE_DIR: cloudDir, APPLICATION_AUTHENTICATION_ENABLED: 'true', APPLICATION_IDENTITY_PROVIDER_ENABLED: 'true' });
    const db = join(cloudDir, 'edgeld.db');
    const edgeSecret = await addClient(db, 'edge-gw');
    const ownerSecret = await addClient(db, 'owner-app');

    // Another subject of the cloud owns one of the ids the edge will write.
    const ownerToken = await tokenOf(cloud.base, 'owner-app', ownerSecret);
    expect((await call(cloud.base, 'POST', '/ngsi-ld/v1/entities', sensor(TAKEN, -1), ownerToken)).status).toBe(201);

    const edge = await start({
      STORAGE_DIR: join(dir.path, 'edge'), FEDERATION_UPSTREAM_URL: cloud.base, FEDERATION_UPSTREAM_TOKEN_URL: `${cloud.base}/auth/token`,
      FEDERATION_UPSTREAM_CLIENT_ID: 'edge-gw', FEDERATION_UPSTREAM_CLIENT_SECRET: edgeSecret,
      FEDERATION_RETRY_BASE: '20', FEDERATION_RETRY_MAX: '200',
    });
    const status = async (): Promise<any> => (await call(edge.base, 'GET', '/ngsi-ld/v1/federation/status')).json; // eslint-disable-line -- test convenience
    const created = await call(edge.base, 'POST', '/ngsi-ld/v1/entityOperations/upsert', [TAKEN, ...FREE].map((id) => sensor(id, 0)));
    expect(created.status).toBe(201);
    await waitUntil(async () => (await status()).outboxDepth === 0, 30_000, 'first batch handled');
    let s = await status();
    expect(s.parked).toBe(1);
    expect(s.sent.entities).toBe(FREE.length);
    expect(s.lastError).toBeNull();
    const refusals = edge.stderr().split('\n').filter((l) => l.includes('its changes are parked')).map((l) => JSON.parse(l));
    expect(refusals).toHaveLength(1);
    expect(refusals[0].entityId).toBe(TAKEN);
    expect(JSON.parse(refusals[0].error).status).toBe(403);

    const edgeToken = await tokenOf(cloud.base, 'edge-gw', edgeSecret);
    for (const id of FREE) {
      const got = await call(cloud.base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(id)}`, undefined, edgeToken);
      expect(got.status, id).toBe(200);
      expect(got.json.temperature.value).toBe(0);
    }
    // The owner's entity in the cloud is untouched.
    const taken = await call(cloud.base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(TAKEN)}`, undefined, ownerToken);
    expect(taken.json.temperature.value).toBe(-1);

    // Later changes of every entity: the refused one is parked again, the others still flow.
    for (let k = 1; k <= 3; k++) {
      for (const id of [TAKEN, ...FREE]) {
        const res = await call(edge.base, 'PATCH', `/ngsi-ld/v1/entities/${encodeURIComponent(id)}/attrs`, { temperature: sensor(id, k)['temperature'] });
        expect(res.status).toBe(204);
      }
    }
    await waitUntil(async () => (await status()).outboxDepth === 0, 30_000, 'later changes handled');
    s = await status();
    expect(s.lastError).toBeNull();
    expect(s.parked).toBeGreaterThanOrEqual(2);
    for (const id of FREE) {
      const history = await call(cloud.base, 'GET', `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(id)}?attrs=temperature`, undefined, edgeToken);
      expect(history.status, id).toBe(200);
      const instances: Array<{ value: number; observedAt: string }> = history.json.temperature;
      expect(instances.map((i) => [i.value, i.observedAt]), id).toEqual([0, 1, 2, 3].map((k) => [k, at(k)]));
    }
    const after = await call(cloud.base, 'GET', `/ngsi-ld/v1/entities/${encodeURIComponent(TAKEN)}`, undefined, ownerToken);
    expect(after.json.temperature.value).toBe(-1);
  }, 90_000);
});
