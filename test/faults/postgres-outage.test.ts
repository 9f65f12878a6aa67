import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { readResponse, type ApiResponse } from '../support/api.ts';
import { sleep, testServer, type TestServer } from '../support/server.ts';
import { needsPostgresServer, startOwnPostgres, type OwnPostgres } from '../support/own-stores.ts';
import { eventually } from '../support/tokens.ts';

// docs/operations.md, "Failure modes": PostgreSQL stopped in immediate mode (a crash: no shutdown
// checkpoint, connections cut) and started again under admin writes. Every
// answer is a 2xx or a 503 code 14 with Retry-After; the process keeps
// running; writes succeed again within 5 s of the restart; and afterwards the
// ledger holds: every acknowledged write is there exactly once, and a write
// whose answer was 503 is either absent or whole (a retry of it meets 409
// ALREADY_EXISTS when its commit went through). The PostgreSQL is this
// test's own (initdb + pg_ctl on a private port and folder).

const WORKERS = 4;

type Outcome = 'acknowledged' | 'in doubt';

describe('PostgreSQL outage and restart', { skip: needsPostgresServer }, () => {
  let postgres: OwnPostgres;
  let server: TestServer;
  let pat: string;

  before(async () => {
    postgres = await startOwnPostgres();
    server = await testServer({ env: { DATABASE_URL: postgres.url }, sharedStores: false });
    pat = server.pat;
  });

  after(async () => {
    await server?.stop();
    await postgres?.cleanup();
  });

  const call = async (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    readResponse(
      await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${pat}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );

  const createMachine = (userName: string) => call('POST', '/management/v1/users/machine', { userName, name: userName });

  test('admin writes across an immediate stop and restart: 503 code 14 meanwhile, and every acknowledged write exactly once afterwards', async () => {
    const reference = await createMachine('ledger-reference');
    assert.equal(reference.status, 200, reference.text);

    const outcomes = new Map<string, Outcome>();
    const unexpected: string[] = [];
    const unavailable: ApiResponse[] = [];
    let running = true;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      for (let n = 0; running; n += 1) {
        const userName = `ledger-${w}-${n}`;
        // A client that got 503 sends the same write again until it gets an answer that settles it.
        for (;;) {
          const answer = await createMachine(userName);
          if (answer.status === 200) {
            outcomes.set(userName, 'acknowledged');
            break;
          }
          if (answer.status === 409 && outcomes.get(userName) === 'in doubt') {
            // The attempt answered 503 committed after all: it must be there once.
            outcomes.set(userName, 'acknowledged');
            break;
          }
          if (answer.status === 503) {
            unavailable.push(answer);
            outcomes.set(userName, 'in doubt');
            if (!running) break;
            await sleep(50);
            continue;
          }
          unexpected.push(`${userName}: ${answer.status} ${answer.text.slice(0, 300)}`);
          break;
        }
      }
    });

    let recoveredIn = Infinity;
    try {
      await sleep(1000);
      await postgres.stop('immediate');
      assert.ok(await eventually(async () => (await call('GET', '/readyz')).status === 503, 5000, 100), '/readyz turns 503 within 5 s');
      assert.ok(await eventually(async () => unavailable.length > 0, 3000, 50), 'writes answer 503 while PostgreSQL is down');
      await sleep(1000);
      const restartedAt = Date.now();
      await postgres.start();
      const probeName = 'ledger-probe';
      assert.ok(
        await eventually(async () => [200, 409].includes((await createMachine(probeName)).status), 5000, 100),
        'writes succeed again within 5 s of the restart',
      );
      recoveredIn = Date.now() - restartedAt;
      await sleep(1000);
    } finally {
      running = false;
      await Promise.all(workers);
    }

    assert.deepEqual(unexpected, [], 'every answer is 200, 503 or (to the retry of a 503) 409');
    assert.ok(recoveredIn <= 5000, `recovered in ${recoveredIn} ms`);
    for (const answer of unavailable) {
      assert.equal(answer.body?.code, 14, answer.text);
      assert.equal(answer.body.details[0].reason, 'UNAVAILABLE');
      assert.equal(answer.headers.get('retry-after'), '5');
    }
    assert.equal((await call('GET', '/readyz')).status, 200);

    // The ledger, read from PostgreSQL itself.
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ user_name: string; users: number; events: number }>(
        `SELECT u.user_name, count(DISTINCT u.id)::int AS users, count(e.position)::int AS events
           FROM users u LEFT JOIN events e ON e.aggregate_id = u.id
          WHERE u.user_name LIKE 'ledger-%' GROUP BY u.user_name`,
      );
      const stored = new Map(rows.map((r) => [r.user_name, r]));
      const eventsPerWrite = stored.get('ledger-reference')!.events;
      assert.ok(eventsPerWrite >= 1, 'a machine user is created with its event');
      const acknowledged = [...outcomes].filter(([, o]) => o === 'acknowledged').map(([name]) => name);
      assert.ok(acknowledged.length > 20, `writes were acknowledged (${acknowledged.length})`);
      assert.ok([...outcomes.values()].includes('in doubt') || unavailable.length > 0, 'some writes met the outage');
      for (const name of acknowledged) {
        const row = stored.get(name);
        assert.ok(row, `acknowledged write ${name} is there`);
        assert.equal(row.users, 1, `${name} exactly once`);
        assert.equal(row.events, eventsPerWrite, `${name} with its events exactly once`);
      }
      for (const [name, outcome] of outcomes) {
        if (outcome !== 'in doubt') continue;
        const row = stored.get(name);
        if (row) assert.equal(row.events, eventsPerWrite, `${name}, answered 503, is whole if it is there at all`);
      }
      for (const row of rows) assert.equal(row.users, 1, `no user name twice (${row.user_name})`);
    } finally {
      await client.end();
    }
  });
});
