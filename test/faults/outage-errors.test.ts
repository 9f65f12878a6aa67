import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { asOutage, isPostgresOutage, isRedisOutage, StoreUnavailable } from '../../src/storage/outage.ts';
import pg from 'pg';
import { freePort } from '../support/server.ts';
import { needsRedis, openRedisForTest, openTestDatabase, type TestDatabase, type TestRedis } from '../support/stores.ts';

// Which errors mean "the store is unreachable" (503, the process carries on)
// and which are a statement's or our own (they keep their meaning): told
// apart on errors the real drivers give.

describe('store errors', () => {
  let database: TestDatabase;
  before(async () => {
    database = await openTestDatabase();
  });
  after(() => database?.cleanup());

  test('a statement PostgreSQL refuses is not an outage; a connection refused is', async () => {
    const syntax = await database.db.query('SELEC 1').catch((err: unknown) => err);
    assert.equal(isPostgresOutage(syntax), false);
    assert.equal(asOutage('postgres', syntax), syntax, 'passed on unchanged');
    const violation = await database.db.query("SELECT 'x'::int").catch((err: unknown) => err);
    assert.equal(isPostgresOutage(violation), false);

    const port = await freePort();
    const pool = new pg.Pool({ connectionString: `postgres://nobody@127.0.0.1:${port}/none`, connectionTimeoutMillis: 1000 });
    const refused = await pool.query('SELECT 1').catch((err: unknown) => err);
    await pool.end();
    assert.equal(isPostgresOutage(refused), true, String(refused));
    assert.ok(asOutage('postgres', refused) instanceof StoreUnavailable);
  });

  test('SQLSTATEs of a server shutting down, starting or out of connections are outages; others are not', () => {
    const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code, severity: 'FATAL' });
    for (const code of ['08006', '08001', '57P01', '57P02', '57P03', '53300', '58030']) assert.equal(isPostgresOutage(sqlError(code)), true, code);
    for (const code of ['23505', '42601', '22P02', '40001', '42P01']) assert.equal(isPostgresOutage(sqlError(code)), false, code);
    // Node's socket errors carry an errno name, not a SQLSTATE.
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE']) assert.equal(isPostgresOutage(Object.assign(new Error(code), { code })), true, code);
  });

  test('our own mistakes and non-errors are never outages', () => {
    for (const err of [
      new TypeError('x is undefined'),
      new SyntaxError('Unexpected token'),
      new RangeError('bad'),
      'a string',
      undefined,
      null,
      { code: '08006' },
    ]) {
      assert.equal(isPostgresOutage(err), false, String(err));
      assert.equal(isRedisOutage(err), false, String(err));
    }
    const outage = new StoreUnavailable('redis', new Error('down'));
    assert.equal(asOutage('redis', outage), outage, 'already mapped: passed on');
    assert.equal(outage.statusCode, 503);
    assert.equal(outage.message, 'temporarily_unavailable');
    assert.equal(outage.allow_redirect, false);
  });

  describe('Redis', { skip: needsRedis }, () => {
    let store: TestRedis;
    before(async () => {
      store = await openRedisForTest();
    });
    after(() => store?.cleanup());

    test('a reply to a command Redis ran is not an outage; a refused connection and an unwritable client are', async () => {
      await store.redis.set('plain', 'value');
      const wrongType = await store.redis.hget('plain', 'field').catch((err: unknown) => err);
      assert.match((wrongType as Error).message, /WRONGTYPE/);
      assert.equal(isRedisOutage(wrongType), false);

      const port = await freePort();
      const dead = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
      dead.on('error', () => {});
      const refused = await dead.connect().catch((err: unknown) => err);
      assert.equal(isRedisOutage(refused), true);
      const unwritable = await dead.get('x').catch((err: unknown) => err);
      assert.equal(isRedisOutage(unwritable), true, String(unwritable));
      dead.disconnect();

      const loading = Object.assign(new Error('LOADING Redis is loading the dataset in memory'), { name: 'ReplyError' });
      assert.equal(isRedisOutage(loading), true);
    });
  });
});
