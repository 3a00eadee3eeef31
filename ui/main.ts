// The dashboard page: boots the session, the API client and live updates, and routes the URL
// fragment to its views (#/ types, #/type/<type>, #/entity/<id>, #/health, #/login).

import 'uplot/dist/uPlot.min.css';
import './style.css';
import { createApi, type ApiError } from './api.js';
import { byId, h, show } from './dom.js';
import { entitiesView, STALE_CHOICES } from './entities-view.js';
import { entityView } from './entity-view.js';
import { healthView } from './health-view.js';
import { createLive, type LiveConfig, type LiveState } from './live.js';
import { loginView } from './login-view.js';
import { createSession } from './session.js';
import { typesView } from './types-view.js';
import type { View, ViewContext } from './view.js';

const STALE_KEY = 'edgeld.staleAfter';
const DEFAULT_STALE_MS = 900_000;

async function loadConfig(): Promise<LiveConfig | null> {
  try {
    const res = await fetch('config.json', { cache: 'no-store' });
    const body = await res.json() as { mqtt?: LiveConfig | null }; // NOTE: our own /ui/config.json
    return body.mqtt ?? null;
  } catch {
    return null;
  }
}

function staleSetting(): { get(): number; set(ms: number): void } {
  const stored = Number(localStorage.getItem(STALE_KEY));
  let value = STALE_CHOICES.some(([, ms]) => ms === stored) ? stored : DEFAULT_STALE_MS;
  return {
    get: () => value,
    set: (ms) => {
      value = ms;
      localStorage.setItem(STALE_KEY, String(ms));
    },
  };
}

interface Route { path: string[]; query: URLSearchParams }

function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const at = hash.indexOf('?');
  const path = (at === -1 ? hash : hash.slice(0, at)).split('/').filter((p) => p !== '').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return { path, query: new URLSearchParams(at === -1 ? '' : hash.slice(at + 1)) };
}

const LIVE_TEXT: Readonly<Record<LiveState, string>> = { off: 'live: idle', connecting: 'live: connecting', live: 'live', unavailable: 'live: unavailable' };

async function boot(): Promise<void> {
  const session = createSession();
  const api = createApi(session);
  const live = createLive(api, session, await loadConfig());
  const stale = staleSetting();
  const ctx: ViewContext = { api, live, session, staleAfter: stale.get, setStaleAfter: stale.set };
  const main = byId('main');
  let end: () => void = () => undefined;
  let authReason: string | undefined;
  let returnTo = '#/';

  const liveEl = byId('live');
  const showLive = (s: LiveState): void => {
    liveEl.dataset['state'] = s;
    liveEl.textContent = LIVE_TEXT[s];
    liveEl.dataset['watches'] = String(live.watching());
  };
  live.onState(showLive);
  showLive(live.state());

  const who = byId('who');
  const showWho = (): void => {
    const name = session.who();
    show(who, name === undefined ? null : h('span', { class: 'muted' }, name), name === undefined ? null : h('button', {
      type: 'button', class: 'link', onclick: () => {
        session.setToken(undefined);
        showWho();
        location.hash = '#/login';
      },
    }, 'sign out'));
  };
  showWho();

  const tenant = byId<HTMLInputElement>('tenant');
  tenant.value = session.tenant();
  tenant.addEventListener('change', () => {
    // The view's subscription is deleted in the tenant it was made in, before the switch.
    end();
    end = () => undefined;
    session.setTenant(tenant.value);
    route();
  });
  // A page restored from the back-forward cache deleted its subscriptions when it was hidden.
  addEventListener('pageshow', (ev: PageTransitionEvent) => {
    if (ev.persisted) route();
  });

  const viewOf = ({ path, query }: Route): View => {
    const [first, second] = path;
    if (first === 'type' && second !== undefined) {
      return entitiesView(second, { id: query.get('id') ?? '', q: query.get('q') ?? '', offset: Math.max(0, Number(query.get('offset')) || 0) });
    }
    if (first === 'entity' && second !== undefined) return entityView(second, query.get('attr') ?? undefined);
    if (first === 'health') return healthView;
    if (first === 'login') {
      return loginView({
        reason: authReason,
        signedIn: (token) => {
          session.setToken(token);
          authReason = undefined;
          showWho();
          live.restart();
          location.hash = returnTo === '#/login' ? '#/' : returnTo;
        },
      });
    }
    return typesView;
  };

  const route = (): void => {
    end();
    const r = currentRoute();
    for (const a of document.querySelectorAll<HTMLAnchorElement>('header nav a')) {
      a.classList.toggle('on', (a.dataset['section'] === 'health') === (r.path[0] === 'health'));
    }
    end = viewOf(r)(ctx, main);
  };

  api.onUnauthorized((err: ApiError) => {
    authReason = err.detail || err.title;
    if (currentRoute().path[0] === 'login') return;
    returnTo = location.hash || '#/';
    location.hash = '#/login';
  });
  addEventListener('hashchange', route);
  route();
}

void boot();
