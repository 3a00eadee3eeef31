// Synchronous processing of the bundled core context into the active-context shape jsonld builds,
// so the core term maps exist before any await. A test checks the result against jsonld's own.

import type { ActiveContext, JsonLdObject, TermDefinition } from './jsonld-api.js';
import { isJsonObject } from './jsonld-api.js';

/** JSON-LD 1.1: a simple term whose IRI ends in a gen-delim may prefix compact IRIs. */
const GEN_DELIM_END = /[:/?#[\]@]$/;
const IGNORED_KEYS = new Set(['@version', '@protected', '@vocab']);
const DEFINITION_KEYS = new Set(['@id', '@type', '@container', '@context']);

/**
 * Processes the core context document. It only covers what the core context uses (simple terms,
 * compact IRIs, @id/@type/@container definitions, term-scoped contexts, @vocab) and throws on
 * anything else, so a new core version that needs more fails loudly at start-up.
 */
export function processCoreContextSync(doc: JsonLdObject): ActiveContext {
  const ctx = doc['@context'];
  if (!isJsonObject(ctx)) throw new Error('the core context document has no @context object');
  const vocab = ctx['@vocab'];
  if (typeof vocab !== 'string') throw new Error('the core context has no @vocab');

  const expand = (value: string, depth = 0): string => {
    if (value.startsWith('@') || depth > 8) return value;
    const own = ctx[value];
    if (typeof own === 'string') return expand(own, depth + 1);
    if (isJsonObject(own) && typeof own['@id'] === 'string') return expand(own['@id'], depth + 1);
    const colon = value.indexOf(':');
    if (colon > 0) {
      const prefix = ctx[value.slice(0, colon)];
      if (typeof prefix === 'string') return expand(prefix, depth + 1) + value.slice(colon + 1);
      return value;
    }
    return vocab + value;
  };

  const mappings = new Map<string, TermDefinition | null>();
  for (const [term, value] of Object.entries(ctx)) {
    if (IGNORED_KEYS.has(term)) continue;
    const hasColon = term.indexOf(':') > 0;
    if (typeof value === 'string') {
      const id = expand(value);
      const isPrefix = !hasColon && !id.startsWith('@') && GEN_DELIM_END.test(id);
      mappings.set(term, { '@id': id, reverse: false, _termHasColon: hasColon, _prefix: isPrefix });
      continue;
    }
    if (!isJsonObject(value) || typeof value['@id'] !== 'string') {
      throw new Error(`core context term ${term}: unsupported definition`);
    }
    const unsupported = Object.keys(value).filter((k) => !DEFINITION_KEYS.has(k));
    if (unsupported.length > 0) throw new Error(`core context term ${term}: unsupported ${unsupported.join(', ')}`);
    const def: TermDefinition = { '@id': expand(value['@id']), reverse: false, _termHasColon: hasColon, _prefix: false };
    const type = value['@type'];
    if (typeof type === 'string') def['@type'] = expand(type);
    const container = value['@container'];
    if (container !== undefined) def['@container'] = Array.isArray(container) ? container : [container];
    mappings.set(term, def);
  }
  return { mappings, '@vocab': vocab };
}
