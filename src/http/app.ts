// The Hono application: middleware order (request id + log line, tenant), the NGSI-LD routes,
// 404/405 handling and the single error handler that renders ProblemDetails.

import { Hono, type MiddlewareHandler } from 'hono';
import { authenticate } from './authenticate.js';
import { requestBudget } from './budget.js';
import {
  AccessDeniedError, BadRequestDataError, MethodNotAllowedError, ResourceNotFoundError, TooManyRequestsError, UnauthorizedError, isTenantName, type NgsiError,
  type Principal,
} from '../ngsi/index.js';
import { requestIdOf, type App, type AppDeps, type AppEnv } from './app-env.js';
import { problemResponse, toNgsiError } from './problem.js';
import { registerEntityRoutes } from './routes/entities.js';
import { registerEntityAttributeRoutes } from './routes/entity-attributes.js';
import { registerContextRoutes } from './routes/jsonld-contexts.js';
import { registerEntityOperationRoutes } from './routes/entity-operations.js';
import { registerTypeRoutes } from './routes/types.js';
import { registerAttributeRoutes } from './routes/attributes.js';
import { registerTemporalEntityRoutes } from './routes/temporal-entities.js';
import { registerEntityQueryRoutes } from './routes/entity-query.js';
import { registerSubscriptionRoutes } from './routes/subscriptions.js';
import { registerCsourceRegistrationRoutes } from './routes/csource-registrations.js';
import { registerCsourceSubscriptionRoutes } from './routes/csource-subscriptions.js';
import { registerIdentityRoutes } from './routes/identity.js';
import { registerPermissionRoutes } from './routes/permissions.js';
import { registerDeviceRoutes } from './routes/devices.js';
import { registerCommandRoutes } from './routes/commands.js';
import { registerFederationRoutes } from './routes/federation.js';
import { registerStorageRoutes } from './routes/storage.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerDashboardRoutes } from './routes/dashboard.js';
import { routeLabelOf } from './route-label.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Longest error title in a request log line: a title may quote the input at fault, of any length. */
const LOG_TITLE_MAX = 200;
const clipTitle = (title: string): string => (title.length > LOG_TITLE_MAX ? `${title.slice(0, LOG_TITLE_MAX)}…` : title);

/**
 * Behaviour §8 and RFC 9110 §15.5.2: a request without a token that public permissions do not
 * allow is answered 401 (with `WWW-Authenticate: Bearer`), not 403: a token may well allow it.
 */
function asAnonymous(err: NgsiError, principal: Principal | undefined): NgsiError {
  if (!(err instanceof AccessDeniedError) || principal === undefined || principal.subject !== undefined) return err;
  return new UnauthorizedError('Authentication required', 'Public permissions do not allow this request; it needs an access token (Authorization: Bearer <token>)');
}

export function createApp(deps: AppDeps): App {
  // A trailing slash names the same resource (`POST /entities/` is `POST /entities`).
  const app = new Hono<AppEnv>({ strict: false });
  const { log } = deps;

  // NOTE: both middlewares return next() itself when they have nothing to do after it: an async
  // wrapper per request and layer is measurable on the write path.
  app.use('*', (c, next) => {
    // A client's request id is kept only when it is a plain token: it goes into logs and headers.
    const given = c.req.header('x-request-id');
    if (given !== undefined && REQUEST_ID.test(given)) c.set('requestId', given);
    const { metrics } = deps;
    const logs = log.isEnabled('info');
    if (!logs && !metrics) return next();
    const started = performance.now();
    // NOTE: the request id goes out on error responses only (see onError): touching the headers of
    // an already built response forces a slow copy of it in the Node adapter.
    return next().then(() => {
      metrics?.observeRequest(c.req.method, routeLabelOf(c), c.res.status, (performance.now() - started) / 1000);
      if (!logs) return;
      // An error answer names its ProblemDetails type and title, so a 4xx says why in the log.
      const problem = c.get('problem');
      log.info('request', {
        requestId: requestIdOf(c), method: c.req.method, path: c.req.path, status: c.res.status,
        ...(problem ? { type: problem.type, title: clipTitle(problem.title) } : {}),
        ms: Math.round((performance.now() - started) * 100) / 100,
      });
    });
  });

  // NGSI-LD §6.3.14: the NGSILD-Tenant header selects a tenant; the default tenant when absent.
  const tenantOf: MiddlewareHandler<AppEnv> = (c, next) => {
    // An empty path segment (`/entities//attrs`) is an id left out, not another resource.
    if (c.req.path.includes('//')) throw new BadRequestDataError('Empty path segment', `An id is missing in ${c.req.path}`);
    const tenant = c.req.header('ngsild-tenant');
    if (tenant === undefined) {
      c.set('tenant', '');
      return next();
    }
    if (!isTenantName(tenant)) throw new BadRequestDataError('Invalid NGSILD-Tenant header', 'Letters, digits, _ and -, at most 64');
    c.set('tenant', tenant);
    // NGSI-LD §6.3.14: the tenant is echoed (rare enough for the slower header copy).
    return next().then(() => {
      c.res.headers.set('NGSILD-Tenant', tenant);
    });
  };
  app.use('/ngsi-ld/*', tenantOf);
  app.use('/auth/permissions/*', tenantOf);
  app.use('/auth/permissions', tenantOf);
  app.use('/edgeld/*', tenantOf);
  if (deps.auth) {
    const auth = authenticate(deps.auth);
    app.use('/ngsi-ld/*', auth);
    app.use('/auth/permissions/*', auth);
    app.use('/auth/permissions', auth);
    app.use('/edgeld/*', auth);
    // After authentication: the budget is the subject's.
    if (deps.budget) {
      const budget = requestBudget(deps.budget);
      for (const path of ['/ngsi-ld/*', '/auth/permissions/*', '/auth/permissions', '/edgeld/*']) app.use(path, budget);
    }
  }

  registerHealthRoutes(app, deps);

  registerEntityRoutes(app, deps);
  registerEntityAttributeRoutes(app, deps);
  registerContextRoutes(app, deps);
  registerEntityQueryRoutes(app, deps);
  registerEntityOperationRoutes(app, deps);
  registerTypeRoutes(app, deps);
  registerAttributeRoutes(app, deps);
  registerTemporalEntityRoutes(app, deps);
  registerSubscriptionRoutes(app, deps);
  registerCsourceRegistrationRoutes(app, deps);
  registerCsourceSubscriptionRoutes(app, deps);
  if (deps.identity) registerIdentityRoutes(app, deps.identity, deps.loginLimiter);
  registerPermissionRoutes(app, deps);
  registerDeviceRoutes(app, deps);
  registerCommandRoutes(app, deps);
  registerFederationRoutes(app, deps);
  registerStorageRoutes(app, deps);
  if (deps.dashboard) registerDashboardRoutes(app, deps.dashboard);

  app.notFound((c) => {
    const err = new ResourceNotFoundError('No such resource', c.req.path);
    c.set('problem', { type: err.errorType, title: err.message });
    return problemResponse(err);
  });
  app.onError((err, c) => {
    const requestId = requestIdOf(c);
    const ngsi = asAnonymous(toNgsiError(err, log, requestId), c.get('principal'));
    c.set('problem', { type: ngsi.errorType, title: ngsi.message });
    const headers: Record<string, string> = { 'X-Request-Id': requestId };
    if (ngsi instanceof MethodNotAllowedError) headers['Allow'] = ngsi.allow.join(', ');
    if (ngsi instanceof TooManyRequestsError) headers['Retry-After'] = String(ngsi.retryAfter);
    return problemResponse(ngsi, headers);
  });
  return app;
}
