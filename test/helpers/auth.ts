// A broker with authentication on: an ES256 key pair whose public key is the broker's key file, and
// tokens minted with jose for any claims, valid at the test clock's time.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import type { Logger } from '../../src/lib/index.js';
import { startTestBroker, type ConfigPatch, type TestBroker, type TestResponse } from './broker.js';

export const ADMIN_ROLE = 'service-admin';

export interface AuthBroker extends TestBroker {
  /** A token for `sub` with realm roles and groups (and any other claims), valid for an hour from the test clock. */
  token(sub: string, claims?: { roles?: string[]; groups?: string[]; [claim: string]: unknown }): Promise<string>;
  /** A request with `Authorization: Bearer <token of sub>` (undefined: no header). */
  as(sub: string | undefined, method: string, path: string, init?: { body?: unknown; headers?: Record<string, string>; claims?: Parameters<AuthBroker['token']>[1] }): Promise<TestResponse>;
}

export async function startAuthBroker(opts: { config?: ConfigPatch; dbPath?: string; log?: Logger } = {}): Promise<AuthBroker> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const dir = mkdtempSync(join(tmpdir(), 'edgeld-auth-'));
  const keyFile = join(dir, 'key.pem');
  writeFileSync(keyFile, await exportSPKI(publicKey));
  const patch: ConfigPatch = { ...opts.config };
  patch.application = {
    ...opts.config?.application,
    authentication: { ...defaultAuth(), enabled: true, publicKeyFile: keyFile, ...opts.config?.application?.authentication },
  };
  const b = await startTestBroker({ config: patch, ...(opts.dbPath ? { dbPath: opts.dbPath } : {}), ...(opts.log ? { log: opts.log } : {}) });
  const token = (sub: string, claims: Parameters<AuthBroker['token']>[1] = {}): Promise<string> => mint(privateKey, b.clock.now(), sub, claims);
  return {
    ...b,
    token,
    async as(sub, method, path, init = {}) {
      const headers = { ...init.headers };
      if (sub !== undefined) headers['Authorization'] = `Bearer ${await token(sub, init.claims)}`;
      return b.request(method, path, { ...(init.body !== undefined ? { body: init.body } : {}), headers });
    },
    close: async () => {
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function defaultAuth() {
  return {
    enabled: true, jwksUri: '', publicKeyFile: '', issuer: '', audience: '', clockTolerance: 30, jwksRefreshInterval: 30_000, jwksTimeout: 5_000,
    adminRole: ADMIN_ROLE, claimsPaths: 'realm_access.roles,groups', allowPublicPermission: false,
  };
}

export async function mint(key: CryptoKey, now: number, sub: string, claims: Parameters<AuthBroker['token']>[1] = {}): Promise<string> {
  const { roles, groups, ...rest } = claims;
  const iat = Math.floor(now / 1000);
  return new SignJWT({ ...rest, ...(roles ? { realm_access: { roles } } : {}), ...(groups ? { groups } : {}) })
    .setProtectedHeader({ alg: 'ES256' }).setSubject(sub).setIssuedAt(iat).setExpirationTime(iat + 3600).sign(key);
}
