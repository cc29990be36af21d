import { expect } from 'chai';
import fc from 'fast-check';
import { openApiDocument } from '../../../schemas/openapi.js';
import { adminToken } from '../../support/admin-api.js';
import { useExportService } from '../../support/exports.js';
import { HTTPS } from '../../support/imports.js';

/** Every byte of a string's UTF-8 percent-encoded (a lone surrogate as U+FFFD, as a client would send). */
const percentEncoded = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const taskId = (kind: 'import' | 'export') =>
  fc
    .string({ unit: fc.constantFrom(...BASE32), minLength: 32, maxLength: 32 })
    .map((s) => `user${kind}_${s}`);

/** Values that have broken parsers before: NUL, bad UTF-8, numbers out of range, path tricks. */
const ODD_VALUES = [
  '',
  '%00',
  'a%00b',
  '%',
  '%E0%A4%A',
  '%C0%80',
  '%ED%A0%80',
  '-1',
  '1e3',
  '0x10',
  'true',
  '[]',
  '..%2F..',
];

const ROUTES = Object.entries(openApiDocument.paths).flatMap(([path, ops]) =>
  Object.keys(ops).map((method) => ({ path, method: method.toUpperCase() as 'GET' | 'POST' | 'DELETE' })),
);

/** A value as it travels in a URL: raw (already encoded, perhaps badly) or to be percent-encoded. */
const value = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }).map(percentEncoded),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
  fc.stringMatching(/^\d{1,25}$/),
  fc
    .tuple(fc.stringMatching(/^\d{1,22}$/), fc.oneof(taskId('import'), taskId('export')))
    .map(([us, id]) => Buffer.from(`${us}/${id}`).toString('base64url')),
  taskId('import'),
  taskId('export'),
  fc.uuid().map(String),
  fc.constantFrom(...ODD_VALUES),
);

/** A request to one documented route: its path parameters and its query filled with odd values. */
const request = fc
  .record({
    route: fc.constantFrom(
      ...Object.entries(openApiDocument.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => ({
          path,
          method: method.toUpperCase() as 'GET' | 'POST' | 'DELETE',
        })),
      ),
    ),
    pathValues: fc.array(value, { minLength: 2, maxLength: 2 }),
    query: fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom('status', 'limit', 'after', 'outcome', 'offset', 'details', 'endpoint', 'task_id'),
          fc.constantFrom('event_id', 'query', 'unknown', '%00', 'limit[]'),
        ),
        value,
      ),
      { maxLength: 4 },
    ),
  })
  .map(({ route, pathValues, query }) => {
    let n = 0;
    const path = route.path.replace(/\{\w+\}/g, () => pathValues[n++] ?? 'x');
    const search = query.map(([name, v]) => `${name}=${v}`).join('&');
    return { method: route.method, url: search ? `${path}?${search}` : path };
  });

/**
 * No query string or path parameter, however odd, gets a 5xx: a bad one is a 4xx that names it.
 * Every route of the OpenAPI document, with its own parameters and others, as an admin would call it.
 */
describe('every route refuses a bad query or path parameter with a 4xx, never a 5xx', function () {
  this.timeout(120_000);
  const service = useExportService('postgres', { settings: { trust_proxy: true } });

  before(async () => {
    // Lists with rows in them, so that cursors and filters reach their statements.
    await service.client().request({
      method: 'POST',
      url: '/_api/admin/users/import',
      token: await adminToken(service.keys()),
      headers: HTTPS,
      body: { identifier: 'email', records: [{ email: 'a@fuzz.test' }] },
    });
  });

  it('answers the forged cursor and the NUL filters that once were 500s with a 400 naming them', async () => {
    const token = await adminToken(service.keys());
    const forged = Buffer.from(`9999999999999999999/userimport_${'A'.repeat(32)}`).toString('base64url');
    for (const url of [
      `/_api/admin/users/import?after=${forged}`,
      `/_api/admin/users/export?after=${forged}`,
      '/_api/admin/webhooks/deliveries?endpoint=a%00b',
      '/_api/admin/webhooks/deliveries?task_id=%00',
    ]) {
      const res = await service.client().request({ method: 'GET', url, token, headers: HTTPS });
      expect(res.statusCode, `${url}: ${res.body}`).to.equal(400);
      const name = /[?&](\w+)=/.exec(url)?.[1] ?? '';
      expect(res.body, url).to.include(name);
    }
  });

  it('answers each parameter of each route, given each odd value, below 500', async () => {
    const token = await adminToken(service.keys());
    const forged = (us: string) => Buffer.from(`${us}/userimport_${'A'.repeat(32)}`).toString('base64url');
    const odd = [
      ...ODD_VALUES,
      forged('9999999999999999999'),
      forged('253402300800000000'),
      forged('0'),
      '9223372036854775808',
      percentEncoded('\ud800'),
      'x'.repeat(3000),
    ];
    const names = [
      'status',
      'limit',
      'after',
      'outcome',
      'offset',
      'details',
      'endpoint',
      'task_id',
      'event_id',
    ];
    for (const { path, method } of ROUTES) {
      for (const v of odd) {
        const urls = [
          path.replace(/\{\w+\}/g, v),
          ...names.map((name) => `${path.replace(/\{\w+\}/g, 'x')}?${name}=${v}`),
        ];
        for (const url of urls) {
          const res = await service
            .client()
            .request({ method, url, token, headers: HTTPS, ...(method === 'POST' ? { body: {} } : {}) });
          expect(res.statusCode, `${method} ${url}: ${res.body}`).to.be.below(500);
        }
      }
    }
  });

  it('answers every generated request below 500', async () => {
    const token = await adminToken(service.keys());
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async ({ method, url }) => {
        const res = await service.client().request({
          method,
          url,
          token,
          headers: HTTPS,
          ...(method === 'POST' ? { body: {} } : {}),
        });
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        expect(res.statusCode, `${method} ${url}: ${res.body}`).to.be.below(500);
      }),
      { numRuns: 600, endOnFailure: true },
    );
    // The run reached past the first checks: some requests were answered, some refused.
    expect(
      [...seen.keys()].some((s) => s < 300),
      JSON.stringify([...seen]),
    ).to.equal(true);
    expect(seen.get(400) ?? 0).to.be.above(0);
  });
});
