// Reads the project's Markdown pages for the documentation tests: headings and their GitHub anchors,
// relative links, and the fenced code blocks of a section. Code blocks are never read as Markdown.

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md, every page of docs/ and contrib/README.md, as paths relative to the repository root. */
export function markdownPages(): string[] {
  const docs = readdirSync(`${ROOT}docs`).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs, 'contrib/README.md'];
}

export function readPage(page: string): string {
  return readFileSync(`${ROOT}${page}`, 'utf8');
}

/** The lines of a page outside fenced code blocks (``` or ~~~), each with its 1-based number. */
export function proseLines(text: string): Array<{ line: string; n: number }> {
  const out: Array<{ line: string; n: number }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link keeps its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*_~]/g, (c) => (c === '_' ? '_' : '')); // emphasis and code marks (underscores stay)
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Every anchor a page defines, duplicates numbered as GitHub does (`name`, `name-1`, …). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of proseLines(text)) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** Links and images of the prose (not inside code blocks or inline code), with their line. */
export function links(text: string): Link[] {
  const out: Link[] = [];
  for (const { line, n } of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line: n });
  }
  return out;
}

/**
 * The fenced `sh` blocks between a `## <heading>` and the next `##` heading, in order, each with the
 * prose paragraph just before it (empty when two blocks follow each other).
 */
export function shellBlocksOfSection(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  let end = lines.findIndex((l, i) => i > start && /^##\s/.test(l));
  if (end < 0) end = lines.length;
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of lines.slice(start + 1, end)) {
    if (current === undefined) {
      if (/^```(sh|bash)\s*$/.test(line)) current = [];
    } else if (/^```\s*$/.test(line)) {
      blocks.push(current.join('\n'));
      current = undefined;
    } else {
      current.push(line);
    }
  }
  return blocks;
}
