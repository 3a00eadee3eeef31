// Media types and JSON-LD context transport (NGSI-LD §6.3.5, §6.3.6): Content-Type, Accept and the
// JSON-LD `Link` header, for requests and responses.

import {
  BadRequestDataError, JSONLD_CONTEXT_REL, NotAcceptableError, UnsupportedMediaTypeError,
} from '../ngsi/index.js';

export const APP_JSON = 'application/json';
export const APP_LD_JSON = 'application/ld+json';
export const APP_GEO_JSON = 'application/geo+json';
const APP_MERGE_PATCH_JSON = 'application/merge-patch+json';

export type ResponseMediaType = typeof APP_JSON | typeof APP_LD_JSON | typeof APP_GEO_JSON;
export type RequestMediaType = typeof APP_JSON | typeof APP_LD_JSON;

/** The media type of a request body; 415 for anything else (§6.3.4). */
export function requestMediaType(contentType: string | undefined, allowMergePatch: boolean): RequestMediaType {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mime === APP_JSON || mime === APP_LD_JSON) return mime;
  if (mime === APP_MERGE_PATCH_JSON && allowMergePatch) return APP_JSON;
  throw new UnsupportedMediaTypeError(
    mime === '' ? 'Missing Content-Type' : `Unsupported Content-Type '${mime}'`,
    `Use ${APP_JSON} or ${APP_LD_JSON}${allowMergePatch ? ` (or ${APP_MERGE_PATCH_JSON})` : ''}`,
  );
}

interface AcceptEntry { type: string; q: number; order: number }

function parseAccept(header: string): AcceptEntry[] {
  return header.split(',').map((part, order) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim());
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    return { type: type.toLowerCase(), q: Number.isFinite(q) ? q : 0, order };
  }).filter((e) => e.type !== '' && e.q > 0);
}

/** Picks the response media type from `Accept` (§6.3.6); 406 when none is offered. */
export function negotiate(accept: string | undefined, offered: readonly ResponseMediaType[]): ResponseMediaType {
  if (!accept || accept.trim() === '') return offered[0]!;
  const entries = parseAccept(accept).sort((a, b) => b.q - a.q || a.order - b.order);
  for (const e of entries) {
    if (e.type === '*/*' || e.type === 'application/*') return offered[0]!;
    const hit = offered.find((o) => o === e.type);
    if (hit) return hit;
  }
  throw new NotAcceptableError(`Accept '${accept}' is not supported`, `Offered: ${offered.join(', ')}`);
}

/**
 * The JSON-LD context URL of a request `Link` header, or undefined when there is none.
 * A Link header without the JSON-LD context relation is malformed for this API (400).
 */
export function contextFromLink(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const links = splitLinks(header);
  const contexts: string[] = [];
  for (const link of links) {
    const m = /^<([^>]*)>(.*)$/s.exec(link.trim());
    if (!m) throw new BadRequestDataError('Malformed Link header', `Cannot parse '${link.trim()}'`);
    const params = m[2]!;
    const rel = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(params)?.[1];
    if (rel && rel.split(/\s+/).includes(JSONLD_CONTEXT_REL)) contexts.push(m[1]!.trim());
  }
  if (contexts.length === 0) {
    throw new BadRequestDataError('Malformed Link header', `A JSON-LD Link header needs rel="${JSONLD_CONTEXT_REL}"`);
  }
  if (contexts.length > 1) throw new BadRequestDataError('More than one JSON-LD context Link header');
  const url = contexts[0]!;
  if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(url)) throw new BadRequestDataError('Link header context is not an absolute URL', url);
  return url;
}

function splitLinks(header: string): string[] {
  // Commas may appear inside <...>; split only between links.
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < header.length; i++) {
    const ch = header[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '<') depth++;
    else if (!quoted && ch === '>') depth = Math.max(0, depth - 1);
    else if (!quoted && depth === 0 && ch === ',') {
      out.push(header.slice(start, i));
      start = i + 1;
    }
  }
  out.push(header.slice(start));
  return out.filter((s) => s.trim() !== '');
}

