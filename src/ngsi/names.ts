// Lexical checks on the strings an NGSI-LD payload carries: names, URIs, scope paths, language tags.
// Names are checked in their compact form, before expansion through the context.

/** Characters no attribute or type name may contain (NGSI-LD §4.6.2), plus control characters. */
const FORBIDDEN_NAME_CHARS = /[<>"'=()\u0000-\u001f\u007f]/;

/** A URI scheme followed by characters RFC 3986 allows somewhere in a URI. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`\u0000-\u001f\u007f]+$/;

/** `/A/B`: one or more non-empty levels; `+` and `#` are scopeQ wildcards (NGSI-LD §4.18). */
const SCOPE_PATH = /^(\/[^/\s+#\u0000-\u001f\u007f]+)+$/;

/** BCP 47 in its common shape: a primary subtag and optional subtags. */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

/** Why a name is unacceptable, or undefined when it is fine. */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'an empty name is not allowed';
  if (FORBIDDEN_NAME_CHARS.test(name)) return `name '${name}' contains a forbidden character`;
  return undefined;
}

/** A lone UTF-16 surrogate: not a character, and no URI can carry it. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * An absolute URI (or IRI: non-ASCII characters are allowed, RFC 3987): a scheme, then no whitespace,
 * no characters URIs never contain, and no lone surrogate.
 */
export const isAbsoluteUri = (s: string): boolean => ABSOLUTE_URI.test(s) && !LONE_SURROGATE.test(s);
/** A scope path `/A/B` without scopeQ wildcards. */
export const isScopePath = (s: string): boolean => SCOPE_PATH.test(s);
/** A languageMap key: a BCP 47 tag or `@none`. */
export const isLanguageKey = (s: string): boolean => s === '@none' || LANGUAGE_TAG.test(s);
