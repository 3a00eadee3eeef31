#!/usr/bin/env node
// Regenerates the documentation tables rendered from code: the configuration options
// (docs/configuration.md) and the error catalogue (docs/api.md).
// Run after `npm run build`: node scripts/update-docs.mjs

import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { renderOptionsMarkdown } = await import(new URL('dist/config/index.js', root).href);
const { renderErrorsMarkdown } = await import(new URL('dist/ngsi/index.js', root).href);

/** Replaces what lies between `<!-- name:start -->` and `<!-- name:end -->` in one page. */
function fill(page, name, body) {
  const url = new URL(page, root);
  const text = readFileSync(url, 'utf8');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`${page} lacks ${start} … ${end}`);
  writeFileSync(url, text.slice(0, i + start.length) + '\n' + body + '\n' + text.slice(j));
}

fill('docs/configuration.md', 'options', renderOptionsMarkdown());
fill('docs/api.md', 'errors', renderErrorsMarkdown());
