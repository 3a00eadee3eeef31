// scripts/idp.mjs against the database of a running broker: users and clients it adds get tokens at
// once, its hashes are the broker's, and removing them refuses their next token.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { idpConfig, requestToken, verifyServed } from '../helpers/identity.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/idp.mjs', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runScript(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [SCRIPT, ...args], { timeout: 15_000 }, (err, stdout, stderr) => {
      const code = err && typeof err.code === 'number' ? err.code : err ? 1 : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

let tmp: ReturnType<typeof tempDir>;
let db: string;
let b: TestBroker;
beforeEach(async () => {
  tmp = tempDir();
  db = join(tmp.path, 'edgeld.db');
  b = await startTestBroker({ config: idpConfig(), dbPath: db });
});
afterEach(async () => {
  await b.close();
  tmp.remove();
});

describe('scripts/idp.mjs', () => {
  it('adds a user who can get a token from the running broker at once', async () => {
    const added = await runScript(
      [db, 'add-user', 'alice', '--password-stdin', '--role', 'operator', '--role', 'viewer', '--group', 'site-a', '--given-name', 'Alice', '--family-name', 'Liddell'],
      'correct horse battery\n',
    );
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const sub = /sub (urn:ngsi-ld:User:[0-9a-f-]{36})/.exec(added.stdout)?.[1];
    expect(sub).toBeDefined();
    const res = await requestToken(b, { grant_type: 'password', username: 'alice', password: 'correct horse battery' });
    expect(res.status).toBe(200);
    const { payload } = await verifyServed(b, res.json.access_token);
    expect(payload).toMatchObject({
      sub, preferred_username: 'alice', given_name: 'Alice', family_name: 'Liddell', realm_access: { roles: ['operator', 'viewer'] }, groups: ['site-a'],
    });
  });

  it('adds a client, printing its secret once, which then gets a client credentials token', async () => {
    const added = await runScript([db, 'add-client', 'sensor-gw', '--role', 'writer', '--sub', 'urn:ngsi-ld:Device:gw-1']);
    expect(added.code).toBe(0);
    const secret = /client secret \(shown only now\): (\S+)/.exec(added.stdout)?.[1];
    expect(secret).toMatch(/^[\w-]{43}$/);
    const res = await requestToken(b, { grant_type: 'client_credentials', client_id: 'sensor-gw', client_secret: secret! });
    expect(res.status).toBe(200);
    expect((await verifyServed(b, res.json.access_token)).payload).toMatchObject({ sub: 'urn:ngsi-ld:Device:gw-1', realm_access: { roles: ['writer'] } });
    expect(b.broker.store.identity.findClient('sensor-gw')?.secretHash).not.toContain(secret!);
  });

  it('lists users and clients, and removes them so that they get no more tokens', async () => {
    await runScript([db, 'add-user', 'bob', '--password-stdin'], 'long enough\n');
    await runScript([db, 'add-client', 'cli']);
    const listed = await runScript([db, 'list']);
    expect(listed.stdout).toMatch(/^user\tbob\turn:ngsi-ld:User:/m);
    expect(listed.stdout).toMatch(/^client\tcli\turn:ngsi-ld:Client:/m);
    expect(listed.stdout).not.toMatch(/scrypt/);
    expect((await runScript([db, 'remove-user', 'bob'])).code).toBe(0);
    expect((await runScript([db, 'remove-client', 'cli'])).code).toBe(0);
    expect((await runScript([db, 'list'])).stdout).toBe('');
    const res = await requestToken(b, { grant_type: 'password', username: 'bob', password: 'long enough' });
    expect(res.json.error).toBe('invalid_grant');
    const again = await runScript([db, 'remove-user', 'bob']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no user bob/);
  });

  it('refuses a taken username, a short password, an unknown option and a missing database', async () => {
    await runScript([db, 'add-user', 'carol', '--password-stdin'], 'long enough\n');
    const taken = await runScript([db, 'add-user', 'carol', '--password-stdin'], 'long enough\n');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already exists/);
    expect((await runScript([db, 'add-user', 'dave', '--password-stdin'], 'short\n')).stderr).toMatch(/shorter than 8/);
    expect((await runScript([db, 'add-client', 'x', '--password-stdin'])).code).toBe(2);
    expect((await runScript([join(tmp.path, 'none.db'), 'list'])).stderr).toMatch(/does not exist/);
    expect(b.broker.store.identity.findUser('dave')).toBeUndefined();
  });

  it('refuses to add a user without --password-stdin when stdin is no terminal', async () => {
    const res = await runScript([db, 'add-user', 'erin']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--password-stdin/);
  });
});
