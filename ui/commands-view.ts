// The commands card of a device's entity (edge.md §6): per command the device declares, its current
// `<name>_status` and `<name>_info` as the entity shows them, and, for a subject that may write the
// entity, a value to send; below, the latest commands issued and their states. An entity that is no
// device's (the broker answers 404) gets no card.

import { ApiError, segment } from './api.js';
import { boundedRefresh, parseCommandValue, readEntityCommands, type EntityCommands } from './commands.js';
import { h, show } from './dom.js';
import { attributeOf, formatAge, formatValue, instantOf, type Entity } from './format.js';
import { errorBox, type ViewContext } from './view.js';

export interface CommandsPanel {
  /** The card, empty until the entity turns out to be a device's. */
  el: HTMLElement;
  /** The entity changed: its states are shown again, and the commands read again (at most once a second). */
  changed(e: Entity): void;
  destroy(): void;
}

/** A command's state as a pill (`PENDING`, `OK`, …). */
const statePill = (state: string): HTMLElement => h('span', { class: `pill state-${state.toLowerCase()}`, 'data-state': state }, state);

function statusCells(e: Entity | undefined, name: string): HTMLElement[] {
  const status = e && attributeOf(e, `${name}_status`);
  const info = e && attributeOf(e, `${name}_info`);
  const at = instantOf(status?.observedAt);
  return [
    h('td', { class: 'status' }, status && typeof status.value === 'string' ? statePill(status.value) : h('span', { class: 'muted' }, '–')),
    at === undefined ? h('td', { class: 'muted' }, '–') : h('td', { class: 'age', title: status?.observedAt ?? '' }, `${formatAge(Date.now() - at)} ago`),
    h('td', { class: 'value info' }, info ? formatValue(info) : ''),
  ];
}

const plainValue = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

function recentTable(data: EntityCommands): HTMLElement {
  if (data.recent.length === 0) return h('p', { class: 'muted' }, 'No command issued yet.');
  return h('table', { class: 'grid recent' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Issued'), h('th', {}, 'Command'), h('th', {}, 'Value'), h('th', {}, 'State'))),
    h('tbody', {}, ...data.recent.map((r) => h('tr', { 'data-id': r.id },
      h('td', { class: 'age', title: r.issuedAt }, `${formatAge(Date.now() - (instantOf(r.issuedAt) ?? Date.now()))} ago`),
      h('td', {}, r.name), h('td', { class: 'value' }, plainValue(r.value)), h('td', {}, statePill(r.state))))));
}

export function commandsPanel(ctx: ViewContext, id: string, current: () => Entity | undefined): CommandsPanel {
  const el = h('div', {});
  let alive = true;
  let data: EntityCommands | undefined;
  /** The rows of the declared commands, by name (kept while the commands stay the same, so a value being typed stays). */
  const rows = new Map<string, HTMLTableRowElement>();
  const recentBox = h('div', {});
  let shape = '';

  const send = async (name: string, input: HTMLInputElement, note: HTMLElement, button: HTMLButtonElement): Promise<void> => {
    const parsed = parseCommandValue(input.value);
    if ('error' in parsed) {
      show(note, h('div', { class: 'error', role: 'alert' }, parsed.error));
      return;
    }
    button.disabled = true;
    show(note);
    try {
      // The attribute's update (PATCH); its first command appends it, as an update needs it to exist.
      const attribute = { type: 'Property', value: parsed.value };
      const e = current();
      if (e !== undefined && attributeOf(e, name) !== undefined) await ctx.api.send('PATCH', `/entities/${segment(id)}/attrs/${segment(name)}`, attribute);
      else await ctx.api.send('POST', `/entities/${segment(id)}/attrs`, { [name]: attribute });
      if (alive) show(note, h('span', { class: 'muted sent' }, 'Sent.'));
      refresh.request();
    } catch (err) {
      if (alive) show(note, errorBox(err, `Send ${name}`));
    } finally {
      button.disabled = false;
    }
  };

  const rowOf = (name: string, writable: boolean): HTMLTableRowElement => {
    const row = h('tr', { 'data-command': name }, h('td', {}, name), ...statusCells(current(), name));
    if (writable) {
      const input = h('input', { type: 'text', class: 'command-value', placeholder: 'value (JSON or a word)', 'aria-label': `Value of ${name}` });
      const button = h('button', { type: 'submit' }, 'Send');
      const note = h('div', { class: 'send-note' });
      const form = h('form', { class: 'inline send', onsubmit: (ev: Event) => {
        ev.preventDefault();
        void send(name, input, note, button);
      } }, input, button);
      row.append(h('td', {}, form, note));
    }
    return row;
  };

  /** The card again when the commands or the right to send changed; else only the states and the recent list. */
  const render = (d: EntityCommands): void => {
    const nextShape = JSON.stringify([d.commands.map((c) => c.name), d.writable]);
    if (nextShape !== shape) {
      shape = nextShape;
      rows.clear();
      for (const c of d.commands) rows.set(c.name, rowOf(c.name, d.writable));
      const head = h('tr', {}, h('th', {}, 'Command'), h('th', {}, 'Status'), h('th', {}, 'Since'), h('th', {}, 'Info'), d.writable ? h('th', {}, 'Send') : null);
      show(el, h('section', { class: 'card commands' },
        h('div', { class: 'card-head' }, h('h2', {}, 'Commands'), h('span', { class: 'muted' }, `device ${d.deviceId}`)),
        h('div', { class: 'table-wrap' }, h('table', { class: 'grid commands' }, h('thead', {}, head), h('tbody', {}, ...rows.values()))),
        h('h3', {}, 'Recent'), recentBox));
    } else {
      states();
    }
    show(recentBox, recentTable(d));
  };

  /** The states shown again from the entity. */
  const states = (): void => {
    const e = current();
    for (const [name, row] of rows) {
      const cells = row.querySelectorAll(':scope > td');
      const fresh = statusCells(e, name);
      fresh.forEach((cell, i) => cells[i + 1]?.replaceWith(cell));
    }
  };

  /** The latest read: an answer that comes after a later one's is dropped. */
  let seq = 0;
  const load = async (): Promise<void> => {
    const mine = ++seq;
    try {
      const answer = readEntityCommands((await ctx.api.edgeld('/commands', { entity: id })).body);
      if (!alive || mine !== seq) return;
      data = answer !== undefined && answer.commands.length > 0 ? answer : undefined;
      if (data === undefined) {
        shape = '';
        show(el);
      } else render(data);
    } catch (err) {
      if (!alive || mine !== seq) return;
      data = undefined;
      shape = '';
      // No device's entity (404), or commands out of reach (401 without a token): no card, silently.
      if (err instanceof ApiError && (err.status === 404 || err.status === 401)) show(el);
      else show(el, errorBox(err, 'Commands'));
    }
  };
  const refresh = boundedRefresh(() => void load(), 1000);
  refresh.request();
  const ages = setInterval(() => data !== undefined && states(), 5000);

  return {
    el,
    changed() {
      if (data !== undefined) states();
      refresh.request();
    },
    destroy() {
      alive = false;
      refresh.cancel();
      clearInterval(ages);
    },
  };
}
