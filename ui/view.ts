// What every view of the page shares: its context (API, live updates, session), the way it shows
// errors (a 401 or 403 says so, never an empty page), and small pieces of markup.

import { ApiError, type Api } from './api.js';
import { h } from './dom.js';
import type { Live } from './live.js';
import type { Session } from './session.js';

export interface ViewContext {
  api: Api;
  live: Live;
  session: Session;
  /** Entities whose newest observedAt is older than this are stale (ms). */
  staleAfter(): number;
  setStaleAfter(ms: number): void;
}

/** A view draws into `main` and returns what ends it (subscriptions, timers) when the page moves on. */
export type View = (ctx: ViewContext, main: HTMLElement) => () => void;

/** An error as the page shows it; 401 and 403 say what they mean. */
export function errorBox(err: unknown, what: string): HTMLElement {
  if (err instanceof ApiError) {
    const kind = err.status === 401 ? 'Not signed in, or the token was refused (401)'
      : err.status === 403 ? 'Not permitted (403)'
        : err.status === 0 ? 'The broker did not answer' : `${err.status} ${err.title}`;
    return h('div', { class: `error status-${err.status}`, role: 'alert', 'data-status': err.status },
      h('strong', {}, `${what}: ${kind}`), err.detail ? h('div', { class: 'detail' }, err.detail) : null);
  }
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, `${what}: `), err instanceof Error ? err.message : String(err));
}

export const loading = (what: string): HTMLElement => h('p', { class: 'muted loading' }, `Loading ${what}…`);

export const typeHref = (type: string): string => `#/type/${encodeURIComponent(type)}`;
export const entityHref = (id: string): string => `#/entity/${encodeURIComponent(id)}`;

/** A value of the `NGSILD-Results-Count` header, or undefined. */
export function countOf(headers: Headers): number | undefined {
  const raw = headers.get('NGSILD-Results-Count');
  return raw === null || !/^\d+$/.test(raw) ? undefined : Number(raw);
}

export function card(title: string, ...children: Array<Node | string | null>): HTMLElement {
  return h('section', { class: 'card' }, h('h2', {}, title), ...children);
}
