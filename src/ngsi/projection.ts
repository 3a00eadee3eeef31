// pick and omit (NGSI-LD §4.21): a list of member names, each optionally followed by a braced list
// that projects the entity its relationship links to (`id,locatedAt{id,name,isInCountry{name}}`).

import { BadRequestDataError } from './errors.js';
import type { Iri } from './model.js';

export type Member = 'id' | 'type' | Iri;

/** Names at one level; a name with a subtree projects the linked entity (join) too. */
export type ProjectionTree = ReadonlyMap<Member, ProjectionTree | undefined>;

const NAME = /[^{},\s;=<>"'()]/;
const MAX_DEPTH = 8;

function invalid(text: string, at: number, what: string): BadRequestDataError {
  return new BadRequestDataError(`Invalid projection: ${what}`, `'${text}' at position ${at + 1}`);
}

/**
 * Parses a pick or omit value; names are expanded with `expand` (id and type stay as they are).
 * Throws BadRequestDataError for an empty name, a consecutive or leading separator, an unclosed or
 * doubled brace, an empty brace pair or a character names cannot hold.
 */
export function parseProjection(text: string, expand: (name: string) => Iri): ProjectionTree {
  let pos = 0;
  const parseList = (depth: number): Map<Member, ProjectionTree | undefined> => {
    if (depth > MAX_DEPTH) throw invalid(text, pos, `more than ${MAX_DEPTH} nested levels`);
    const out = new Map<Member, ProjectionTree | undefined>();
    for (;;) {
      const start = pos;
      while (pos < text.length && NAME.test(text[pos]!)) pos++;
      if (pos === start) {
        const ch = text[pos];
        throw invalid(text, pos, ch === undefined ? 'a name is missing at the end' : `'${ch}' where a name is expected`);
      }
      const name = text.slice(start, pos);
      let sub: ProjectionTree | undefined;
      if (text[pos] === '{') {
        pos++;
        sub = parseList(depth + 1);
        if (text[pos] !== '}') throw invalid(text, pos, 'a brace is not closed');
        pos++;
      }
      out.set(name === 'id' || name === 'type' ? name : expand(name), sub);
      if (pos >= text.length || text[pos] === '}') return out;
      if (text[pos] !== ',') throw invalid(text, pos, `'${text[pos]}' is not allowed here`);
      pos++;
    }
  };
  const tree = parseList(0);
  if (pos < text.length) throw invalid(text, pos, `unexpected '${text[pos]}'`);
  return tree;
}

/** Whether a member survives a pick tree (undefined: no pick) and an omit tree (a subtree omits below, not the member). */
export function isProjected(member: Member, pick: ProjectionTree | undefined, omit: ProjectionTree | undefined): boolean {
  if (pick !== undefined && !pick.has(member)) return false;
  return !(omit !== undefined && omit.has(member) && omit.get(member) === undefined);
}

/** The projection of the entity a relationship member links to. */
export function projectionBelow(tree: ProjectionTree | undefined, member: Member): ProjectionTree | undefined {
  return tree?.get(member);
}
