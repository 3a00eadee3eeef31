// The start of the entity browser: every entity type the subject may read, with its count and
// attribute names (GET /types?details=true, then GET /entities?type=…&count=true&limit=0 per type).

import { h, show } from './dom.js';
import { card, countOf, entityHref, errorBox, loading, typeHref, type View } from './view.js';

interface EntityType { typeName: string; attributeNames: string[] }

function typesOf(body: unknown): EntityType[] {
  if (!Array.isArray(body)) return [];
  return body.flatMap((t: unknown) => {
    const { typeName, attributeNames } = (t ?? {}) as { typeName?: unknown; attributeNames?: unknown }; // NOTE: checked below
    if (typeof typeName !== 'string') return [];
    return [{ typeName, attributeNames: Array.isArray(attributeNames) ? attributeNames.filter((a): a is string => typeof a === 'string') : [] }];
  });
}

export const typesView: View = (ctx, main) => {
  let alive = true;
  const body = h('div', {}, loading('entity types'));
  const goto = h('input', { type: 'search', name: 'entity-id', placeholder: 'urn:ngsi-ld:…', 'aria-label': 'Entity id', size: 40 });
  const form = h('form', {
    class: 'inline', onsubmit: (ev: Event) => {
      ev.preventDefault();
      if (goto.value.trim() !== '') location.hash = entityHref(goto.value.trim());
    },
  }, h('label', {}, 'Open entity by id ', goto), h('button', { type: 'submit' }, 'Open'));
  show(main, h('h1', {}, 'Entity types'), form, card('Types', body));

  void (async () => {
    try {
      const types = typesOf((await ctx.api.get('/types', { details: 'true' })).body);
      if (!alive) return;
      if (types.length === 0) {
        show(body, h('p', { class: 'muted' }, 'No entities yet (or none this subject may read).'));
        return;
      }
      const rows = types.map((t) => {
        const count = h('td', { class: 'num', 'data-type-count': t.typeName }, '…');
        void ctx.api.get('/entities', { type: t.typeName, count: 'true', limit: '0' })
          .then((a) => show(count, String(countOf(a.headers) ?? '?')), (err: unknown) => show(count, errorBox(err, 'count')));
        return h('tr', {},
          h('td', {}, h('a', { href: typeHref(t.typeName), class: 'type-link' }, t.typeName)), count,
          h('td', { class: 'muted' }, t.attributeNames.join(', ')));
      });
      show(body, h('table', { class: 'grid types' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Type'), h('th', { class: 'num' }, 'Entities'), h('th', {}, 'Attributes'))),
        h('tbody', {}, ...rows)));
    } catch (err) {
      if (alive) show(body, errorBox(err, 'Entity types'));
    }
  })();
  return () => {
    alive = false;
  };
};
