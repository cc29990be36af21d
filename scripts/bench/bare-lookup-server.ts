// The lookups with nothing around them: a bare node:http server that runs the API's statements
// (pipeline/db/lookups.ts) and writes the same fields the bench asks the API for, with no Koa, no
// Host or JWT check and no GraphQL. Measured beside the API in the same run, its latency is this
// machine's floor for one HTTP request that makes one Postgres round trip.
//
// POST /<lookup name> with the bench's GraphQL body; only its variables are read.
// Environment: PORT, DATABASE_URL.

import http from 'node:http';
import type { UserRecord } from '../../pipeline/db/lookup-records.js';
import {
  findUsersByLoginId,
  findUsersByOAuth,
  findUsersByStandardAttribute,
} from '../../pipeline/db/lookups.js';
import { createPool } from '../../pipeline/db/pool.js';
import { BENCH_PROJECT } from './bench-schema.js';

const db = createPool({ connectionString: process.env.DATABASE_URL ?? '' });

type Variables = Record<string, string>;

const answers: Record<string, (v: Variables) => Promise<unknown>> = {
  '/getUserByLoginID': async (v) => {
    const [user] = await findUsersByLoginId(db, BENCH_PROJECT, [{ key: v.k ?? '', value: v.v ?? '' }]);
    return user && fields(user);
  },
  '/getUsersByStandardAttribute': async (v) => {
    const [users = []] = await findUsersByStandardAttribute(db, BENCH_PROJECT, 'phone_number', [v.v ?? '']);
    return users.map(fields);
  },
  '/getUserByOAuth': async (v) => {
    const [user] = await findUsersByOAuth(db, BENCH_PROJECT, [
      { providerAlias: v.a ?? '', subjectId: v.s ?? '' },
    ]);
    return user && fields(user);
  },
};

/** The fields of the bench's document: `id createdAt isDisabled standardAttributes loginIDs ...`. */
function fields(user: UserRecord) {
  return {
    id: user.id,
    createdAt: user.created_at.toISOString(),
    isDisabled: user.is_disabled,
    standardAttributes: user.standard_attributes,
    loginIDs: user.login_ids.map(({ id }) => ({ id, type: 'LOGIN_ID' })),
    roles: { edges: user.roles.map(({ key }) => ({ node: { key } })) },
    groups: { edges: user.groups.map(({ key }) => ({ node: { key } })) },
  };
}

const server = http.createServer((req, res) => {
  const answer = answers[req.url ?? ''];
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
  });
  req.on('end', () => {
    const reply = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (!answer) return reply(404, { errors: [{ message: `no lookup at ${req.url}` }] });
    const name = (req.url ?? '').slice(1);
    Promise.resolve()
      .then(() => answer((JSON.parse(body) as { variables: Variables }).variables))
      .then(
        (found) => reply(200, { data: { [name]: found ?? null } }),
        (err: unknown) => reply(500, { errors: [{ message: String(err) }] }),
      );
  });
});

server.listen(Number(process.env.PORT), () => {
  process.stdout.write(`bare lookup server on ${process.env.PORT}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void db.end();
});
