import { session } from './admin-api.js';
import { h, show } from './dom.js';
import { exportScreen } from './export-screen.js';
import { importScreen } from './import-screen.js';
import { signInScreen } from './sign-in.js';
import { tasksScreen } from './tasks-screen.js';
import { userScreen, usersScreen } from './users-screen.js';

// The console's screens, one per hash route (#/import, #/tasks, #/export, #/users, #/users/<id>),
// behind the sign-in. An error of the API is shown in words with its reason, above the screen.

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const errors = h('div', { role: 'alert', id: 'errors' });

function fail(err: unknown): void {
  show(errors, h('p', { class: 'error' }, err instanceof Error ? err.message : String(err)));
  if (/InvalidAdminJWT/.test(String((err as Error)?.message))) {
    session.signOut();
    route();
  }
}

function route(): void {
  show(errors);
  const hash = location.hash || '#/import';
  if (!session.token()) {
    nav.hidden = true;
    signInScreen(main, () => {
      location.hash = '#/import';
      route();
    });
    main.prepend(errors);
    return;
  }
  nav.hidden = false;
  for (const link of nav.querySelectorAll('a')) {
    if (hash.startsWith(link.getAttribute('href') ?? '')) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const [, screen, id] = hash.split('/');
  if (screen === 'tasks') tasksScreen(main, fail);
  else if (screen === 'export') exportScreen(main, fail);
  else if (screen === 'users' && id) void userScreen(main, decodeURIComponent(id), fail);
  else if (screen === 'users') usersScreen(main, fail);
  else importScreen(main, fail);
  main.prepend(errors);
  main.focus();
}

// Signing out forgets everything this tab kept: the token and the imports it started.
document.getElementById('sign-out')?.addEventListener('click', () => {
  sessionStorage.clear();
  route();
});
window.addEventListener('hashchange', route);
window.addEventListener('unhandledrejection', (event) => fail(event.reason));
route();
