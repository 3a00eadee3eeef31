// End-to-end, the real process started under umask 022 (outside systemd): the storage directory it
// creates is 0700 and the database files 0600; a database left readable by others is made private
// with a warning; a TLS private key readable by others stops the start (exit code 2) naming the file
// and the fix. With the built-in identity provider, a token without exp or of another issuer is
// refused, and a user removed with scripts/idp.mjs while the broker runs loses its tokens in seconds.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SignJWT, importJWK, type JWK } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../auth/support.js';
import { tempDir } from '../helpers/broker.js';
import { killedAfterEach, startBrokerProcess, within, type BrokerProcess } from '../helpers/process.js';

const dir = tempDir('edgeld-e2e-secrets-');
afterAll(() => dir.remove());
const running = killedAfterEach();

const IDP_SCRIPT = fileURLToPath(new URL('../../scripts/idp.mjs', import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
const DB_FILES = ['edgeld.db', 'edgeld.db-wal', 'edgeld.db-shm', 'edgeld.db.lock', 'edgeld.db.running'];
const modeOf = (path: string): string => `0${(statSync(path).mode & 0o777).toString(8)}`;

async function start(env: Record<string, string>): Promise<BrokerProcess> {
  const p = await startBrokerProcess(env, 15_000, { umask: '022' });
  running.add(p);
  return p;
}

async function stop(p: BrokerProcess): Promise<void> {
  p.child.kill('SIGTERM');
  expect(await within(p.exited, 10_000, 'SIGTERM')).toBe(0);
  running.delete(p);
}

function logLines(p: BrokerProcess): Array<Record<string, unknown>> {
  return p.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('files at rest', () => {
  it('creates the storage directory 0700 and the database files 0600, under umask 022', async () => {
    const data = `${dir.path}/fresh/data`;
    await start({ STORAGE_DIR: data, APPLICATION_AUTHENTICATION_ENABLED: 'true', APPLICATION_IDENTITY_PROVIDER_ENABLED: 'true' });
    expect(modeOf(data)).toBe('0700');
    for (const file of DB_FILES) {
      expect(existsSync(`${data}/${file}`), file).toBe(true);
      expect(modeOf(`${data}/${file}`), file).toBe('0600');
    }
  });

  it('makes a database left readable by others private at start, with a warning naming the file', async () => {
    const data = `${dir.path}/loose/data`;
    await stop(await start({ STORAGE_DIR: data }));
    chmodSync(`${data}/edgeld.db`, 0o644);
    chmodSync(`${data}/edgeld.db.lock`, 0o644);
    const p = await start({ STORAGE_DIR: data });
    for (const file of DB_FILES) expect(modeOf(`${data}/${file}`), file).toBe('0600');
    const warnings = logLines(p).filter((l) => l['msg'] === 'a store file was readable by other users: made private');
    expect(warnings.map((l) => [l['level'], l['file'], l['was']])).toEqual([
      ['warn', `${data}/edgeld.db.lock`, '0644'], ['warn', `${data}/edgeld.db`, '0644'],
    ]);
  });

  it('refuses to start with a TLS private key readable by others (exit code 2), naming the file and the fix', async () => {
    const key = `${dir.path}/tls-key.pem`;
    copyFileSync(fixture('key.pem'), key);
    chmodSync(key, 0o644);
    const env = { STORAGE_DIR: `${dir.path}/tls/data`, MQTT_TLS_PORT: '0', MQTT_TLS_KEY: key, MQTT_TLS_CERT: fixture('cert.pem') };
    const refused = await startBrokerProcess(env, 15_000, { umask: '022' }).then(
      (p) => {
        running.add(p);
        return undefined;
      },
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(refused).toBeDefined();
    expect(refused).toMatch(/exited \(2\)/);
    expect(refused).toContain(`mqtt.tls-key (env MQTT_TLS_KEY): ${key} is a private key readable by other users (mode 0644)`);
    expect(refused).toContain(`chmod 600 ${key}`);
    chmodSync(key, 0o600);
    await start(env);
  });
});

describe('tokens of the built-in identity provider', () => {
  const ENTITIES = '/ngsi-ld/v1/entities?type=Building';

  function idp(db: string, ...args: string[]): string {
    const run = spawnSync(process.execPath, [IDP_SCRIPT, db, ...args], { input: 'alice-password\n', encoding: 'utf8', timeout: 15_000 });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout;
  }

  async function get(p: BrokerProcess, token: string): Promise<{ status: number; detail: unknown }> {
    const res = await fetch(`${p.base}${ENTITIES}`, { headers: { Authorization: `Bearer ${token}` } });
    const body = (await res.json().catch(() => ({}))) as { detail?: unknown };
    return { status: res.status, detail: body.detail };
  }

  /** A token signed with the provider's private key read from the database file, as its reader could. */
  async function forged(db: string, claims: Record<string, unknown>): Promise<string> {
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    let row: { kid: string; alg: string; private_jwk: string } | undefined;
    try {
      row = conn.prepare<[], { kid: string; alg: string; private_jwk: string }>('SELECT kid, alg, private_jwk FROM idp_signing_keys LIMIT 1').get();
    } finally {
      conn.close();
    }
    if (row === undefined) throw new Error('no signing key in the database');
    const key = await importJWK(JSON.parse(row.private_jwk) as JWK, row.alg); // NOTE: stored as JWK JSON text
    return new SignJWT({ iat: Math.floor(Date.now() / 1000), ...claims }).setProtectedHeader({ alg: row.alg, kid: row.kid }).sign(key);
  }

  it('refuses a token without exp or of another issuer, and a removed user\'s token within seconds', async () => {
    const data = `${dir.path}/idp/data`;
    const db = `${data}/edgeld.db`;
    const p = await start({ STORAGE_DIR: data, APPLICATION_AUTHENTICATION_ENABLED: 'true', APPLICATION_IDENTITY_PROVIDER_ENABLED: 'true' });
    const sub = /sub (\S+)\)/.exec(idp(db, 'add-user', 'alice', '--password-stdin'))?.[1];
    expect(sub).toBeDefined();
    const grant = await fetch(`${p.base}/auth/token`, {
      method: 'POST', body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'alice-password' }),
    });
    expect(grant.status).toBe(200);
    const token = ((await grant.json()) as { access_token: string }).access_token;
    expect((await get(p, token)).status).toBe(200);

    const { issuer } = (await (await fetch(`${p.base}/.well-known/openid-configuration`)).json()) as { issuer: string };
    const exp = Math.floor(Date.now() / 1000) + 600;
    expect((await get(p, await forged(db, { sub, iss: issuer, exp }))).status).toBe(200);
    expect(await get(p, await forged(db, { sub, iss: issuer }))).toEqual({ status: 401, detail: expect.stringMatching(/no expiry \(exp\)/) });
    expect(await get(p, await forged(db, { sub, iss: 'https://elsewhere.example', exp }))).toEqual({ status: 401, detail: expect.stringMatching(/wrong issuer/) });

    idp(db, 'remove-user', 'alice');
    const removedAt = Date.now();
    await waitUntil(async () => (await get(p, token)).status === 401, 5_000, 'the removed user\'s token to be refused');
    expect(Date.now() - removedAt).toBeLessThan(5_000);
    expect((await get(p, token)).detail).toMatch(/no longer exists/);
  });
});
