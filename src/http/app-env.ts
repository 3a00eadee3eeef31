// The Hono application's shared types and helpers, for the app and its route files: the
// dependencies, the request variables, the request id and resource registration with 405 handling.

import { randomUUID } from 'node:crypto';
import type { Context, Handler, Hono } from 'hono';
import type { Logger } from '../lib/index.js';
import { MethodNotAllowedError, type Principal } from '../ngsi/index.js';
import type { Authenticator } from '../auth/index.js';
import type { PermissionService, SubjectService } from '../permissions/index.js';
import type { ContextService } from '../jsonld/index.js';
import type { TemporalService } from '../temporal/index.js';
import type { BatchService, DiscoveryService, EntityService } from '../entities/index.js';
import type { SubscriptionService } from '../subscriptions/index.js';
import type { DeviceService } from '../devices/index.js';
import type { IdentityProvider } from '../auth/index.js';
import type { FederationStatus } from '../federation/index.js';
import type { Metrics } from './metrics.js';

export interface HttpConfig {
  bodyLimit: number;
  /** Deepest nesting of arrays and objects in a request body (above: 400 BadRequestData). */
  maxJsonDepth: number;
  limitDefault: number;
  limitMax: number;
  /** Most entities in one batch operation (above: 400 BadRequestData). */
  batchMaxSize: number;
}

export interface AppDeps {
  config: HttpConfig;
  contexts: ContextService;
  entities: EntityService;
  batch: BatchService;
  discovery: DiscoveryService;
  temporal: TemporalService;
  subscriptions: SubscriptionService;
  /** Permissions and subjects (the permission API answers 204/… when authentication is off). */
  permissions: PermissionService;
  subjects: SubjectService;
  /** The device registry (/edgeld/v1/devices). */
  devices: DeviceService;
  /** The federation drain's status (a disabled one when no upstream is configured). */
  federation: { status(): FederationStatus };
  /** Present when authentication is on. */
  auth?: Authenticator;
  log: Logger;
  /** What keeps the broker from serving (the database, the MQTT listener, the JWKS); empty when ready. */
  notReady: () => readonly string[];
  /** The Prometheus metrics; absent when metrics.enabled is off (no /metrics route). */
  metrics?: Metrics;
  /** The built-in identity provider; its routes (/auth/token, /auth/jwks, discovery) exist only with it. */
  identity?: IdentityProvider;
}

export type AppEnv = {
  Variables: {
    requestId: string | undefined; tenant: string; problem: { type: string; title: string } | undefined;
    /** The authenticated principal; unset when authentication is off. */
    principal: Principal | undefined;
  };
};
export type AppContext = Context<AppEnv>;
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type App = Hono<AppEnv>;


/**
 * The request's id: the client's (a plain token), else one drawn when first needed (a log line, an
 * error), so a request that needs none draws none.
 */
export function requestIdOf(c: AppContext): string {
  let id = c.get('requestId');
  if (id === undefined) {
    id = randomUUID();
    c.set('requestId', id);
  }
  return id;
}

/** Registers the handlers of one resource path, and 405 with `Allow` for every other method. */
export function resource(app: App, path: string, handlers: Partial<Record<Method, Handler<AppEnv>>>): void {
  const allow = Object.keys(handlers).sort().join(', ');
  for (const [method, handler] of Object.entries(handlers)) app.on(method, path, handler);
  app.all(path, () => {
    const err = new MethodNotAllowedError(`Method not allowed on ${path}`, `Allowed: ${allow}`);
    err.allow = Object.keys(handlers).sort();
    throw err;
  });
}
