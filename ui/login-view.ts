// Sign-in when the broker asks for a token (401): a user name and password against the built-in
// identity provider (POST /auth/token, password grant) when it is on, or a token pasted from
// elsewhere (Keycloak, scripts/idp.mjs). The token then goes with every request and is the MQTT
// password of the live updates.

import { h, show } from './dom.js';
import type { View } from './view.js';

export interface LoginOptions {
  /** Why sign-in is asked for (the 401's detail), if known. */
  reason: string | undefined;
  /** Called with the new token. */
  signedIn(token: string): void;
}

async function hasIdentityProvider(): Promise<boolean> {
  const res = await fetch('/.well-known/openid-configuration').catch(() => undefined);
  return res?.ok === true;
}

async function passwordGrant(username: string, password: string): Promise<string> {
  const res = await fetch('/auth/token', {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  const body = await res.json().catch(() => ({})) as { access_token?: unknown; error?: unknown; error_description?: unknown }; // NOTE: OAuth answer, read member by member
  if (res.ok && typeof body.access_token === 'string') return body.access_token;
  throw new Error(`${res.status} ${typeof body.error === 'string' ? body.error : 'refused'}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`);
}

export function loginView(opts: LoginOptions): View {
  return (_ctx, main) => {
    const message = h('div', { class: 'error', role: 'alert', hidden: true });
    const fail = (err: unknown): void => {
      message.hidden = false;
      show(message, err instanceof Error ? err.message : String(err));
    };
    const idpBox = h('div', {});
    const token = h('textarea', { name: 'token', rows: 4, placeholder: 'eyJhbGciOi…', 'aria-label': 'Bearer token' });
    const tokenForm = h('form', {
      class: 'stack', onsubmit: (ev: Event) => {
        ev.preventDefault();
        const t = token.value.trim();
        if (t === '') fail('Paste an access token (JWT) first.');
        else opts.signedIn(t);
      },
    }, h('label', {}, 'Access token', token), h('button', { type: 'submit' }, 'Use this token'));
    show(main, h('div', { class: 'login' },
      h('h1', {}, 'Sign in'),
      h('p', { class: 'muted' }, 'Authentication is on: the broker needs a bearer token (401',
        opts.reason ? `: ${opts.reason}` : '', '). The page shows what that subject may read.'),
      message, idpBox, h('section', { class: 'card' }, h('h2', {}, 'Token'), tokenForm)));

    void hasIdentityProvider().then((has) => {
      if (!has) return;
      const user = h('input', { name: 'username', autocomplete: 'username', required: true });
      const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
      show(idpBox, h('section', { class: 'card' }, h('h2', {}, 'User of this gateway'), h('form', {
        class: 'stack', onsubmit: (ev: Event) => {
          ev.preventDefault();
          passwordGrant(user.value, password.value).then(opts.signedIn, fail);
        },
      }, h('label', {}, 'User name', user), h('label', {}, 'Password', password), h('button', { type: 'submit' }, 'Sign in'))));
    });
    return () => undefined;
  };
}
