// The entities of one type with their latest values and the age of their newest observedAt (stale
// ones highlighted), searched by id and by a q expression, paged, on a map when they have
// GeoProperties, and kept current by live notifications.

import { h, show } from './dom.js';
import { attributesOf, formatAge, formatValue, idContainsPattern, newestObservedAt, numericValue, type Attribute, type Entity } from './format.js';
import { renderMap } from './map-view.js';
import { card, countOf, entityHref, errorBox, loading, type View, type ViewContext } from './view.js';

const PAGE = 50;
const MAX_COLUMNS = 6;
export const STALE_CHOICES: ReadonlyArray<[string, number]> = [['5 min', 300_000], ['15 min', 900_000], ['1 hour', 3_600_000], ['1 day', 86_400_000]];

export interface EntitiesParams { id: string; q: string; offset: number }

/** Numbers first, then other values, then relationships; geo-properties go on the map. */
function rankOf(instances: readonly Attribute[]): number {
  const a = instances[0];
  if (a === undefined || a.type === 'GeoProperty') return -1;
  if (numericValue(a) !== undefined) return 0;
  return a.type === 'Relationship' || a.type === 'ListRelationship' ? 2 : 1;
}

function columnsOf(entities: readonly Entity[]): string[] {
  const ranks = new Map<string, number>();
  for (const e of entities) {
    for (const { name, instances } of attributesOf(e)) ranks.set(name, Math.min(ranks.get(name) ?? 3, rankOf(instances)));
  }
  return [...ranks].filter(([, r]) => r >= 0).sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).map(([n]) => n).slice(0, MAX_COLUMNS);
}

function geoFeatures(entities: readonly Entity[]): Array<{ geometry: unknown; label: string; href: string }> {
  return entities.flatMap((e) => attributesOf(e).flatMap(({ instances }) =>
    instances.filter((a) => a.type === 'GeoProperty').map((a) => ({ geometry: a.value, label: shortId(e.id), href: entityHref(e.id) }))));
}

/** `urn:ngsi-ld:Device:boiler-1` → `boiler-1`: a map label. */
const shortId = (id: string): string => id.slice(id.lastIndexOf(':') + 1) || id;

function hrefOf(type: string, p: EntitiesParams): string {
  const q = new URLSearchParams();
  if (p.id) q.set('id', p.id);
  if (p.q) q.set('q', p.q);
  if (p.offset > 0) q.set('offset', String(p.offset));
  const qs = q.toString();
  return `#/type/${encodeURIComponent(type)}${qs ? `?${qs}` : ''}`;
}

function updateAge(cell: HTMLElement, ctx: ViewContext): void {
  const at = Number(cell.dataset['observed']);
  const row = cell.parentElement;
  if (!cell.dataset['observed'] || !Number.isFinite(at)) {
    show(cell, h('span', { class: 'muted' }, 'never'));
    return;
  }
  const age = Date.now() - at;
  const stale = age > ctx.staleAfter();
  show(cell, `${formatAge(age)} ago`);
  cell.title = new Date(at).toISOString();
  row?.classList.toggle('stale', stale);
}

function rowOf(e: Entity, columns: readonly string[], ctx: ViewContext): HTMLTableRowElement {
  const attrs = new Map(attributesOf(e).map((a) => [a.name, a.instances]));
  const age = h('td', { class: 'age', 'data-observed': newestObservedAt(e) ?? '' });
  const row = h('tr', { 'data-id': e.id },
    h('td', {}, h('a', { href: entityHref(e.id), class: 'entity-link' }, e.id)),
    ...columns.map((c) => h('td', { 'data-attr': c }, (attrs.get(c) ?? []).map(formatValue).join(' · ') || '–')),
    age);
  updateAge(age, ctx);
  return row;
}

function searchForm(type: string, p: EntitiesParams, ctx: ViewContext, onStale: () => void): HTMLElement {
  const id = h('input', { type: 'search', name: 'id', value: p.id, placeholder: 'part of the id', 'aria-label': 'Id contains' });
  const q = h('input', { type: 'search', name: 'q', value: p.q, placeholder: 'temperature>25;status=="on"', 'aria-label': 'q expression', size: 32 });
  const stale = h('select', { name: 'stale', 'aria-label': 'Stale after', onchange: () => {
    ctx.setStaleAfter(Number(stale.value));
    onStale();
  } }, ...STALE_CHOICES.map(([label, ms]) => h('option', { value: ms, selected: ms === ctx.staleAfter() }, label)));
  return h('form', {
    class: 'search', onsubmit: (ev: Event) => {
      ev.preventDefault();
      location.hash = hrefOf(type, { id: id.value.trim(), q: q.value.trim(), offset: 0 });
    },
  }, h('label', {}, 'Id contains ', id), h('label', {}, 'q ', q), h('button', { type: 'submit' }, 'Search'),
  h('span', { class: 'spacer' }), h('label', {}, 'Stale after ', stale));
}

export function entitiesView(type: string, p: EntitiesParams): View {
  return (ctx, main) => {
    let alive = true;
    let stop: (() => void) | undefined;
    const table = h('div', { class: 'table-wrap' }, loading('entities'));
    const mapBox = h('div', {});
    const pager = h('div', { class: 'pager' });
    const liveNote = h('div', { class: 'live-note' });
    const refreshAges = (): void => {
      for (const cell of table.querySelectorAll<HTMLElement>('td.age')) updateAge(cell, ctx);
    };
    show(main, h('nav', { class: 'crumbs' }, h('a', { href: '#/' }, 'Types'), ' / ', type),
      h('h1', {}, type), searchForm(type, p, ctx, refreshAges), card('Entities', table, pager, liveNote), mapBox);
    const ages = setInterval(refreshAges, 5000);

    void (async () => {
      try {
        const answer = await ctx.api.get('/entities', {
          type, limit: String(PAGE), offset: String(p.offset), count: 'true',
          ...(p.id ? { idPattern: idContainsPattern(p.id) } : {}), ...(p.q ? { q: p.q } : {}),
        });
        if (!alive) return;
        const entities = (Array.isArray(answer.body) ? answer.body : []) as Entity[]; // NOTE: the API answers an array of entities
        const total = countOf(answer.headers);
        const columns = columnsOf(entities);
        const rows = new Map(entities.map((e) => [e.id, { entity: e, row: rowOf(e, columns, ctx) }]));
        show(table, entities.length === 0 ? h('p', { class: 'muted' }, 'No entity matches.') : h('table', { class: 'grid entities' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Entity'), ...columns.map((c) => h('th', {}, c)), h('th', {}, 'Last observed'))),
          h('tbody', {}, ...[...rows.values()].map((r) => r.row))));
        show(pager, h('span', { class: 'muted' }, `${entities.length === 0 ? 0 : p.offset + 1}–${p.offset + entities.length} of ${total ?? '?'}`),
          p.offset > 0 ? h('a', { href: hrefOf(type, { ...p, offset: Math.max(0, p.offset - PAGE) }) }, '‹ previous') : null,
          total !== undefined && p.offset + PAGE < total ? h('a', { href: hrefOf(type, { ...p, offset: p.offset + PAGE }) }, 'next ›') : null);
        const map = renderMap(geoFeatures(entities));
        if (map) show(mapBox, card('Map', map));
        stop = await ctx.live.watch({ type }, (changed) => {
          const at = rows.get(changed.id);
          if (!at) return;
          at.entity = { ...at.entity, ...changed };
          const fresh = rowOf(at.entity, columns, ctx);
          fresh.classList.add('flash');
          at.row.replaceWith(fresh);
          at.row = fresh;
        }).catch((err: unknown) => {
          show(liveNote, errorBox(err, 'Live updates off'));
          return undefined;
        });
        if (!alive) stop?.();
      } catch (err) {
        if (alive) show(table, errorBox(err, 'Entities'));
      }
    })();
    return () => {
      alive = false;
      clearInterval(ages);
      stop?.();
    };
  };
}
