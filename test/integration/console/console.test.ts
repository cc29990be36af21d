/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser, on its DOM.
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { ElementHandle, Page } from 'puppeteer-core';
import { connect } from '../../../cli/service-client.js';
import { devAdminToken } from '../../../pipeline/development-keys.js';
import { verifyPassword } from '../../../pipeline/passwords/verify-password.js';
import { useApiProcess } from '../../support/api-process.js';
import { testBlobConnectionString, uniqueContainer } from '../../support/blob-containers.js';
import {
  accessibilityViolations,
  chooseFileWithKey,
  tabTo,
  textOnceIn,
  useBrowser,
} from '../../support/browser.js';
import { useTestSchema } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';

/**
 * Where the tests leave a picture of each screen: outside the tracked tree, so that a test run
 * changes no file of the checkout. `make screenshots` writes them into docs/console on purpose.
 */
const SCREENSHOTS = path.resolve(process.env.SCREENSHOTS_DIR ?? '.screenshots/console');

/**
 * The web console in a real headless Chromium against a real service (`make start`'s shape on a
 * test schema, over HTTPS): sign in, import a CSV with a column mapping through a dry run, export
 * three fields, find the imported user, and the import again with the keyboard alone.
 */
describe('web console', function () {
  this.timeout(180_000);
  const db = useTestSchema();
  const api = useApiProcess(() => db.schema, {
    AZURE_STORAGE_CONNECTION_STRING: testBlobConnectionString(),
    AZURE_STORAGE_CONTAINER: uniqueContainer(),
  });
  const browser = useBrowser();
  const files = mkdtempSync(path.join(tmpdir(), 'console-files-'));
  after(() => rmSync(files, { recursive: true, force: true }));
  const page = () => browser.page();
  const open = (hash: string) => page().goto(`${api().httpsUrl}/console/${hash}`, { waitUntil: 'load' });
  /** A picture of the screen, and its accessibility audit: no WCAG 2 A or AA rule broken. */
  const shoot = async (name: string) => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page().screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    expect(await accessibilityViolations(page()), `the ${name} screen's accessibility`).to.deep.equal([]);
  };

  afterEach(function () {
    // Errors the API answers are shown in the page; a script error or a refused load never is.
    const unexpected = browser.errors().filter((e) => !/status of (4\d\d)/.test(e));
    expect(unexpected, `script errors in ${this.currentTest?.title}`).to.deep.equal([]);
  });

  before(async () => {
    // A role for the file's records to name; one record names a role the project lacks.
    await db().query(
      `INSERT INTO roles (id, project_id, key, name) VALUES (gen_random_uuid(), 'default', 'staff', 'Staff')`,
    );
    writeFileSync(
      path.join(files, 'people.csv'),
      [
        'E-mail,Full name,Notes,Roles',
        'ada@console.test,Ada Lovelace,first,staff',
        'alan@console.test,Alan Turing,second,',
        'grace@console.test,Grace Hopper,third,admirals',
      ].join('\n'),
    );
  });

  it('serves the page with a strict Content-Security-Policy and no inline script', async () => {
    const res = await fetch(`${api().url}/console/`);
    expect(res.status).to.equal(200);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).to.include("script-src 'self'");
    expect(policy).to.include("default-src 'none'");
    expect(policy).not.to.include('unsafe-inline');
    const html = await res.text();
    expect(html).to.match(/<script type="module" src="\/console\/console.js"><\/script>/);
    expect(html).not.to.match(/<script>(?!<)/);
  });

  it('signs in with a pasted admin token, and refuses one that does not verify', async () => {
    await open('');
    await page().waitForSelector('#token');
    await shoot('sign-in');
    await page().type('#token', 'not-a-token');
    await page().click('button[type="submit"]');
    await textOnceIn(page(), '#sign-in-message', /Not signed in\. InvalidAdminJWT/);
    const token = await devAdminToken(api().dataDir, 'http://localhost');
    await page().$eval('#token', (e) => {
      (e as HTMLTextAreaElement).value = '';
    });
    await page().type('#token', token);
    await page().click('button[type="submit"]');
    await page().waitForSelector('#import-file');
    expect(await page().$eval('#nav', (e) => (e as HTMLElement).hidden)).to.equal(false);
    // The Import screen before a file is picked shows no empty card.
    const emptyCards = await page().$$eval(
      'main section, main fieldset',
      (cards) =>
        cards.filter((c) => (c as HTMLElement).offsetHeight > 0 && (c.textContent ?? '').trim() === '')
          .length,
    );
    expect(emptyCards).to.equal(0);
    await shoot('import-empty');
  });

  it('imports a CSV under a column mapping: preview, a dry run with a failing reason, the run, the results', async () => {
    await open('#/import');
    const input = (await page().waitForSelector('#import-file')) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(path.join(files, 'people.csv'));
    await page().waitForSelector('#import-mapping:not([hidden]) input');
    // Before mapping, each column is the member its header names: the preview names the column.
    const unmapped = await textOnceIn(page(), '#import-preview', /Problems found before sending/);
    expect(unmapped).to.include(
      'column "Notes" is mapped to "Notes", which is not a member of a record: map it to one, or leave it empty',
    );
    await setMapping(page(), { 'E-mail': 'email', 'Full name': 'name', Notes: '', Roles: 'roles' });
    // The first record exactly as it will be sent: the mapped members, the Notes column left out.
    const preview = await textOnceIn(page(), '#import-preview', /3 records in people\.csv/);
    expect(preview).to.include('"email": "ada@console.test"');
    expect(preview).to.include('"name": "Ada Lovelace"');
    expect(preview).not.to.include('first');
    await shoot('import');

    await page().click('#import-dry-run');
    const dry = await textOnceIn(page(), '#outcome-counts', /would_insert/);
    expect(dry).to.match(/2\s*would_insert/);
    expect(dry).to.match(/1\s*failed/);
    await page().select('#outcome-filter', 'failed');
    const failing = await textOnceIn(page(), '#import-outcomes table', /RoleUnknownKeys/);
    expect(failing).to.match(
      /3\s+failed\s+Roles the project does not have: admirals \(create them first\) \(RoleUnknownKeys\)/,
    );
    await shoot('import-dry-run');

    await page().click('#import-run');
    const ran = await textOnceIn(page(), '#outcome-counts', /inserted/);
    expect(ran).to.match(/2\s*inserted/);
    expect(ran).to.match(/1\s*failed/);
    await page().click('#download-ndjson');
    const results = await browser.downloaded(/^people\.results\.ndjson$/);
    const lines = results.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { position: number; outcome: string; user_id?: string });
    expect(lines.map((l) => [l.position, l.outcome])).to.deep.equal([
      [0, 'inserted'],
      [1, 'inserted'],
      [2, 'failed'],
    ]);
    expect(lines[0]?.user_id).to.be.a('string');
    await page().click('#download-csv');
    const csv = await browser.downloaded(/^people\.results\.csv$/);
    expect(csv.text.split('\n')[0]).to.equal('position,outcome,user_id,reason');
    const { rows } = await db().query<{ email: string }>(
      `SELECT standard_attributes->>'email' AS email FROM users ORDER BY 1`,
    );
    expect(rows.map((r) => r.email)).to.deep.equal(['ada@console.test', 'alan@console.test']);
    // Coming back to the screen shows the tasks this tab started.
    await open('#/tasks');
    await open('#/import');
    await textOnceIn(page(), '#import-started', /people\.csv\s+import\s+userimport_\w+\s+completed/);
  });

  it('lists the tasks, newest first, with their state and outcome; the requests of one run as one row', async () => {
    // Three requests of one run, named as userctl names them (<run>-<n>), each of one record.
    const client = await connect({ dataDir: api().dataDir });
    try {
      for (const n of [0, 1, 2]) {
        const body = JSON.stringify({ identifier: 'email', records: [{ email: `run${n}@console.test` }] });
        const answer = await client.call('POST', '/_api/admin/users/import', body, {
          'idempotency-key': `run-7f3a-${n}`,
        });
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        const { id } = answer.body as { id: string };
        await eventually(
          () => client.call<{ status: string }>('GET', `/_api/admin/users/import/${id}`),
          (read) => read.body.status === 'completed',
        );
      }
    } finally {
      await client.close();
    }
    await open('#/tasks');
    const list = await textOnceIn(page(), 'main table', /3 imports of one run\s+completed/);
    expect(list).to.match(/total 3, failed 0, skipped 0, updated 0, inserted 3/);
    expect(list).to.match(/inserted 2/);
    expect(await page().$$eval('main table tbody tr', (rows) => rows.length)).to.equal(3);
    await page().click('details.run summary');
    const parts = await page().$$eval('details.run li', (items) => items.map((i) => i.textContent ?? ''));
    expect(parts).to.have.length(3);
    expect(parts.every((p) => /^userimport_\w+ completed: total 1, .*inserted 1/.test(p))).to.equal(true);
    await shoot('tasks');
  });

  it('exports three fields to CSV, names checked unique, and downloads the file', async () => {
    await open('#/export');
    await page().waitForSelector('#export-fields li');
    await page().select('#export-pointer', '/name');
    await page().click('#export-add');
    // Two columns named alike are refused before anything is sent.
    const names = await page().$$('#export-fields input');
    await names[2]?.click({ count: 3 });
    await names[2]?.type('email');
    await textOnceIn(page(), 'form [role="alert"]', /Column names must be unique: email/);
    expect(await page().$eval('#export-start', (e) => (e as HTMLButtonElement).disabled)).to.equal(true);
    await names[2]?.click({ count: 3 });
    await names[2]?.type('Name');
    await shoot('export');
    await page().click('#export-start');
    await page().waitForSelector('#export-download', { timeout: 60_000 });
    await page().click('#export-download');
    const file = await browser.downloaded(/userexport_\w+.*\.csv$/);
    const lines = file.text.trim().split('\n');
    expect(lines[0]).to.equal('sub,email,Name');
    expect(
      lines
        .slice(1)
        .map((l) => l.split(',').slice(1).join(','))
        .sort(),
    ).to.deep.equal([
      'ada@console.test,Ada Lovelace',
      'alan@console.test,Alan Turing',
      'run0@console.test,',
      'run1@console.test,',
      'run2@console.test,',
    ]);
    // The task list shows imports and exports together unless one kind is chosen.
    await open('#/tasks');
    const both = await textOnceIn(page(), 'main table', /userexport_/);
    expect(both)
      .to.match(/export\s*userexport_/)
      .and.to.match(/import\s*userimport_/);
    await page().select('#tasks-kind', 'export');
    await page().waitForFunction(
      () => !document.querySelector('main table')?.textContent?.includes('userimport_'),
    );
  });

  it('finds the imported user by a partial keyword and opens its page', async () => {
    await open('#/users');
    await page().waitForSelector('#users-keyword');
    await page().type('#users-keyword', 'lovel');
    await page().click('#users-search');
    await textOnceIn(page(), '#users-results', /1 users/);
    await shoot('users');
    await page().click('#users-results a');
    const heading = await textOnceIn(page(), '#user-heading', /ada@console\.test/);
    expect(heading).to.equal('ada@console.test');
    const body = await textOnceIn(page(), 'main', /Roles/);
    expect(body).to.match(/staff\s+Staff/);
    expect(body).to.include('Ada Lovelace');
    // The login id reads as its kind and value, and its id stays on one line.
    expect(body).to.match(/email\s+ada@console\.test\s+[0-9a-f-]{36}\s+All claims/);
    const idLines = await page().$$eval('td code.id', (ids) => ids.map((id) => id.getClientRects().length));
    expect(idLines).to.have.length.greaterThan(0);
    expect(idLines.every((lines) => lines === 1)).to.equal(true);
    await shoot('user');
  });

  it('imports again with the keyboard alone', async () => {
    writeFileSync(path.join(files, 'more.csv'), 'email,name\nkay@console.test,Kay\n');
    await open('#/import');
    await page().waitForSelector('#import-file');
    await page().evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await tabTo(page(), 'import-file');
    await chooseFileWithKey(page(), 'Space', path.join(files, 'more.csv'));
    await textOnceIn(page(), '#import-preview', /1 records in more\.csv/);
    await tabTo(page(), 'import-upsert');
    await page().keyboard.press('Space');
    await tabTo(page(), 'import-run');
    await page().keyboard.press('Enter');
    await textOnceIn(page(), '#outcome-counts', /1\s*inserted/);
    const { rows } = await db().query(
      `SELECT 1 FROM users WHERE standard_attributes->>'email' = 'kay@console.test'`,
    );
    expect(rows).to.have.length(1);
  });

  it('reads at a phone width', async () => {
    await page().setViewport({ width: 390, height: 844 });
    await open('#/import');
    await page().waitForSelector('#import-file');
    const overflow = await page().evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, 'no sideways scrolling').to.be.at.most(0);
    await shoot('import-phone');
    await page().setViewport({ width: 1280, height: 800 });
  });

  it('signs out, and in again with the development sign-in of this machine', async () => {
    await open('#/import');
    await page().click('#sign-out');
    await page().waitForSelector('#development-sign-in');
    expect(await page().evaluate(() => sessionStorage.length)).to.equal(0);
    await page().click('#development-sign-in');
    await page().waitForSelector('#import-file');
  });

  it('shows an error of the API in words with its reason, never a blank screen', async () => {
    await open('#/users');
    await page().waitForSelector('#users-keyword');
    await page().type('#users-keyword', 'x'.repeat(300));
    await page().click('#users-search');
    await textOnceIn(page(), '#errors', /SearchKeywordTooLong/);
  });

  it("imports another system's file picked as its source: converted in the tab as userctl converts it", async () => {
    // A Keycloak users file: its pbkdf2 credential becomes a PHC string, its OTP secret base32.
    const salt = randomBytes(16);
    const users = [
      {
        username: 'kim',
        email: 'kim@console.test',
        credentials: [
          {
            type: 'password',
            secretData: JSON.stringify({
              value: pbkdf2Sync('kim-pass', salt, 1000, 64, 'sha512').toString('base64'),
              salt: salt.toString('base64'),
            }),
            credentialData: JSON.stringify({ hashIterations: 1000, algorithm: 'pbkdf2-sha512' }),
          },
          {
            type: 'otp',
            secretData: '{"value":"12345678901234567890"}',
            credentialData: '{"subType":"totp"}',
          },
        ],
        realmRoles: ['default-roles-acme', 'staff'],
      },
    ];
    writeFileSync(path.join(files, 'acme-users-0.json'), JSON.stringify({ realm: 'acme', users }));
    await open('#/import');
    const input = (await page().waitForSelector('#import-file')) as ElementHandle<HTMLInputElement>;
    await page().select('#import-source', 'keycloak');
    await input.uploadFile(path.join(files, 'acme-users-0.json'));
    const preview = await textOnceIn(page(), '#import-preview', /1 records in acme-users-0\.json/);
    expect(preview).to.include('"type": "pbkdf2_sha512"');
    expect(preview).to.include('"secret": "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"');
    expect(preview).to.include('"staff"');
    await page().click('#import-run');
    await textOnceIn(page(), '#outcome-counts', /1\s*inserted/);
    const { rows } = await db().query<{ password_hash: string }>(
      `SELECT a.password_hash FROM authenticators a JOIN users u ON u.id = a.user_id
        WHERE a.type = 'password' AND u.standard_attributes->>'email' = 'kim@console.test'`,
    );
    expect(await verifyPassword(rows[0]?.password_hash ?? '', 'kim-pass')).to.equal(true);

    // Cognito's list-users output: the Google_ user is merged into the user of its email.
    const attributes = (pairs: Record<string, string>) =>
      Object.entries(pairs).map(([Name, Value]) => ({ Name, Value }));
    const listUsers = {
      Users: [
        { Username: 'lou', Attributes: attributes({ email: 'lou@console.test' }), UserStatus: 'CONFIRMED' },
        {
          Username: 'Google_9',
          Attributes: attributes({
            email: 'lou@console.test',
            identities: JSON.stringify([{ providerName: 'Google', userId: '9' }]),
          }),
          UserStatus: 'EXTERNAL_PROVIDER',
        },
      ],
    };
    writeFileSync(path.join(files, 'cognito-users.json'), JSON.stringify(listUsers));
    await page().select('#import-source', 'cognito');
    await input.uploadFile(path.join(files, 'cognito-users.json'));
    const merged = await textOnceIn(page(), '#import-preview', /2 records in cognito-users\.json/);
    expect(merged).to.include('1 merged into the user of their email');
    expect(merged).to.include('"provider_subject_id": "9"');
  });

  it('imports a file over its in-tab limit as one task of the service, uploaded in blocks', async () => {
    // Three users, then a blank line of 101 MiB (skipped as blank): over the tab's 100 MB.
    const big = path.join(files, 'big.ndjson');
    const users = ['kim', 'lee', 'max'].map((n) => JSON.stringify({ email: `${n}@big.console.test` }));
    writeFileSync(big, `${users.join('\n')}\n${' '.repeat(101 * 1024 * 1024)}\n`);
    await open('#/import');
    const input = (await page().waitForSelector('#import-file')) as ElementHandle<HTMLInputElement>;
    await page().select('#import-source', '');
    await input.uploadFile(big);
    const preview = await textOnceIn(page(), '#import-preview', /the service imports it as one task/);
    expect(preview).to.include('its first 3 records here');
    await page().click('#import-run');
    const ran = await textOnceIn(page(), '#outcome-counts', /inserted/);
    expect(ran).to.match(/3\s*inserted/);
    const { rows } = await db().query(
      "SELECT count(*)::int AS n FROM users WHERE standard_attributes->>'email' LIKE '%@big.console.test'",
    );
    expect(rows[0].n).to.equal(3);
    const { rows: tasks } = await db().query(
      "SELECT count(*)::int AS n FROM import_files WHERE task_id IS NOT NULL AND (source->>'bytes')::bigint > 100 * 1024 * 1024",
    );
    expect(tasks[0].n, 'one task read the whole file').to.equal(1);
  });
});

/** Sets each CSV column's member in the mapping table. */
async function setMapping(page: Page, members: Record<string, string>): Promise<void> {
  for (const [column, member] of Object.entries(members)) {
    const input = await page.$(`#import-mapping input[aria-label="Member for column ${column}"]`);
    if (!input) throw new Error(`no mapping for column ${column}`);
    await input.click({ count: 3 });
    await page.keyboard.press('Backspace');
    if (member) await input.type(member);
    await input.evaluate((e) => e.dispatchEvent(new Event('change')));
  }
}
