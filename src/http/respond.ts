// Response writing for NGSI-LD payloads: the context goes in the body for application/ld+json and
// in a Link header otherwise (NGSI-LD §6.3.6); pagination links and counts (§6.3.13).

import type { Context } from 'hono';
import type { ResolvedContext } from '../jsonld/index.js';
import { createGenerations } from '../lib/index.js';
import { contextLinkValue, type Json } from '../ngsi/index.js';
import { APP_GEO_JSON, APP_JSON, APP_LD_JSON, type ResponseMediaType } from './media.js';
import { iriToUri, pathSegment } from './uri.js';

export const BASE = '/ngsi-ld/v1';

/**
 * An entity id as one path segment of a URI: it decodes back to the id, and it is ASCII, as a
 * header value must be (a Location, a Link).
 */
export function idSegment(id: string): string {
  return pathSegment(id);
}

/** The URL a Link header names for this context (hosted composite contexts are served by us), as a URI. */
function contextLinkUrl(c: Context, ctx: ResolvedContext): string {
  if (ctx.linkUrl !== undefined) return iriToUri(ctx.linkUrl);
  const origin = new URL(c.req.url).origin;
  return `${origin}${BASE}/jsonldContexts/${ctx.hostedId ?? ''}`;
}

function withContext(payload: Json, ctx: ResolvedContext): Json {
  if (Array.isArray(payload)) return payload.map((p) => withContext(p, ctx));
  if (typeof payload === 'object' && payload !== null) {
    // Spec output keeps @context last, as the NGSI-LD examples do.
    return { ...payload, '@context': ctx.bodyContext as Json }; // NOTE: bodyContext is JSON by construction
  }
  return payload;
}

/** The headers of a payload: its media type, and the context as a Link unless the body carries it. */
function payloadHeaders(c: Context, ctx: ResolvedContext, mediaType: ResponseMediaType, headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...headers, 'Content-Type': mediaType };
  if (mediaType !== APP_LD_JSON) {
    const context = contextLink(c, ctx);
    const page = headers['Link'];
    out['Link'] = page ? `${page}, ${context}` : context;
  }
  return out;
}

/** The context Link value of each context named by one URL (the same for every request). */
const contextLinks = new WeakMap<ResolvedContext, string>();

function contextLink(c: Context, ctx: ResolvedContext): string {
  // A hosted context's URL is on the origin the request came to: not kept.
  if (ctx.linkUrl === undefined) return contextLinkValue(contextLinkUrl(c, ctx));
  let link = contextLinks.get(ctx);
  if (link === undefined) {
    link = contextLinkValue(contextLinkUrl(c, ctx));
    contextLinks.set(ctx, link);
  }
  return link;
}

export function sendPayload(
  c: Context, payload: Json, ctx: ResolvedContext, mediaType: ResponseMediaType,
  status = 200, headers: Record<string, string> = {},
): Response {
  let body = payload;
  if (mediaType === APP_LD_JSON) body = withContext(payload, ctx);
  // NGSI-LD §4.5.16: a GeoJSON Feature or FeatureCollection carries its @context as a member too.
  if (mediaType === APP_GEO_JSON && !Array.isArray(payload)) body = withContext(payload, ctx);
  return new Response(JSON.stringify(body), { status, headers: payloadHeaders(c, ctx, mediaType, headers) });
}

/** A payload already serialized, of a media type whose body carries no context (application/json). */
export function sendPayloadText(
  c: Context, text: string | Uint8Array, ctx: ResolvedContext, mediaType: typeof APP_JSON, status = 200, headers: Record<string, string> = {},
): Response {
  return new Response(text, { status, headers: payloadHeaders(c, ctx, mediaType, headers) });
}

/** A plain JSON answer that carries no JSON-LD context (UpdateResult, batch results). */
export function sendJson(payload: Json, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(payload), { status, headers: { 'Content-Type': APP_JSON, ...headers } });
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers });
}

/**
 * 201 Created with its Location and no body. NOTE: an explicit zero length: without it Node frames
 * the empty body as a chunked stream (a terminating chunk the client has to parse).
 */
export function created(location: string): Response {
  // Made a URI here too, so no id can make the header invalid once the write it acknowledges committed.
  return new Response(null, { status: 201, headers: { Location: iriToUri(location), 'Content-Length': '0' } });
}

/** `Link` rel=next/prev and `NGSILD-Results-Count` for a page of results. */
/**
 * NGSI-LD §6.3.4 pagination: `Link` headers to the previous and next pages, typed with the media
 * type of the answer, on the collection's path (a trailing slash names the same collection).
 */
export function pageHeaders(
  requestUrl: string, page: { limit: number; offset: number; count: boolean }, hasMore: boolean, total: number | undefined,
  mediaType: string = APP_JSON,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (page.count && total !== undefined) headers['NGSILD-Results-Count'] = String(total);
  if (page.limit > 0 && (page.offset > 0 || hasMore)) {
    if (requestUrl.length > KEPT_LINK_URL_MAX) {
      headers['Link'] = pageLinkValue(requestUrl, page, hasMore, mediaType);
      return headers;
    }
    const key = `${mediaType} ${page.limit} ${page.offset} ${hasMore} ${requestUrl}`;
    let link = pageLinks.get(key);
    if (link === undefined) {
      link = pageLinkValue(requestUrl, page, hasMore, mediaType);
      pageLinks.set(key, link);
    }
    headers['Link'] = link;
  }
  return headers;
}

/**
 * The Link values of recent pages by everything they are made of: a listing asked again (a dashboard
 * polling) has the same links, and building them parses and serializes the URL twice.
 */
const pageLinks = createGenerations<string, string>(256);
/** Longest request URL whose links are kept, so that the kept ones hold at most about 1.5 MiB. */
const KEPT_LINK_URL_MAX = 2048;

function pageLinkValue(requestUrl: string, page: { limit: number; offset: number }, hasMore: boolean, mediaType: string): string {
  const linkTo = (offset: number, rel: string): string => {
    const u = new URL(requestUrl);
    u.searchParams.set('offset', String(offset));
    u.searchParams.set('limit', String(page.limit));
    const path = u.pathname.length > 1 ? u.pathname.replace(/\/+$/, '') : u.pathname;
    return `<${iriToUri(path + u.search)}>; rel="${rel}"; type="${mediaType}"`;
  };
  const links: string[] = [];
  if (page.offset > 0) links.push(linkTo(Math.max(0, page.offset - page.limit), 'prev'));
  if (hasMore) links.push(linkTo(page.offset + page.limit, 'next'));
  return links.join(', ');
}
