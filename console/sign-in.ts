import { ApiProblem, call, session } from './admin-api.js';
import { h, labelled, show } from './dom.js';

/**
 * Sign in: an admin JWT pasted here is kept in this tab's session storage only, once a call with
 * it succeeds. Where the service offers it (its development key, this machine), a development
 * sign-in mints one.
 */
export function signInScreen(main: HTMLElement, signedIn: () => void): void {
  const token = h('textarea', {
    id: 'token',
    name: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
  });
  const message = h('p', { role: 'alert', id: 'sign-in-message' });
  const check = async (value: string) => {
    session.signIn(value);
    try {
      await call('GET', '/_api/admin/users/export?limit=1').catch((err: unknown) => {
        // A service without blob storage still takes the token: only the token is checked here.
        if (err instanceof ApiProblem && err.reason === 'UserExportDisabled') return;
        throw err;
      });
      signedIn();
    } catch (err) {
      session.signOut();
      show(message, h('span', { class: 'error' }, `Not signed in. ${(err as Error).message}`));
    }
  };
  const form = h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        void check(token.value);
      },
    },
    labelled('Admin token (JWT)', token),
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Sign in')),
  );
  const development = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      id: 'development-sign-in',
      onclick: async () => {
        try {
          const { token: minted } = await call<{ token: string }>('POST', '/console/development-token');
          await check(minted);
        } catch (err) {
          show(
            message,
            h('span', { class: 'error' }, `Development sign-in refused. ${(err as Error).message}`),
          );
        }
      },
    },
    'Development sign-in',
  );
  show(
    main,
    h('h2', {}, 'Sign in'),
    h(
      'section',
      {},
      h(
        'p',
        {},
        'Paste an admin JWT of this project. It stays in this tab only and is gone when the tab closes.',
      ),
      form,
      h('p', {}, 'On the embedded default, from this machine: ', development),
      message,
    ),
  );
  token.focus();
}
