import { graphql } from './admin-api.js';
import { h, labelled, show, table } from './dom.js';

const LIST_FIELDS = 'id endUserAccountID formattedName createdAt lastLoginAt isDisabled';

interface ListedUser {
  id: string;
  endUserAccountID: string | null;
  formattedName: string | null;
  createdAt: string;
  lastLoginAt: string | null;
  isDisabled: boolean;
}

const userLink = (user: ListedUser) =>
  h('a', { href: `#/users/${encodeURIComponent(user.id)}` }, user.endUserAccountID ?? user.id);

const userRows = (users: readonly ListedUser[]) =>
  users.map((u) => [
    userLink(u),
    u.formattedName ?? '',
    u.createdAt,
    u.lastLoginAt ?? '',
    u.isDisabled ? 'disabled' : '',
  ]);

const USER_HEADERS = ['User', 'Name', 'Created', 'Last login', 'State'];

/**
 * Users: `users(searchKeyword)` with role and group filters and sorting, a page at a time; and
 * the three exact lookups (a standard attribute, a login id, an OAuth connection).
 */
export function usersScreen(main: HTMLElement, fail: (err: unknown) => void): void {
  const keyword = h('input', { type: 'search', id: 'users-keyword', autocomplete: 'off' });
  const roles = h('input', { type: 'text', id: 'users-roles', placeholder: 'admin, staff' });
  const groups = h('input', { type: 'text', id: 'users-groups' });
  const sortBy = h(
    'select',
    { id: 'users-sort' },
    h('option', { value: 'CREATED_AT' }, 'Created'),
    h('option', { value: 'LAST_LOGIN_AT' }, 'Last login'),
  );
  const direction = h(
    'select',
    { id: 'users-direction' },
    h('option', { value: 'DESC' }, 'Newest first'),
    h('option', { value: 'ASC' }, 'Oldest first'),
  );
  const results = h('div', { 'aria-live': 'polite', id: 'users-results' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More');
  let after: string | null = null;
  let shown: ListedUser[] = [];
  const keys = (input: HTMLInputElement) =>
    input.value
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k !== '');

  const search = async (append: boolean) => {
    try {
      const data = await graphql<{
        users: {
          totalCount: number;
          edges: { node: ListedUser }[];
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
        };
      }>(
        `query ($k: String, $after: String, $sortBy: UserSortBy, $dir: SortDirection, $roles: [String!], $groups: [String!]) {
           users(searchKeyword: $k, first: 20, after: $after, sortBy: $sortBy, sortDirection: $dir, roleKeys: $roles, groupKeys: $groups) {
             totalCount edges { node { ${LIST_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
        {
          k: keyword.value || null,
          after: append ? after : null,
          sortBy: sortBy.value,
          dir: direction.value,
          roles: keys(roles).length ? keys(roles) : null,
          groups: keys(groups).length ? keys(groups) : null,
        },
      );
      const page = data.users;
      shown = append ? [...shown, ...page.edges.map((e) => e.node)] : page.edges.map((e) => e.node);
      after = page.pageInfo.endCursor;
      more.hidden = !page.pageInfo.hasNextPage;
      show(
        results,
        h('p', {}, `${page.totalCount} users`),
        table('Users found', USER_HEADERS, userRows(shown)),
      );
    } catch (err) {
      fail(err);
    }
  };
  more.addEventListener('click', () => void search(true));

  const lookupKind = h(
    'select',
    { id: 'lookup-kind' },
    h('option', { value: 'email' }, 'Email (standard attribute)'),
    h('option', { value: 'phone_number' }, 'Phone number (standard attribute)'),
    h('option', { value: 'preferred_username' }, 'Username (standard attribute)'),
    h('option', { value: 'login:email' }, 'Login id: email'),
    h('option', { value: 'login:phone' }, 'Login id: phone'),
    h('option', { value: 'login:username' }, 'Login id: username'),
    h('option', { value: 'oauth' }, 'OAuth connection'),
  );
  const lookupValue = h('input', { type: 'text', id: 'lookup-value', autocomplete: 'off' });
  const alias = h('input', { type: 'text', id: 'lookup-alias', placeholder: 'google' });
  const aliasLabel = labelled('Provider alias', alias);
  aliasLabel.hidden = true;
  lookupKind.addEventListener('change', () => {
    aliasLabel.hidden = lookupKind.value !== 'oauth';
  });
  const found = h('div', { 'aria-live': 'polite', id: 'lookup-results' });
  const lookup = async () => {
    try {
      const kind = lookupKind.value;
      let users: ListedUser[];
      if (kind === 'oauth') {
        const data = await graphql<{ getUserByOAuth: ListedUser | null }>(
          `query ($a: String!, $s: String!) { getUserByOAuth(oauthProviderAlias: $a, oauthProviderUserID: $s) { ${LIST_FIELDS} } }`,
          { a: alias.value, s: lookupValue.value },
        );
        users = data.getUserByOAuth ? [data.getUserByOAuth] : [];
      } else if (kind.startsWith('login:')) {
        const data = await graphql<{ getUserByLoginID: ListedUser | null }>(
          `query ($k: String!, $v: String!) { getUserByLoginID(loginIDKey: $k, loginIDValue: $v) { ${LIST_FIELDS} } }`,
          { k: kind.slice(6), v: lookupValue.value },
        );
        users = data.getUserByLoginID ? [data.getUserByLoginID] : [];
      } else {
        const data = await graphql<{ getUsersByStandardAttribute: ListedUser[] }>(
          `query ($n: String!, $v: String!) { getUsersByStandardAttribute(attributeName: $n, attributeValue: $v) { ${LIST_FIELDS} } }`,
          { n: kind, v: lookupValue.value },
        );
        users = data.getUsersByStandardAttribute;
      }
      show(
        found,
        users.length === 0 ? h('p', {}, 'No user.') : table('Users looked up', USER_HEADERS, userRows(users)),
      );
    } catch (err) {
      fail(err);
    }
  };

  show(
    main,
    h('h2', {}, 'Users'),
    h(
      'form',
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void search(false);
        },
        role: 'search',
      },
      h(
        'section',
        {},
        h(
          'div',
          { class: 'row' },
          labelled('Keyword', keyword),
          labelled('Role keys', roles),
          labelled('Group keys', groups),
          labelled('Sort by', sortBy),
          labelled('Order', direction),
          h('button', { type: 'submit', id: 'users-search' }, 'Search'),
        ),
      ),
    ),
    results,
    more,
    h('h3', {}, 'Exact lookup'),
    h(
      'form',
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void lookup();
        },
      },
      h(
        'section',
        {},
        h(
          'div',
          { class: 'row' },
          labelled('Look up by', lookupKind),
          aliasLabel,
          labelled('Value', lookupValue),
          h('button', { type: 'submit' }, 'Look up'),
        ),
      ),
    ),
    found,
  );
  keyword.focus();
}

interface UserPage extends ListedUser {
  updatedAt: string;
  standardAttributes: Record<string, unknown>;
  customAttributes: Record<string, unknown>;
  verifiedClaims: { name: string; value: string }[];
  loginIDs: { id: string; claims: Record<string, unknown> }[];
  oauthConnections: { id: string; claims: Record<string, unknown> }[];
  roles: { edges: { node: { key: string; name: string | null } }[] } | null;
  groups: { edges: { node: { key: string; name: string | null } }[] } | null;
}

const attributes = (values: Record<string, unknown>) =>
  Object.keys(values).length === 0
    ? h('p', { class: 'none' }, 'None.')
    : h(
        'dl',
        {},
        Object.entries(values).flatMap(([name, value]) => [
          h('dt', {}, name),
          h('dd', {}, typeof value === 'string' ? value : JSON.stringify(value)),
        ]),
      );

/** A table of the rows, or "None." when there are none. */
const rowsOrNone = (caption: string, headers: readonly string[], rows: Parameters<typeof table>[2]) =>
  rows.length === 0 ? h('p', { class: 'none' }, 'None.') : table(caption, headers, rows);

/** A claim of the service's namespace by its last parts (`login_id/key`), as text. */
const claim = (claims: Record<string, unknown>, name: string): string => {
  const key = Object.keys(claims).find((k) => k.endsWith(`/claims/${name}`));
  const value = key === undefined ? undefined : claims[key];
  return typeof value === 'string' ? value : '';
};

/** Every claim, folded: opened on demand, one member a line. */
const claimsView = (claims: Record<string, unknown>) =>
  h('details', {}, h('summary', {}, 'All claims'), h('pre', {}, JSON.stringify(claims, null, 2)));

/** A user's page: attributes, login ids, OAuth connections, roles and groups. */
export async function userScreen(main: HTMLElement, id: string, fail: (err: unknown) => void): Promise<void> {
  try {
    const data = await graphql<{ node: UserPage | null }>(
      `query ($id: ID!) { node(id: $id) { ... on User { ${LIST_FIELDS} updatedAt standardAttributes customAttributes
         verifiedClaims { name value } loginIDs { id claims } oauthConnections { id claims }
         roles(first: 100) { edges { node { key name } } } groups(first: 100) { edges { node { key name } } } } } }`,
      { id },
    );
    const user = data.node;
    if (!user) {
      show(main, h('h2', {}, 'User'), h('p', { class: 'error' }, 'No such user.'));
      return;
    }
    const keyed = (connection: UserPage['roles']) =>
      (connection?.edges ?? []).map((e) => [e.node.key, e.node.name ?? '']);
    show(
      main,
      h('h2', { id: 'user-heading' }, user.endUserAccountID ?? user.id),
      h('p', {}, h('a', { href: '#/users' }, '← Users')),
      h(
        'section',
        {},
        h('h3', {}, 'Account'),
        attributes({
          id: user.id,
          created: user.createdAt,
          updated: user.updatedAt,
          'last login': user.lastLoginAt ?? '',
          disabled: user.isDisabled,
        }),
      ),
      h('section', {}, h('h3', {}, 'Standard attributes'), attributes(user.standardAttributes)),
      h('section', {}, h('h3', {}, 'Custom attributes'), attributes(user.customAttributes)),
      h(
        'section',
        {},
        h('h3', {}, 'Login ids'),
        rowsOrNone(
          'Login ids',
          ['Kind', 'Value', 'Id', 'Claims'],
          user.loginIDs.map((l) => [
            claim(l.claims, 'login_id/key'),
            claim(l.claims, 'login_id/original_value') || claim(l.claims, 'login_id/value'),
            h('code', { class: 'id' }, l.id),
            claimsView(l.claims),
          ]),
        ),
      ),
      h(
        'section',
        {},
        h('h3', {}, 'OAuth connections'),
        rowsOrNone(
          'OAuth connections',
          ['Provider', 'Subject', 'Email', 'Id', 'Claims'],
          user.oauthConnections.map((o) => [
            claim(o.claims, 'oauth/provider_alias'),
            claim(o.claims, 'oauth/subject_id'),
            typeof o.claims.email === 'string' ? o.claims.email : '',
            h('code', { class: 'id' }, o.id),
            claimsView(o.claims),
          ]),
        ),
      ),
      h(
        'section',
        {},
        h('h3', {}, 'Verified claims'),
        rowsOrNone(
          'Verified claims',
          ['Claim', 'Value'],
          user.verifiedClaims.map((c) => [c.name, c.value]),
        ),
      ),
      h('section', {}, h('h3', {}, 'Roles'), rowsOrNone('Roles', ['Key', 'Name'], keyed(user.roles))),
      h('section', {}, h('h3', {}, 'Groups'), rowsOrNone('Groups', ['Key', 'Name'], keyed(user.groups))),
    );
  } catch (err) {
    fail(err);
  }
}
