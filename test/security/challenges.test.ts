import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAdapterFactory } from '../../adapters/index.ts';
import { ClientDirectory } from '../../adapters/clients.ts';
import { challengeStore } from '../../src/security/challenges.ts';
import { REDIS_URL, openRedisForTest, openTestDatabase, type TestDatabase, type TestRedis } from '../support/stores.ts';

// A WebAuthn challenge is taken once, also when two submissions of the same
// assertion arrive at the same moment (on one node or two): the store the
// service uses (Redis when set, else PostgreSQL) decides atomically.

describe('WebAuthn challenges are single-use under concurrency', () => {
  let database: TestDatabase;
  let redis: TestRedis | undefined;
  before(async () => {
    database = await openTestDatabase();
    redis = REDIS_URL ? await openRedisForTest() : undefined;
  });
  after(async () => {
    await redis?.cleanup();
    await database?.cleanup();
  });

  test('of ten concurrent takes of one challenge exactly one gets it; an unknown or malformed id gets nothing', async () => {
    const adapter = createAdapterFactory({ db: database.db, redis: redis?.redis, clients: new ClientDirectory(database.db) })('WebAuthnChallenge');
    const store = challengeStore(adapter);
    const id = await store.put({ challenge: 'c2xvd2x5', purpose: 'authenticate' });
    const takes = await Promise.all(Array.from({ length: 10 }, () => store.take(id)));
    assert.equal(takes.filter(Boolean).length, 1);
    assert.deepEqual(takes.find(Boolean), { challenge: 'c2xvd2x5', purpose: 'authenticate' });
    assert.equal(await store.take(id), undefined);
    assert.equal(await store.take('A'.repeat(22)), undefined);
    assert.equal(await store.take('not an id'), undefined);
  });
});
