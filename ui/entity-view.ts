// One entity: every attribute with its value, unit, observedAt and age; a chart of a numeric
// attribute from the temporal API (raw for an hour, averages per minute for a day and per hour for a
// month); a map of its GeoProperties; the commands of a device's entity; all kept current by live
// notifications.

import { segment } from './api.js';
import { createChart } from './chart.js';
import { commandsPanel, type CommandsPanel } from './commands-view.js';
import { h, show } from './dom.js';
import {
  attributeOf, attributesOf, formatAge, formatValue, instantOf, newestObservedAt, numericValue, subAttributesOf, typeNames, unitSymbol, type Attribute, type Entity,
} from './format.js';
import { renderMap } from './map-view.js';
import { RANGES, RANGE_NAMES, seriesOf, temporalParams, type RangeName } from './temporal.js';
import { card, entityHref, errorBox, loading, typeHref, type View, type ViewContext } from './view.js';

function valueCell(a: Attribute): HTMLElement {
  const main = a.type === 'Relationship' && typeof a.object === 'string'
    ? h('a', { href: entityHref(a.object) }, a.object)
    : document.createTextNode(formatValue(a));
  const subs = subAttributesOf(a);
  return h('td', { class: 'value' }, main,
    subs.length > 0 ? h('div', { class: 'muted sub' }, subs.map((s) => `${s.name}: ${formatValue(s.attr)}`).join(' · ')) : null);
}

function observedCell(a: Attribute): HTMLElement {
  const at = instantOf(a.observedAt);
  if (at === undefined) return h('td', { class: 'muted' }, '–');
  return h('td', { title: a.observedAt ?? '' }, `${formatAge(Date.now() - at)} ago`);
}

/** The numeric attributes a chart can show. */
const chartable = (e: Entity): string[] => attributesOf(e).filter(({ instances }) => instances.some((a) => numericValue(a) !== undefined)).map((a) => a.name);

function attributesTable(e: Entity, charted: string | undefined, pick: (name: string) => void): HTMLElement {
  const numeric = new Set(chartable(e));
  const rows = attributesOf(e).flatMap(({ name, instances }) => instances.map((a) => h('tr', { 'data-attr': name, class: name === charted ? 'charted' : '' },
    h('td', {}, name, a.datasetId ? h('span', { class: 'muted' }, ` [${a.datasetId}]`) : null),
    h('td', { class: 'muted' }, a.type), valueCell(a), observedCell(a),
    h('td', {}, numeric.has(name) && name !== charted ? h('button', { type: 'button', class: 'link', onclick: () => pick(name) }, 'chart') : null))));
  return h('table', { class: 'grid attrs' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Attribute'), h('th', {}, 'Kind'), h('th', {}, 'Value'), h('th', {}, 'Observed'), h('th', {}, ''))),
    h('tbody', {}, ...rows));
}

interface ChartPanel { el: HTMLElement; load(attr: string, range: RangeName): Promise<void>; live(e: Entity): void; attr(): string | undefined; destroy(): void }

function chartPanel(ctx: ViewContext, id: string, unitOf: (attr: string) => string | undefined): ChartPanel {
  const chart = createChart();
  const status = h('span', { class: 'muted chart-status' });
  const buttons = RANGE_NAMES.map((r) => h('button', { type: 'button', class: 'seg', 'data-range': r, onclick: () => void panel.load(attr ?? '', r) }, RANGES[r].label));
  const title = h('h2', {}, 'History');
  const el = h('section', { class: 'card' }, h('div', { class: 'card-head' }, title, h('div', { class: 'segs' }, ...buttons)), chart.el, status);
  let attr: string | undefined;
  let range: RangeName = '1h';
  let seq = 0;
  const panel: ChartPanel = {
    el,
    attr: () => attr,
    async load(a, r) {
      attr = a;
      range = r;
      const mine = ++seq;
      for (const b of buttons) b.classList.toggle('on', b.dataset['range'] === r);
      const unit = unitOf(a);
      show(title, `History of ${a}`, unit ? h('span', { class: 'muted' }, ` (${unit})`) : null);
      show(status, 'Loading…');
      try {
        const now = Date.now();
        const answer = await ctx.api.get(`/temporal/entities/${segment(id)}`, temporalParams(r, a, now));
        if (mine !== seq) return;
        const series = seriesOf(answer.body, a);
        chart.set(series, unit ? `${a} (${unit})` : a, (now - RANGES[r].spanMs) / 1000);
        const partial = answer.status === 206 ? ` · partial answer (${answer.headers.get('Content-Range') ?? '206'})` : '';
        const what = RANGES[r].period ? 'period' : 'instance';
        show(status, series.xs.length === 0 ? 'No instances in this range.' : `${series.xs.length} ${what}${series.xs.length === 1 ? '' : 's'}${partial}`);
      } catch (err) {
        if (mine === seq) show(status, errorBox(err, 'History'));
      }
    },
    live(e) {
      if (attr === undefined || RANGES[range].period !== undefined) return;
      const a = attributeOf(e, attr);
      const y = numericValue(a);
      if (y === undefined) return;
      chart.append((instantOf(a?.observedAt) ?? Date.now()) / 1000, y);
    },
    destroy: () => chart.destroy(),
  };
  return panel;
}

function geoFeatures(e: Entity): Array<{ geometry: unknown; label: string }> {
  return attributesOf(e).flatMap(({ name, instances }) => instances.filter((a) => a.type === 'GeoProperty').map((a) => ({ geometry: a.value, label: name })));
}

export function entityView(id: string, initialAttr: string | undefined): View {
  return (ctx, main) => {
    let alive = true;
    let stop: (() => void) | undefined;
    let entity: Entity | undefined;
    const heading = h('div', {}, loading('the entity'));
    const attrs = h('div', { class: 'table-wrap' });
    const mapBox = h('div', {});
    const liveNote = h('div', { class: 'live-note' });
    const chart = chartPanel(ctx, id, (a) => (entity ? unitSymbol(attributeOf(entity, a)?.unitCode) : undefined));
    const chartBox = h('div', {});
    const commandsBox = h('div', {});
    let commands: CommandsPanel | undefined;
    const render = (): void => {
      if (!entity) return;
      const e = entity;
      const observed = newestObservedAt(e);
      show(heading, h('nav', { class: 'crumbs' }, h('a', { href: '#/' }, 'Types'), ' / ',
        ...typeNames(e).flatMap((t, i) => [i > 0 ? ', ' : '', h('a', { href: typeHref(t) }, t)]), ' / ', e.id),
      h('h1', { class: 'entity-id' }, e.id),
      h('p', { class: 'muted' }, observed === undefined ? 'No observedAt on any attribute.' : `Newest observation ${formatAge(Date.now() - observed)} ago (${new Date(observed).toISOString()})`));
      show(attrs, attributesTable(e, chart.attr(), (name) => {
        void chart.load(name, '1h');
        render();
      }));
    };
    const renderMapOf = (e: Entity): void => {
      const map = renderMap(geoFeatures(e));
      show(mapBox, map ? card('Location', map) : null);
    };
    show(main, heading, card('Attributes', attrs, liveNote), commandsBox, chartBox, mapBox);
    const ages = setInterval(render, 5000);

    void (async () => {
      try {
        entity = (await ctx.api.get(`/entities/${segment(id)}`)).body as Entity; // NOTE: the API answers one entity
        if (!alive) return;
        const numeric = chartable(entity);
        const first = initialAttr !== undefined && numeric.includes(initialAttr) ? initialAttr : numeric[0];
        if (first !== undefined) {
          show(chartBox, chart.el);
          void chart.load(first, '1h');
        }
        render();
        renderMapOf(entity);
        commands = commandsPanel(ctx, id, () => entity);
        show(commandsBox, commands.el);
        const type = typeNames(entity)[0] ?? '';
        stop = await ctx.live.watch({ type, id }, (changed) => {
          if (!entity || changed.id !== id) return;
          entity = { ...entity, ...changed };
          chart.live(changed);
          render();
          commands?.changed(entity);
          if (geoFeatures(changed).length > 0) renderMapOf(entity);
          for (const { name } of attributesOf(changed)) attrs.querySelector(`tr[data-attr="${CSS.escape(name)}"]`)?.classList.add('flash');
        }).catch((err: unknown) => {
          show(liveNote, errorBox(err, 'Live updates off'));
          return undefined;
        });
        if (!alive) stop?.();
      } catch (err) {
        if (alive) show(heading, h('h1', { class: 'entity-id' }, id), errorBox(err, 'Entity'));
      }
    })();
    return () => {
      alive = false;
      clearInterval(ages);
      stop?.();
      chart.destroy();
      commands?.destroy();
    };
  };
}
