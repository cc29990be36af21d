import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createClient } from '@clickhouse/client';
import { expect } from 'chai';
import { configFromDocument } from '../../../pipeline/config.js';
import { recordUserChanges } from '../../../pipeline/db/user-changes.js';
import { useClickHouseSettings } from '../../support/clickhouse.js';
import { testDatabaseUrl } from '../../support/database.js';
import { eventually } from '../../support/eventually.js';
import { useImportService } from '../../support/imports.js';
import { restoreServiceAfter, startService, stopService } from '../../support/services.js';
import { createUser } from '../../support/users.js';

const run = promisify(execFile);

// The ClickHouse index's feed: the reindex command on a live index, and ClickHouse going away.
describe('search index on ClickHouse: reindex and outage', function () {
  this.timeout(180_000);
  restoreServiceAfter('clickhouse');
  const settings = useClickHouseSettings();
  const service = useImportService('kafka', {}, settings);

  const search = async (q: string) => {
    const res = await service
      .client()
      .graphql('query ($q: String) { users(searchKeyword: $q) { totalCount edges { node { id } } } }', { q });
    return res;
  };
  const foundIds = async (q: string) => {
    const res = await search(q);
    const users = res.data?.users as { edges: { node: { id: string } }[] } | undefined;
    return users ? users.edges.map((e) => e.node.id) : [];
  };
  const importUser = async (email: string) => {
    const status = await service.run({ identifier: 'email', records: [{ email }] });
    return (status.details as { user_id: string }[])[0]?.user_id as string;
  };

  it('make search-reindex rebuilds the live index: users written around the feed are found after it', async () => {
    const imported = await importUser('fed@reindex.test');
    expect(
      await eventually(
        () => foundIds('reindex.test'),
        (ids) => ids.length === 1,
        10,
      ),
    ).to.deep.equal([imported]);
    // Written behind the feed's back (no change recorded): the index cannot know it.
    const hidden = await createUser(service.db(), service.config().project, { email: 'hidden@reindex.test' });
    expect(await foundIds('hidden@reindex')).to.deep.equal([]);

    // A row of another project in the live table: a reindex of this project leaves it as it is.
    const clickhouse = createClient({
      url: String(settings.clickhouse_url),
      database: String(settings.clickhouse_database),
    });
    const other = {
      project_id: 'another-project',
      user_id: 'u-other',
      version: 1,
      deleted: 0,
      search_text: 'other@reindex.test',
    };
    await clickhouse.insert({ table: 'users_search', values: [other], format: 'JSONEachRow' });
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', `-c search_path=${service.db.schema}`);
    const { stdout } = await run('make', ['-s', 'search-reindex'], {
      env: {
        ...process.env,
        DATABASE_URL: url.toString(),
        CLICKHOUSE_URL: settings.clickhouse_url,
        CLICKHOUSE_DATABASE: settings.clickhouse_database,
        KAFKA_BROKERS: process.env.TEST_KAFKA_BROKERS,
        KAFKA_TOPIC_PREFIX: service.config().kafkaTopicPrefix,
        LOG_LEVEL: 'warn',
      },
    });
    expect(stdout).to.match(/search-reindex: 2 users indexed/);
    const kept = await clickhouse.query({
      query: `SELECT user_id, search_text FROM users_search FINAL WHERE project_id = 'another-project'`,
      format: 'JSONEachRow',
    });
    expect(await kept.json()).to.deep.equal([{ user_id: 'u-other', search_text: 'other@reindex.test' }]);
    await clickhouse.close();
    expect(await foundIds('hidden@reindex')).to.deep.equal([hidden]);
    expect((await foundIds('reindex.test')).sort()).to.deep.equal([imported, hidden].sort());
    // The feed goes on into the swapped-in table.
    const later = await importUser('later@reindex.test');
    expect(
      await eventually(
        () => foundIds('later@reindex'),
        (ids) => ids.length === 1,
        10,
      ),
    ).to.deep.equal([later]);
  });

  it("files each change under its user's project: another project's user is never found in this one", async () => {
    const beta = configFromDocument({ project: { id: 'beta' } }).project;
    const id = await createUser(service.db(), beta, { email: 'beta-user@feed.test' });
    await recordUserChanges(service.db(), beta.id, [id]);
    const clickhouse = createClient({
      url: String(settings.clickhouse_url),
      database: String(settings.clickhouse_database),
    });
    const filed = await eventually(
      async () =>
        (await (
          await clickhouse.query({
            query: `SELECT project_id FROM users_search FINAL WHERE user_id = '${id}'`,
            format: 'JSONEachRow',
          })
        ).json()) as { project_id: string }[],
      (rows) => rows.length > 0,
      10,
    );
    await clickhouse.close();
    expect(filed).to.deep.equal([{ project_id: 'beta' }]);
    expect(await foundIds('beta-user@feed')).to.deep.equal([]);
  });

  it('with ClickHouse down: lookups answer, users() is a clear 503 error, imports go on, and the index catches up', async () => {
    await stopService('clickhouse');
    const res = await search('anything');
    expect(res.errors?.[0]?.extensions).to.deep.include({
      errorName: 'ServiceUnavailable',
      reason: 'SearchIndexUnavailable',
    });
    const during = await importUser('during@outage.test');
    const lookup = await service
      .client()
      .graphql('{ getUserByLoginID(loginIDKey: "email", loginIDValue: "during@outage.test") { id } }');
    expect(lookup.errors).to.equal(undefined);
    expect(lookup.data).to.deep.equal({ getUserByLoginID: { id: during } });

    await startService('clickhouse');
    const found = await eventually(
      () => foundIds('outage.test'),
      (ids) => ids.length === 1,
      30,
    );
    expect(found).to.deep.equal([during]);
  });
});
