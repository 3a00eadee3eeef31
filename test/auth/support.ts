// Helpers for the token verifier tests: key pairs and tokens minted with jose, a JWKS server on
// 127.0.0.1 whose answers a test controls, a capturing logger, and bounded waits on conditions.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createFixedClock, createLogger, type Logger } from '../../src/lib/index.js';

export const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
export const ISSUER = 'https://idp.example/realms/edge';
export const AUDIENCE = 'edgeld';

export interface SigningKey {
  alg: string;
  kid: string | undefined;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** The public key as a JWK, with `kid` and `alg` when the key has them. */
  jwk: JWK;
}

export async function signingKey(alg: string, kid?: string, opts: { withAlg?: boolean } = {}): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), use: 'sig' };
  if (kid !== undefined) jwk.kid = kid;
  if (opts.withAlg ?? true) jwk.alg = alg;
  return { alg, kid, privateKey, publicKey, jwk };
}

/** A token signed by `key`, valid for an hour from `now`, for subject user-1 unless claims say otherwise. */
export async function mint(key: Pick<SigningKey, 'alg' | 'kid' | 'privateKey'>, claims: Record<string, unknown> = {}, now = T0, header: Record<string, unknown> = {}): Promise<string> {
  const iat = Math.floor(now / 1000);
  return new SignJWT({ sub: 'user-1', iss: ISSUER, aud: AUDIENCE, iat, exp: iat + 3600, ...claims })
    .setProtectedHeader({ alg: key.alg, ...(key.kid === undefined ? {} : { kid: key.kid }), ...header })
    .sign(key.privateKey);
}

export function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export type JwksAnswer = 'keys' | 'hang' | { status: number; body: string; contentType?: string };

export interface JwksServer {
  url: string;
  /** Requests received so far. */
  readonly requests: number;
  setKeys(keys: JWK[]): void;
  answer(with_: JwksAnswer): void;
  /** Resolves once `count` requests arrived; rejects after `ms`. */
  waitForRequests(count: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startJwksServer(keys: JWK[]): Promise<JwksServer> {
  let current = keys;
  let mode: JwksAnswer = 'keys';
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests += 1;
    if (mode === 'hang') return;
    if (mode === 'keys') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: current }));
      return;
    }
    res.writeHead(mode.status, { 'content-type': mode.contentType ?? 'application/json' }).end(mode.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port; // NOTE: a TCP server's address is an object
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/realms/edge/protocol/openid-connect/certs`,
    get requests() {
      return requests;
    },
    setKeys(next) {
      current = next;
    },
    answer(next) {
      mode = next;
    },
    waitForRequests: (count, ms = 5_000) => waitUntil(() => requests >= count, ms, `${count} JWKS requests`),
    close: () => (closed ??= new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    })),
  };
}

/** Resolves once `condition` holds, checking every few milliseconds; rejects after `ms`. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, ms = 5_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function capturingLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger('debug', 'auth', (line) => lines.push(line)), lines };
}

export function testClock(): ReturnType<typeof createFixedClock> {
  return createFixedClock(T0);
}
