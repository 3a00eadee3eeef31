// Test helpers for the built-in identity provider: a config that enables it, users and clients put
// straight into the store, token requests as forms, and verification against the served JWKS.

import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { defaultConfig, type Config } from '../../src/config/index.js';
import { hashSecret } from '../../src/auth/index.js';
import type { Broker } from '../../src/server.js';
import { T0, type ConfigPatch, type TestBroker, type TestResponse } from './broker.js';

type IdpOptions = Partial<Config['application']['identityProvider']>;

/** The config patch that enables the identity provider (and keeps other application options). */
export function idpConfig(options: IdpOptions = {}, server: Partial<Config['server']> = {}): ConfigPatch {
  const application = defaultConfig().application;
  return { application: { ...application, identityProvider: { ...application.identityProvider, enabled: true, ...options } }, server };
}

export function addUser(
  broker: Broker, username: string, password: string, extra: { roles?: string[]; groups?: string[]; givenName?: string; familyName?: string } = {},
): string {
  const sub = `urn:ngsi-ld:User:${username}`;
  broker.store.identity.insertUser({ username, sub, passwordHash: hashSecret(password), roles: [], groups: [], createdAt: T0, ...extra });
  return sub;
}

export function addClient(broker: Broker, clientId: string, secret: string, extra: { roles?: string[]; groups?: string[] } = {}): string {
  const sub = `urn:ngsi-ld:Client:${clientId}`;
  broker.store.identity.insertClient({ clientId, sub, secretHash: hashSecret(secret), roles: [], groups: [], createdAt: T0, ...extra });
  return sub;
}

/** POST /auth/token with a form body; string pairs keep their order and may repeat. */
export function requestToken(b: TestBroker, fields: Record<string, string> | Array<[string, string]>, headers: Record<string, string> = {}): Promise<TestResponse> {
  const raw = new URLSearchParams(fields).toString();
  return b.request('POST', '/auth/token', { raw, headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers } });
}

export function basic(clientId: string, secret: string): string {
  const enc = (s: string): string => encodeURIComponent(s);
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

/** Verifies a token with jose against the JWKS the broker serves, at the broker's clock. */
export async function verifyServed(b: TestBroker, token: string): Promise<{ payload: JWTPayload; header: Record<string, unknown> }> {
  const jwks = await b.request('GET', '/auth/jwks');
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks.json), { currentDate: new Date(b.clock.now()) });
  return { payload, header: { ...protectedHeader } };
}
