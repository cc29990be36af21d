import { assert, expect } from 'chai';
import { recordUserChanges as recordChanges } from '../../../pipeline/db/user-changes.js';
import { useClickHouseSettings } from '../../support/clickhouse.js';
import { eventually } from '../../support/eventually.js';
import { useImportService } from '../../support/imports.js';

// users(searchKeyword ...) as Authgear's portal asks for its user list. Each search backend gets
// the same cases; the index may lag behind writes, so every search waits (within the stated lag)
// for the answer it expects, and fails with the last answer when it never comes.
const LIST = `query ($q: String, $first: Int, $after: String, $sortBy: UserSortBy, $dir: SortDirection,
                     $groupKeys: [String!], $roleKeys: [String!]) {
  users(searchKeyword: $q, first: $first, after: $after, sortBy: $sortBy, sortDirection: $dir,
        groupKeys: $groupKeys, roleKeys: $roleKeys) {
    edges {
      node {
        id createdAt lastLoginAt isAnonymous isDisabled disableReason isDeactivated deleteAt isAnonymized
        anonymizeAt temporarilyDisabledFrom temporarilyDisabledUntil accountValidFrom accountValidUntil
        standardAttributes formattedName endUserAccountID
        groups { totalCount edges { node { id key name } } }
        effectiveRoles { totalCount edges { node { id key name } } }
      }
      cursor
    }
    pageInfo { hasNextPage endCursor }
    totalCount
  }
}`;

interface Page {
  edges: {
    cursor: string;
    node: Record<string, unknown> & { standardAttributes: Record<string, unknown> };
  }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

const LAG_SECONDS = 10;

for (const backend of ['postgres', 'clickhouse'] as const) {
  describe(`users(searchKeyword) on ${backend}`, function () {
    this.timeout(120_000);
    const service =
      backend === 'postgres'
        ? useImportService('postgres')
        : useImportService('kafka', {}, useClickHouseSettings());
    const ids: Record<string, string> = {};
    const idOf = (name: string) => ids[name] ?? assert.fail(`no user ${name}`);

    const list = async (variables: Record<string, unknown>) => {
      const res = await service.client().graphql(LIST, variables);
      return res.errors ? { errors: res.errors } : (res.data?.users as Page);
    };
    const names = (page: Page | { errors: unknown }) =>
      'edges' in page
        ? page.edges.map((e) => e.node.standardAttributes.preferred_username)
        : JSON.stringify(page);
    /** Searches until the usernames found are `expected` (in order), for the lag at most. */
    const expectFound = async (variables: Record<string, unknown>, expected: string[]) => {
      const found = await eventually(
        async () => names(await list(variables)),
        (n) => JSON.stringify(n) === JSON.stringify(expected),
        LAG_SECONDS,
      );
      expect(found, JSON.stringify(variables)).to.deep.equal(expected);
    };
    const importUsers = async (records: unknown[], identifier = 'preferred_username', upsert = false) => {
      const status = await service.run({ identifier, upsert, records });
      const details = status.details as { user_id: string; outcome: string }[];
      for (const [i, d] of details.entries()) {
        expect(d.outcome, JSON.stringify(d)).to.be.oneOf(['inserted', 'updated']);
        ids[(records[i] as { preferred_username: string }).preferred_username] = d.user_id;
      }
    };

    before(async () => {
      for (const key of ['admin', 'auditor']) {
        await service.client().graphql(`mutation { createRole(input: { key: "${key}" }) { role { id } } }`);
      }
      await service
        .client()
        .graphql('mutation { createGroup(input: { key: "staff", name: "Staff" }) { group { id } } }');
      await importUsers([
        {
          preferred_username: 'annlee',
          email: 'Ann.Lee@example.com',
          phone_number: '+14155550101',
          name: 'Ann Lee',
          roles: ['admin'],
          groups: ['staff'],
        },
        {
          preferred_username: 'bobby',
          email: 'bob@Example.org',
          phone_number: '+14155550102',
          roles: ['auditor'],
        },
        { preferred_username: 'emile', given_name: 'Émile', family_name: 'Zola', groups: ['staff'] },
        { preferred_username: 'carol_x', name: 'Carol Ann King' },
      ]);
    });

    it('answers the portal list: every field, newest first, with totalCount', async () => {
      await expectFound({}, ['carol_x', 'emile', 'bobby', 'annlee']);
      const page = (await list({ q: 'annlee' })) as Page;
      expect(page.totalCount).to.equal(1);
      expect(page.pageInfo).to.deep.equal({ hasNextPage: false, endCursor: page.edges[0]?.cursor });
      const node = page.edges[0]?.node as Record<string, unknown>;
      expect(node).to.deep.include({
        id: ids.annlee,
        lastLoginAt: null,
        isAnonymous: false,
        isDisabled: false,
        disableReason: null,
        isDeactivated: false,
        deleteAt: null,
        isAnonymized: false,
        anonymizeAt: null,
        temporarilyDisabledFrom: null,
        temporarilyDisabledUntil: null,
        accountValidFrom: null,
        accountValidUntil: null,
        formattedName: 'Ann Lee',
        endUserAccountID: 'ann.lee@example.com',
      });
      expect(node.groups).to.deep.include({ totalCount: 1 });
      expect((node.groups as Page).edges[0]?.node).to.include({ key: 'staff', name: 'Staff' });
      expect((node.effectiveRoles as Page).edges.map((e) => e.node.key)).to.deep.equal(['admin']);
      const emile = (await list({ q: 'zola' })) as Page;
      expect(emile.edges[0]?.node.formattedName).to.equal('Émile Zola');
      expect(emile.edges[0]?.node.endUserAccountID).to.equal('emile');
    });

    it('matches partially and without regard to case, on email, username, phone, names and id', async () => {
      await expectFound({ q: 'ANN' }, ['carol_x', 'annlee']); // name of both, email of Ann
      await expectFound({ q: 'example.ORG' }, ['bobby']);
      await expectFound({ q: '5550102' }, ['bobby']);
      await expectFound({ q: 'obb' }, ['bobby']);
      await expectFound({ q: 'ÉMILE' }, ['emile']);
      await expectFound({ q: 'zol' }, ['emile']);
      // The random tail of the id: imported users get UUIDv7 ids, whose head is their creation time.
      await expectFound({ q: ids.emile?.slice(24) }, ['emile']);
      await expectFound({ q: '%' }, []);
      await expectFound({ q: '_x' }, ['carol_x']);
      await expectFound({ q: 'ann lee' }, ['annlee']);
      await expectFound({ q: 'nobody-has-this' }, []);
    });

    it('filters by role and group keys, with and without a keyword', async () => {
      await expectFound({ roleKeys: ['admin'] }, ['annlee']);
      await expectFound({ roleKeys: ['admin', 'auditor'] }, ['bobby', 'annlee']);
      await expectFound({ groupKeys: ['staff'] }, ['emile', 'annlee']);
      await expectFound({ groupKeys: ['staff'], q: 'zola' }, ['emile']);
      await expectFound({ groupKeys: ['staff'], roleKeys: ['auditor'] }, []);
      const page = (await list({ groupKeys: ['staff'] })) as Page;
      expect(page.totalCount).to.equal(2);
    });

    it('sorts by creation and by last login, both ways', async () => {
      await expectFound({ sortBy: 'CREATED_AT', dir: 'ASC' }, ['annlee', 'bobby', 'emile', 'carol_x']);
      await expectFound({ sortBy: 'CREATED_AT', dir: 'DESC' }, ['carol_x', 'emile', 'bobby', 'annlee']);
      // Logins are written by the platform's login service; here, by SQL, then marked changed.
      await service
        .db()
        .query(`UPDATE users SET last_login_at = now() - $2 * interval '1 hour' WHERE id = $1`, [
          ids.bobby,
          1,
        ]);
      await service
        .db()
        .query(`UPDATE users SET last_login_at = now() - $2 * interval '1 hour' WHERE id = $1`, [
          ids.emile,
          2,
        ]);
      await recordChanges(service.db(), service.config().project.id, [idOf('bobby'), idOf('emile')]);
      const logins = await eventually(
        async () => names(await list({ sortBy: 'LAST_LOGIN_AT', dir: 'DESC' })),
        (n) => Array.isArray(n) && n[0] === 'bobby' && n[1] === 'emile',
        LAG_SECONDS,
      );
      // Users who never logged in come last when newest first (among them, by id).
      expect((logins as string[]).slice(0, 2)).to.deep.equal(['bobby', 'emile']);
      const ascending = names(await list({ sortBy: 'LAST_LOGIN_AT', dir: 'ASC' })) as string[];
      expect(ascending.slice(2)).to.deep.equal(['emile', 'bobby']);
      const page = (await list({ sortBy: 'LAST_LOGIN_AT', dir: 'DESC', q: 'bobby' })) as Page;
      expect(page.edges[0]?.node.lastLoginAt).to.match(/^\d{4}-\d\d-\d\dT/);
    });

    it('pages with cursors that stay put when users are written meanwhile', async () => {
      await expectFound({}, ['carol_x', 'emile', 'bobby', 'annlee']);
      const first = (await list({ first: 2 })) as Page;
      expect(names(first)).to.deep.equal(['carol_x', 'emile']);
      expect(first.pageInfo.hasNextPage).to.equal(true);
      await importUsers([{ preferred_username: 'dave', name: 'Dave New' }]);
      await expectFound({ q: 'dave' }, ['dave']); // the write reached the index
      const second = (await list({ first: 2, after: first.pageInfo.endCursor })) as Page;
      expect(names(second)).to.deep.equal(['bobby', 'annlee']);
      expect(second.pageInfo.hasNextPage).to.equal(false);
      expect(second.totalCount).to.equal(5);
      // Authgear's portal jumps to a page with a cursor of its own making: base64url("offset:N").
      const offset = Buffer.from('offset:0').toString('base64url');
      expect(names(await list({ first: 2, after: offset }))).to.deep.equal(['carol_x', 'emile']);
      await service.db().query('DELETE FROM users WHERE id = $1', [ids.dave]);
      await recordChanges(service.db(), service.config().project.id, [idOf('dave')]);
      await expectFound({ q: 'dave' }, []);
    });

    it('finds an updated user by the new value and not the old', async () => {
      await importUsers([{ preferred_username: 'carol_x', name: 'Carol Queen' }], 'preferred_username', true);
      await expectFound({ q: 'queen' }, ['carol_x']);
      await expectFound({ q: 'king' }, []);
    });

    it('refuses a cursor of another sort, a foreign cursor, a page too large and a NUL', async () => {
      const first = (await list({ first: 1 })) as Page;
      const cases: [Record<string, unknown>, string][] = [
        [{ after: first.pageInfo.endCursor, sortBy: 'LAST_LOGIN_AT' }, 'InvalidCursor'],
        [{ after: 'bm90IGEgY3Vyc29y' }, 'InvalidCursor'],
        [{ first: 1001 }, 'ValidationFailed'],
        [{ first: -1 }, 'ValidationFailed'],
        [{ q: 'a\u0000b' }, 'ValidationFailed'],
      ];
      for (const [variables, reason] of cases) {
        const res = (await list(variables)) as { errors?: { extensions: unknown }[] };
        expect(res.errors?.[0]?.extensions, JSON.stringify(variables)).to.deep.include({
          errorName: 'Invalid',
          reason,
        });
      }
    });
  });
}
