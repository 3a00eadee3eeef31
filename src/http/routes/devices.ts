// Routes of the device registry under /edgeld/v1/devices: register, read, list, update and delete
// the MQTT devices of a tenant, and draw a new device secret. A secret appears only in the answer
// that created it; nothing shows it or its hash again.

import { z } from 'zod';
import {
  BadRequestDataError, InvalidRequestError, UnsupportedMediaTypeError, formatDateTime, isPlainObject, type Json, type JsonObject,
} from '../../ngsi/index.js';
import type { Device, DeviceInput, DevicePatch } from '../../devices/index.js';
import { resource, type App, type AppContext, type AppDeps } from '../app-env.js';
import { parseJsonText, readBytes } from '../body.js';
import { APP_JSON, APP_LD_JSON, contextFromLink, negotiate, requestMediaType } from '../media.js';
import { page, readParams } from '../params.js';
import { noContent, pageHeaders, sendJson } from '../respond.js';
import { actorOf } from '../request-context.js';
import { pathSegment } from '../uri.js';

const DEVICES = '/edgeld/v1/devices';

const NAME_MAP = z.record(z.string(), z.string());
const JSON_OBJECT = z.record(z.string(), z.json());
const CONTEXT = z.union([z.string(), JSON_OBJECT, z.array(z.union([z.string(), JSON_OBJECT]))], { error: 'expected a URL, an object, or an array of them' });
/** edge.md §6: `[{ name, expires? }]`; what a name and a duration may be is the registry's check. */
const COMMANDS = z.array(z.strictObject({ name: z.string(), expires: z.string().optional() })).max(100);
const MEMBERS = {
  entityId: z.string(), entityType: z.string(), renames: NAME_MAP, unitCodes: NAME_MAP, staticAttributes: JSON_OBJECT, context: CONTEXT,
  commands: COMMANDS,
};
const OPTIONAL = z.strictObject(MEMBERS).partial();
const CREATE = OPTIONAL.extend({ deviceId: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'expected a string') }) });
/** The device id is the resource's: not a member of an update. `context: null` is the core context again. */
const PATCH = OPTIONAL.extend({ context: CONTEXT.nullable().optional() });

/** Secrets must not stay in any cache on the way. */
const NO_STORE = { 'Cache-Control': 'no-store' };

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'device'}: ${i.message}`).join('; ');
    throw new BadRequestDataError('Invalid device', detail);
  }
  return parsed.data;
}

/** A JSON object body; the device's context is its `context` member, never a Link header or `@context`. */
async function readBody(c: AppContext, deps: AppDeps, allowMergePatch: boolean): Promise<unknown> {
  if (requestMediaType(c.req.header('content-type'), allowMergePatch) === APP_LD_JSON) {
    throw new UnsupportedMediaTypeError(`Unsupported Content-Type '${APP_LD_JSON}'`, `Use ${APP_JSON}; the device's @context is its context member`);
  }
  if (contextFromLink(c.req.header('link')) !== undefined) {
    throw new BadRequestDataError('Invalid device', "The device's @context is its context member, not a Link header");
  }
  const { config } = deps;
  const text = await readBytes(c.req.raw, config.bodyLimit);
  if (text.trim() === '') throw new InvalidRequestError('Empty request body');
  const body = parseJsonText(text, config.maxJsonDepth);
  if (!isPlainObject(body)) throw new InvalidRequestError('The body must be a JSON object');
  if ('@context' in body) throw new BadRequestDataError('Invalid device', "@context: the device's @context is its context member");
  return body;
}

function render(d: Device): JsonObject {
  const out: JsonObject = {
    deviceId: d.deviceId, entityId: d.entityId, entityType: d.entityType, renames: d.renames, unitCodes: d.unitCodes,
    staticAttributes: d.staticAttributes,
  };
  // NOTE: a DeviceContext is JSON (strings and JSON objects).
  if (d.context !== undefined) out.context = d.context as Json;
  out.commands = d.commands.map((c) => ({ name: c.name, expires: c.expires }));
  out.createdAt = formatDateTime(d.createdAt);
  out.modifiedAt = formatDateTime(d.modifiedAt);
  return out;
}

const deviceIdParam = (c: AppContext): string => c.req.param('deviceId') ?? '';
const location = (deviceId: string): string => `${DEVICES}/${pathSegment(deviceId)}`;

/**
 * The members given, without the ones zod left undefined. NOTE: zod's JSON type is the JSON shape of
 * DeviceContext, and the members are otherwise those of DeviceInput / DevicePatch.
 */
function given<T>(raw: Record<string, unknown>): T {
  const members = Object.entries(raw).filter(([, v]) => v !== undefined);
  // NOTE: exactOptionalPropertyTypes: a command's `expires` left out by zod as undefined is dropped too.
  return Object.fromEntries(members.map(([k, v]) => [k, k === 'commands' && Array.isArray(v) ? v.map((c) => given(c as Record<string, unknown>)) : v])) as T;
}

export function registerDeviceRoutes(app: App, deps: AppDeps): void {
  const { devices, config } = deps;

  resource(app, DEVICES, {
    POST: async (c) => {
      readParams(c.req.url, []);
      const actor = actorOf(c);
      devices.authorize(actor);
      const input = given<DeviceInput>(parseBody(CREATE, await readBody(c, deps, false)));
      const { device, secret } = await devices.create(actor, input);
      const body = { deviceId: device.deviceId, entityId: device.entityId, entityType: device.entityType, secret };
      return sendJson(body, 201, { Location: location(device.deviceId), ...NO_STORE });
    },
    GET: (c) => {
      const p = page(readParams(c.req.url, ['limit', 'offset', 'count']), config);
      negotiate(c.req.header('accept'), [APP_JSON]);
      const found = devices.list(actorOf(c), { ...p, limit: p.limit + 1 });
      const payload = found.items.slice(0, p.limit).map(render);
      return sendJson(payload, 200, pageHeaders(c.req.url, p, found.items.length > p.limit, found.count));
    },
  });

  resource(app, `${DEVICES}/:deviceId`, {
    GET: (c) => {
      readParams(c.req.url, []);
      negotiate(c.req.header('accept'), [APP_JSON]);
      return sendJson(render(devices.get(actorOf(c), deviceIdParam(c))));
    },
    PATCH: async (c) => {
      readParams(c.req.url, []);
      const actor = actorOf(c);
      devices.authorize(actor);
      const patch = given<DevicePatch>(parseBody(PATCH, await readBody(c, deps, true)));
      await devices.update(actor, deviceIdParam(c), patch);
      return noContent();
    },
    DELETE: (c) => {
      readParams(c.req.url, []);
      devices.delete(actorOf(c), deviceIdParam(c));
      return noContent();
    },
  });

  resource(app, `${DEVICES}/:deviceId/secret`, {
    POST: (c) => {
      readParams(c.req.url, []);
      const deviceId = deviceIdParam(c);
      const secret = devices.rotateSecret(actorOf(c), deviceId);
      return sendJson({ deviceId, secret }, 200, NO_STORE);
    },
  });
}
