// The Hono application's shared types and helpers, for the app and its route files: the
// dependencies, the request variables, the request id and resource registration with 405 handling.

import { randomUUID } from 'node:crypto';
import type { Context, Handler, Hono } from 'hono';
import type { Logger, LoginLimiter, RequestBudget } from '../lib/index.js';
import { MethodNotAllowedError, type Principal } from '../ngsi/index.js';
import type { Authenticator } from '../auth/index.js';
import type { PermissionService, SubjectService } from '../permissions/index.js';
import type { ContextService } from '../jsonld/index.js';
import type { StorageReport, TemporalService } from '../temporal/index.js';
import type { BatchService, DiscoveryService, EntityService } from '../entities/index.js';
import type { SubscriptionService } from '../subscriptions/index.js';
import type { DistributedOps, RegistrationService } from '../registrations/index.js';
import type { DeviceService } from '../devices/index.js';
import type { CommandLog } from '../commands/index.js';
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

export interface DashboardOptions {
  /** The built page: index.html and assets/ (default dist/ui). */
  assetDir?: string;
  /** Path of MQTT over WebSocket on this server, where the page receives its notifications. */
  websocketPath: string;
  /** The bound TCP port of the embedded MQTT broker (notification endpoints name it); undefined while it is not running. */
  mqttPort(): number | undefined;
}

export interface AppDeps {
  config: HttpConfig;
  contexts: ContextService;
  entities: EntityService;
  batch: BatchService;
  discovery: DiscoveryService;
  temporal: TemporalService;
  subscriptions: SubscriptionService;
  /** Context source registration subscriptions (/csourceSubscriptions). */
  csourceSubscriptions: SubscriptionService;
  /** Context source registrations (/csourceRegistrations). */
  registrations: RegistrationService;
  /** Distributed operations: forwarding to the context sources of matching registrations. */
  distributed: DistributedOps;
  /** Permissions and subjects (the permission API answers 204/… when authentication is off). */
  permissions: PermissionService;
  subjects: SubjectService;
  /** The device registry (/edgeld/v1/devices). */
  devices: DeviceService;
  /** The commands of an entity that is a device's (/edgeld/v1/commands). */
  commandLog: CommandLog;
  /** The database's use of the disk (/edgeld/v1/storage): the report as of an instant, and the clock. */
  storage: { report(now: number): StorageReport; now(): number };
  /** The federation drain's status (a disabled one when no upstream is configured). */
  federation: { status(): FederationStatus };
  /** The downlink's HTTP transport (federation.downlink.endpoint); absent when notifications arrive otherwise. */
  downlink?: { receive(text: string): Promise<void>; subject: string };
  /** Present when authentication is on. */
  auth?: Authenticator;
  log: Logger;
  /** What keeps the broker from serving (the database, the MQTT listener, the JWKS); empty when ready. */
  notReady: () => readonly string[];
  /** The Prometheus metrics; absent when metrics.enabled is off (no /metrics route). */
  metrics?: Metrics;
  /** The built-in identity provider; its routes (/auth/token, /auth/jwks, discovery) exist only with it. */
  identity?: IdentityProvider;
  /** Makes logins wait after repeated failures (application.lockout); absent when off. */
  loginLimiter?: LoginLimiter;
  /** The request budget of each subject (application.budget), with authentication on; absent when off. */
  budget?: RequestBudget;
  /** The read-only LAN dashboard (/ui/, and GET / redirecting there); absent when dashboard.enabled is off. */
  dashboard?: DashboardOptions;
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

type Handlers = Partial<Record<Method, Handler<AppEnv>>>;

function methodNotAllowed(path: string, handlers: Handlers): never {
  const allow = Object.keys(handlers).sort();
  const err = new MethodNotAllowedError(`Method not allowed on ${path}`, `Allowed: ${allow.join(', ')}`);
  err.allow = allow;
  throw err;
}

/** Registers the handlers of one resource path, and 405 with `Allow` for every other method. */
export function resource(app: App, path: string, handlers: Handlers): void {
  for (const [method, handler] of Object.entries(handlers)) app.on(method, path, handler);
  app.all(path, () => methodNotAllowed(path, handlers));
}

/**
 * resource() for a path ending in `/:<param>` that has resources of their own beside it at some
 * values of that segment (`/auth/permissions/assigned` beside `/auth/permissions/:id`).
 * NOTE: Hono's RegExpRouter refuses a static segment and a parameter in the same place (a path that
 * matches both is ambiguous to it), and one such pair makes the app fall back to its trie router for
 * every request (about 3% of the CPU of a request); one route that looks at the value keeps every
 * route on the RegExpRouter.
 */
export function resourceBeside(app: App, path: string, named: Readonly<Record<string, Handlers>>, handlers: Handlers): void {
  const param = /\/:([A-Za-z]+)$/.exec(path)?.[1];
  if (param === undefined) throw new Error(`${path} does not end in a parameter`);
  const which = (c: AppContext): { at: string; handlers: Handlers } => {
    const value = c.req.param(param);
    // NOTE: own keys only: an id such as `constructor` must not find Object.prototype's.
    return value !== undefined && Object.hasOwn(named, value)
      ? { at: path.replace(`:${param}`, value), handlers: named[value] ?? {} }
      : { at: path, handlers };
  };
  const methods = new Set([...Object.keys(handlers), ...Object.values(named).flatMap((h) => Object.keys(h))]);
  for (const method of methods) {
    app.on(method, path, (c, next) => {
      const chosen = which(c);
      const handler = chosen.handlers[method as Method];
      return handler === undefined ? methodNotAllowed(chosen.at, chosen.handlers) : handler(c, next);
    });
  }
  app.all(path, (c) => {
    const chosen = which(c);
    return methodNotAllowed(chosen.at, chosen.handlers);
  });
}
