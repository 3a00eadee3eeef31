#!/usr/bin/env node
// Regenerates the README tables rendered from code (configuration options, error catalogue).
// Run after `npm run build`: node scripts/update-readme.mjs

import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { renderOptionsMarkdown } = await import(new URL('dist/config/index.js', root).href);
const { renderErrorsMarkdown } = await import(new URL('dist/ngsi/index.js', root).href);

let readme = readFileSync(new URL('README.md', root), 'utf8');
const fill = (name, body) => {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const i = readme.indexOf(start);
  const j = readme.indexOf(end);
  if (i < 0 || j < i) throw new Error(`README.md lacks ${start} … ${end}`);
  readme = readme.slice(0, i + start.length) + '\n' + body + '\n' + readme.slice(j);
};
fill('options', renderOptionsMarkdown());
fill('errors', renderErrorsMarkdown());
writeFileSync(new URL('README.md', root), readme);
