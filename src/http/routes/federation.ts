// Route of the federation status (GET /ngsi-ld/v1/federation/status, edge spec §4): outbox depth,
// oldest pending change, last success and error, parked and dropped changes, what was sent, and the
// gateway's registration upstream, and the downlink from the cloud (edge spec §7).

import { AccessDeniedError, formatDateTime, type Json } from '../../ngsi/index.js';
import type { DownlinkStatus, FederationStatus, RegistrationStatus } from '../../federation/index.js';
import { resource, type App, type AppDeps } from '../app-env.js';
import { readParams } from '../params.js';
import { readBytes } from '../body.js';
import { BASE, noContent, sendJson } from '../respond.js';
import { actorOf } from '../request-context.js';

const iso = (ms: number | undefined): Json => (ms === undefined ? null : formatDateTime(ms));

const problem = (e: { at: number; message: string } | undefined): Json => (e === undefined ? null : { at: formatDateTime(e.at), message: e.message });

function renderRegistration(r: RegistrationStatus | undefined): Json {
  if (r === undefined) return null;
  return {
    id: r.id, endpoint: r.endpoint, mode: r.mode, registered: r.registered, expiresAt: iso(r.expiresAt), types: r.types,
    lastSuccess: iso(r.lastSuccess), lastError: problem(r.lastError), failures: r.failures,
  };
}

function renderDownlink(d: DownlinkStatus | undefined): Json {
  if (d === undefined) return null;
  const sub = d.subscription;
  return {
    transport: d.transport, connected: d.connected, broker: d.broker,
    subscription: { id: sub.id, topic: sub.topic, subscribed: sub.subscribed, expiresAt: iso(sub.expiresAt), failures: sub.failures, lastError: problem(sub.lastError) },
    lastNotification: iso(d.lastNotification), applied: d.applied, refused: { ...d.refused }, connectionFailures: d.connectionFailures, lastError: problem(d.lastError),
  };
}

function render(s: FederationStatus): Json {
  return {
    enabled: s.enabled, url: s.url, outboxDepth: s.outboxDepth, oldestPending: iso(s.oldestPending), lastSuccess: iso(s.lastSuccess),
    lastError: problem(s.lastError), parked: s.parked, dropped: s.dropped, sent: { entities: s.sent.entities, instances: s.sent.instances },
    registration: renderRegistration(s.registration), downlink: renderDownlink(s.downlink),
  };
}

/** The downlink's notifications posted by the cloud broker (edge spec §7, federation.downlink.endpoint). */
function registerDownlinkRoute(app: App, deps: AppDeps, downlink: NonNullable<AppDeps['downlink']>): void {
  resource(app, '/edgeld/v1/downlink', {
    POST: async (c) => {
      readParams(c.req.url, []);
      const actor = actorOf(c);
      if (!actor.admin && (downlink.subject === '' || actor.subject !== downlink.subject)) {
        throw new AccessDeniedError('Access denied', 'Downlink notifications come from the subject of federation.downlink.endpoint-subject');
      }
      // Applied or refused, it is answered 204: a refusal is counted here, the cloud has nothing to retry.
      await downlink.receive(await readBytes(c.req.raw, deps.config.bodyLimit));
      return noContent();
    },
  });
}

export function registerFederationRoutes(app: App, deps: AppDeps): void {
  if (deps.downlink !== undefined) registerDownlinkRoute(app, deps, deps.downlink);
  resource(app, `${BASE}/federation/status`, {
    GET: (c) => {
      readParams(c.req.url, []);
      // The upstream URL and the gateway's backlog are an operator's business.
      if (!actorOf(c).admin) throw new AccessDeniedError('Access denied', 'The federation status needs the admin role');
      return sendJson(render(deps.federation.status()));
    },
  });
}
