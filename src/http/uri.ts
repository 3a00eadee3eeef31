// IRIs made fit for response headers: header values are bytes, so an IRI (entity ids and context
// URLs may hold any Unicode) goes out as its URI, with UTF-8 octets percent-encoded (RFC 3987 §3.1).

/** Characters a URI carries as they are (RFC 3986 §2.2 reserved, §2.3 unreserved). */
const URI_CHARS = "A-Za-z0-9\\-._~:/?#[\\]@!$&'()*+,;=";
const IS_URI = new RegExp(`^(?:[${URI_CHARS}]|%[0-9A-Fa-f]{2})*$`);
/** A valid percent-encoded octet (kept), or one code point a URI cannot carry as it is. */
const NOT_URI = new RegExp(`%[0-9A-Fa-f]{2}|[^${URI_CHARS}]`, 'gu');
/** A code point that is not a `pchar` of a path segment (RFC 3986 §3.3), `%` included. */
const NOT_SEGMENT = /[^A-Za-z0-9\-._~:@!$&'()*+,;=]/gu;

/**
 * `%XX` for each UTF-8 octet of one code point. NOTE: Buffer encodes a lone surrogate as U+FFFD, so
 * this never throws, where encodeURIComponent would.
 */
function percentEncode(ch: string): string {
  let out = '';
  for (const byte of Buffer.from(ch, 'utf8')) out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  return out;
}

/**
 * The URI of an IRI (RFC 3987 §3.1): every character a URI cannot hold (non-ASCII, spaces, `<>"`,
 * a `%` that starts no octet, ...) is percent-encoded as UTF-8; what a URI already allows is kept,
 * valid `%XX` octets included. The result is printable ASCII and safe inside `<...>` of a Link header.
 */
export function iriToUri(iri: string): string {
  if (IS_URI.test(iri)) return iri;
  return iri.replace(NOT_URI, (m) => (m.length === 3 && m.startsWith('%') ? m : percentEncode(m)));
}

/**
 * A string as one path segment whose decoding gives the string back: everything but a `pchar`,
 * `%` included, is percent-encoded as UTF-8 (so `/`, `?` and `#` neither split nor end the segment).
 */
export function pathSegment(value: string): string {
  return value.replace(NOT_SEGMENT, percentEncode);
}
