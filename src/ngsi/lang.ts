// Language filtering of LanguageProperty values (NGSI-LD §4.15): parsing the `lang` preference and
// choosing the best entry of a languageMap for it.

/** The parsed `lang` parameter: language ranges by decreasing preference (`*` matches any). */
export interface LanguagePreference {
  readonly ranges: readonly string[];
}

const RANGE = /^(\*|@none|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)$/;
const WEIGHT = /^q=([01](?:\.\d{0,3})?)$/i;

/** Whether `lang` is a list of language ranges, each optionally weighted (`fr-CH,fr;q=0.9,*;q=0.5`). */
export function isLanguagePreference(lang: string): boolean {
  return lang.split(',').every((part) => {
    const [tag = '', ...params] = part.trim().split(';').map((p) => p.trim());
    return RANGE.test(tag) && params.length <= 1 && params.every((p) => WEIGHT.test(p));
  });
}

/**
 * `fr-CH,fr;q=0.9,en;q=0.5` (the Accept-Language shape of RFC 9110); q=0 ranges are dropped.
 * NGSI-LD §4.15: `*` asks for any language: one entry of the map is shown, like for a tag.
 */
export function parseLanguagePreference(lang: string): LanguagePreference {
  const weighted = lang.split(',').map((part, order) => {
    const [tag = '', ...params] = part.trim().split(';').map((p) => p.trim());
    const q = params.map((p) => WEIGHT.exec(p)?.[1]).find((v) => v !== undefined);
    return { tag, q: q === undefined ? 1 : Number(q), order };
  }).filter((r) => r.tag !== '' && r.q > 0);
  weighted.sort((a, b) => b.q - a.q || a.order - b.order);
  return { ranges: weighted.map((r) => r.tag) };
}

const primary = (tag: string): string => (tag.split('-')[0] ?? '').toLowerCase();

/**
 * The languageMap key to show: for each range in order an exact match (case-insensitive), then one
 * with the same primary subtag (preferring the bare primary tag); then `@none`; then the first key.
 */
export function pickLanguage(keys: readonly string[], ranges: readonly string[]): string | undefined {
  for (const range of ranges) {
    if (range === '*') return keys.includes('@none') ? '@none' : keys[0];
    const exact = keys.find((k) => k.toLowerCase() === range.toLowerCase());
    if (exact !== undefined) return exact;
    const p = primary(range);
    const bare = keys.find((k) => k.toLowerCase() === p);
    const sameFamily = bare ?? keys.find((k) => k !== '@none' && primary(k) === p);
    if (sameFamily !== undefined) return sameFamily;
  }
  return keys.includes('@none') ? '@none' : keys[0];
}
