// Canonical JSON (object keys sorted, no whitespace) and short hashes of it: stable cache keys and
// deterministic ids for contexts.

import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map((v) => canonicalJson(v ?? null)).join(',') + ']';
  if (typeof value === 'object' && value !== null) {
    const parts: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const member: unknown = Reflect.get(value, key);
      if (member !== undefined) parts.push(JSON.stringify(key) + ':' + canonicalJson(member));
    }
    return '{' + parts.join(',') + '}';
  }
  return JSON.stringify(value) ?? 'null';
}

/** The first 32 hex digits of the SHA-256 of a text. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
