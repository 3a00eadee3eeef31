// The subscription resources' shared edge (NGSI-LD §6.10, §6.11 entity subscriptions; §6.12, §6.13
// registration subscriptions): the body's structure (zod) and the routes over a subscription service.
// The NGSI-LD rules live in subscriptions/.

import { z } from 'zod';
import {
  BadRequestDataError, NotImplementedError, isAbsoluteUri, isPlainObject, type Json, type JsonObject, type TermMapper,
} from '../ngsi/index.js';
import type { ContextInput } from '../jsonld/index.js';
import {
  READ_ONLY_MEMBERS, READ_ONLY_NOTIFICATION_MEMBERS, notificationContextInput, renderSubscription, toNotificationContext,
  type Subscription, type SubscriptionInput, type SubscriptionService,
} from '../subscriptions/index.js';
import { resource, type App, type AppContext, type AppDeps } from './app-env.js';
import { readJsonBody } from './body.js';
import { APP_JSON, APP_LD_JSON, negotiate } from './media.js';
import { page, readParams } from './params.js';
import { BASE, created, idSegment, noContent, pageHeaders, sendPayload } from './respond.js';
import { actorOf, linkContext } from './request-context.js';

const OFFERED = [APP_JSON, APP_LD_JSON] as const;

/** Members of NGSI-LD §5.2.12 that edgeld knows and does not implement for entity subscriptions: 501. */
const UNIMPLEMENTED_MEMBERS = ['csf', 'temporalQ'];

const names = z.array(z.string());
/** pick / omit: an array of names or one comma-separated string (NGSI-LD §5.2.14). */
const projection = z.union([names, z.string().transform((s) => s.split(',').map((n) => n.trim()))]);
const pair = z.strictObject({ key: z.string(), value: z.string() });

const ENDPOINT = z.strictObject({
  uri: z.string(), accept: z.string(), timeout: z.number(), receiverInfo: z.array(pair), notifierInfo: z.array(pair),
}).partial();

const NOTIFICATION = z.strictObject({
  attributes: names, pick: projection, omit: projection, format: z.string(), sysAttrs: z.boolean(), showChanges: z.boolean(),
  join: z.string(), joinLevel: z.number(), endpoint: ENDPOINT,
}).partial();

const SUBSCRIPTION = z.strictObject({
  id: z.string(), type: z.string(), subscriptionName: z.string(), description: z.string(),
  entities: z.array(z.strictObject({ type: z.string(), id: z.string(), idPattern: z.string() }).partial()),
  watchedAttributes: names, notificationTrigger: names, timeInterval: z.number(), q: z.string(),
  geoQ: z.strictObject({ georel: z.unknown(), geometry: z.unknown(), coordinates: z.unknown(), geoproperty: z.unknown() }).partial(),
  scopeQ: z.string(), csf: z.string(),
  temporalQ: z.strictObject({ timerel: z.string(), timeAt: z.string(), endTimeAt: z.string(), timeproperty: z.string() }).partial(),
  isActive: z.boolean(), expiresAt: z.string(), throttling: z.number(), lang: z.string(), datasetId: names,
  jsonldContext: z.string(), notification: NOTIFICATION, '@context': z.unknown(),
}).partial();

/** Read-only and unimplemented members get their own answer before the structure is checked. */
function checkMembers(body: Record<string, unknown>, csource: boolean): void {
  for (const m of csource ? [] : UNIMPLEMENTED_MEMBERS) {
    if (m in body) throw new NotImplementedError(`Subscription member '${m}' is not implemented`, `${m}: not supported by edgeld`);
  }
  for (const m of READ_ONLY_MEMBERS) {
    if (m in body) throw new BadRequestDataError(`Invalid subscription member '${m}'`, `${m}: is read-only`);
  }
  const notification = body['notification'];
  if (isPlainObject(notification)) {
    for (const m of READ_ONLY_NOTIFICATION_MEMBERS) {
      if (m in notification) throw new BadRequestDataError(`Invalid subscription member 'notification.${m}'`, `notification.${m}: is read-only`);
    }
  }
}

function subscriptionInput(body: unknown, csource: boolean): SubscriptionInput {
  // NOTE: readJsonBody answers 400 for anything but a JSON object.
  checkMembers(body as Record<string, unknown>, csource);
  const parsed = SUBSCRIPTION.safeParse(body);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'subscription'}: ${i.message}`).join('; ');
    throw new BadRequestDataError('Invalid subscription', detail);
  }
  return parsed.data;
}

function subscriptionIdParam(c: AppContext): string {
  const id = c.req.param('id') ?? '';
  if (!isAbsoluteUri(id)) throw new BadRequestDataError('Invalid subscription id', `'${id}' is not an absolute URI`);
  return id;
}

/** Which subscription resource: its path under the API base, its service, and whether it holds registration subscriptions. */
export interface SubscriptionResource {
  path: string;
  service: SubscriptionService;
  csource: boolean;
}

/** The routes of one subscription resource: create, query, retrieve, update, delete. */
export function registerSubscriptionResource(app: App, deps: AppDeps, res: SubscriptionResource): void {
  const { contexts, config } = deps;
  const { service: subscriptions, csource } = res;

  /**
   * NGSI-LD §5.2.12 jsonldContext, as Stellio shows it for a subscription that names none: the
   * context its notifications are compacted with, by URL (a context made of several parts or given
   * inline is served by this broker as ImplicitlyCreated, at a URL on the origin the request used).
   */
  const shown = async (c: AppContext, sub: Subscription, mapper: TermMapper): Promise<JsonObject> => {
    const out = renderSubscription(sub, mapper, subscriptions.now(), { suspended: subscriptions.suspension(sub) });
    // NOTE: a registration subscription shows its members as given (ETSI 038_01 compares them whole).
    if (sub.jsonldContext === undefined && !csource) {
      // NOTE: a subscription's stored context was its creation request's ContextInput.
      const resolved = await contexts.resolve(notificationContextInput(sub) as ContextInput | undefined);
      out.jsonldContext = toNotificationContext(resolved, new URL(c.req.url).origin).linkUrl;
    }
    return out;
  };

  resource(app, `${BASE}/${res.path}`, {
    // NGSI-LD §6.10.3.1 Create Subscription, §6.12.3.1 Create Context Source Registration Subscription
    POST: async (c) => {
      readParams(c.req.url, []);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth });
      const input = subscriptionInput(body.body, csource);
      // NGSI-LD §5.2.12 jsonldContext: notifications are compacted with it, so it must load now
      // (503 LdContextNotAvailable otherwise), not fail every notification later.
      if (input.jsonldContext !== undefined && isAbsoluteUri(input.jsonldContext)) await contexts.resolve(input.jsonldContext);
      const ctx = await contexts.resolve(body.context);
      // NOTE: a request context is JSON as it arrived.
      const sub = subscriptions.create(actorOf(c), input, { mapper: ctx, context: body.context as Json | undefined });
      return created(`${BASE}/${res.path}/${idSegment(sub.id)}`);
    },
    // NGSI-LD §6.10.3.2 Query Subscriptions, §6.12.3.2 Query Context Source Registration Subscriptions
    GET: async (c) => {
      const params = readParams(c.req.url, ['limit', 'offset', 'count']);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const ctx = await linkContext(c, deps);
      const p = page(params, config);
      const found = subscriptions.list(actorOf(c), { limit: p.limit + 1, offset: p.offset, count: p.count });
      const payload: JsonObject[] = [];
      for (const s of found.items.slice(0, p.limit)) payload.push(await shown(c, s, ctx));
      return sendPayload(c, payload, ctx, mediaType, 200, pageHeaders(c.req.url, p, found.items.length > p.limit, found.count, mediaType));
    },
  });

  resource(app, `${BASE}/${res.path}/:id`, {
    // NGSI-LD §6.11.3.1 Retrieve Subscription, §6.13.3.1 Retrieve Context Source Registration Subscription
    GET: async (c) => {
      readParams(c.req.url, []);
      const mediaType = negotiate(c.req.header('accept'), OFFERED);
      const id = subscriptionIdParam(c);
      const ctx = await linkContext(c, deps);
      // The delivery members show every notification answered so far.
      await subscriptions.settled();
      const sub = subscriptions.get(actorOf(c), id);
      return sendPayload(c, await shown(c, sub, ctx), ctx, mediaType);
    },
    // NGSI-LD §6.11.3.2 Update Subscription, §6.13.3.2 Update Context Source Registration Subscription
    PATCH: async (c) => {
      readParams(c.req.url, []);
      const id = subscriptionIdParam(c);
      const body = await readJsonBody(c.req.raw, { limit: config.bodyLimit, maxDepth: config.maxJsonDepth, allowMergePatch: true });
      const input = subscriptionInput(body.body, csource);
      // NGSI-LD §5.2.12 jsonldContext: notifications are compacted with it, so it must load now
      // (503 LdContextNotAvailable otherwise), not fail every notification later.
      if (input.jsonldContext !== undefined && isAbsoluteUri(input.jsonldContext)) await contexts.resolve(input.jsonldContext);
      const ctx = await contexts.resolve(body.context);
      subscriptions.update(actorOf(c), id, input, { mapper: ctx });
      return noContent();
    },
    // NGSI-LD §6.11.3.3 Delete Subscription, §6.13.3.3 Delete Context Source Registration Subscription
    DELETE: (c) => {
      readParams(c.req.url, []);
      subscriptions.delete(actorOf(c), subscriptionIdParam(c));
      return noContent();
    },
  });
}
