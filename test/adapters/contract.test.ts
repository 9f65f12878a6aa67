import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Redis } from 'ioredis';
import { createAdapterFactory, singleTokenGrantId } from '../../adapters/index.ts';
import { PostgresAdapter, deleteExpiredEngineRecords, sweepExpiredEngineRecords } from '../../adapters/postgres.ts';
import { RedisAdapter } from '../../adapters/redis.ts';
import type { Queryable } from '../../src/storage/database.ts';
import {
  needsPostgres,
  needsRedis,
  openPgliteForTest,
  openPostgresForTest,
  openRedisForTest,
  openTestDatabase,
  type TestDatabase,
  type TestRedis,
} from '../support/stores.ts';

interface Backend {
  adapterFor(model: string): Adapter;
  /** Whether the store holds anything under the record's key, readable or not. */
  holds(model: string, id: string): Promise<boolean>;
  cleanup(): Promise<void>;
}

const TTL = 60;
// Records written with a TTL of 1 s are gone this long after the write.
const EXPIRY_WAIT_MS = 1200;

function newId(): string {
  return randomUUID();
}

// One issue time for the whole file: a record built twice (once written,
// once expected) is the same record, even across a second's boundary.
const ISSUED_AT = Math.floor(Date.now() / 1000);

function record(model: string, id: string, fields: AdapterPayload = {}): AdapterPayload {
  return { jti: id, kind: model, iat: ISSUED_AT, exp: ISSUED_AT + TTL, ...fields };
}

async function rowExists(db: Queryable, model: string, id: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM engine_records WHERE model = $1 AND id = $2', [model, id]);
  return rows.length === 1;
}

async function keyExists(redis: Redis, model: string, id: string): Promise<boolean> {
  return (await redis.exists(`${model}:${id}`)) === 1;
}

/**
 * Records with a 1 s TTL, written before the other cases run and checked
 * after them, so one backend waits for expiry at most once and mostly not at all.
 */
async function writeExpiringRecords(backend: Backend) {
  const ids = { token: newId(), session: newId(), deviceCode: newId() };
  const uid = newId();
  const userCode = newId();
  await Promise.all([
    backend.adapterFor('AccessToken').upsert(ids.token, record('AccessToken', ids.token), 1),
    backend.adapterFor('Session').upsert(ids.session, record('Session', ids.session, { uid }), 1),
    backend.adapterFor('DeviceCode').upsert(ids.deviceCode, record('DeviceCode', ids.deviceCode, { userCode }), 1),
  ]);
  const writtenAt = Date.now();
  return {
    ids,
    uid,
    userCode,
    async waitUntilExpired() {
      await sleep(Math.max(0, writtenAt + EXPIRY_WAIT_MS - Date.now()));
    },
  };
}

function adapterContract(name: string, openBackend: () => Promise<Backend>, skip: string | false = false): void {
  describe(`${name} adapter contract`, { skip }, () => {
    let backend: Backend;
    let expiring: Awaited<ReturnType<typeof writeExpiringRecords>>;
    const adapter = (model: string) => backend.adapterFor(model);

    before(async () => {
      backend = await openBackend();
      expiring = await writeExpiringRecords(backend);
    });
    after(() => backend?.cleanup());

    it('finds a record after upserting it', async () => {
      const id = newId();
      const payload = record('AccessToken', id, { accountId: 'alice', grantId: newId(), scope: 'openid' });
      await adapter('AccessToken').upsert(id, payload, TTL);
      assert.deepEqual(await adapter('AccessToken').find(id), payload);
    });

    it('finds a record upserted without expiresIn', async () => {
      const id = newId();
      const payload = record('AccessToken', id, { grantId: newId() });
      await adapter('AccessToken').upsert(id, payload);
      assert.deepEqual(await adapter('AccessToken').find(id), payload);
    });

    it('replaces the payload when a record is upserted again', async () => {
      const id = newId();
      await adapter('AccessToken').upsert(id, record('AccessToken', id, { scope: 'openid' }), TTL);
      const replacement = record('AccessToken', id, { scope: 'openid email' });
      await adapter('AccessToken').upsert(id, replacement, TTL);
      assert.deepEqual(await adapter('AccessToken').find(id), replacement);
    });

    it('claims an id once: of many claims at the same moment exactly one wins, and a later one loses (replay detection)', async () => {
      const claimer = adapter('ReplayDetection') as unknown as { claim(id: string, payload: AdapterPayload, expiresIn: number): Promise<boolean> };
      const id = newId();
      const results = await Promise.all(Array.from({ length: 8 }, () => claimer.claim(id, record('ReplayDetection', id, { iss: 'client' }), TTL)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await claimer.claim(id, record('ReplayDetection', id, { iss: 'client' }), TTL), false);
      assert.equal((await adapter('ReplayDetection').find(id))?.iss, 'client');
    });

    // Refresh tokens are durable: only the PostgreSQL adapter (either driver) stores them.
    const rotates = name !== 'Redis';
    if (rotates)
      it('rotates a refresh token in one step: of many rotations of one token exactly one writes a successor', async () => {
        const rotator = adapter('RefreshToken') as unknown as {
          rotate(consumedId: string, id: string, payload: AdapterPayload, expiresIn?: number): Promise<boolean>;
        };
        const grantId = newId();
        const old = newId();
        await adapter('RefreshToken').upsert(old, record('RefreshToken', old, { grantId }), TTL);
        const successors = Array.from({ length: 8 }, () => newId());
        const results = await Promise.all(successors.map((id) => rotator.rotate(old, id, record('RefreshToken', id, { grantId, rotations: 1 }), TTL)));
        assert.equal(results.filter(Boolean).length, 1);
        const winner = successors[results.indexOf(true)]!;
        assert.deepEqual(await adapter('RefreshToken').find(winner), record('RefreshToken', winner, { grantId, rotations: 1 }));
        assert.ok((await adapter('RefreshToken').find(old))?.consumed, 'the rotated token is consumed');
        for (const id of successors.filter((id) => id !== winner)) assert.equal(await backend.holds('RefreshToken', id), false, 'a loser wrote nothing');

        const unknown = newId();
        assert.equal(await rotator.rotate(newId(), unknown, record('RefreshToken', unknown), TTL), false, 'an unknown token rotates to nothing');
        assert.equal(await backend.holds('RefreshToken', unknown), false);
        await adapter('RefreshToken').revokeByGrantId(grantId);
        assert.equal(await adapter('RefreshToken').find(winner), undefined, 'the successor belongs to the grant');
      });

    if (rotates)
      it('reads a refresh token with its live grant in one step', async () => {
        const reader = adapter('RefreshToken') as unknown as { findWithGrant(id: string): Promise<{ record?: AdapterPayload; grant?: AdapterPayload }> };
        const grantId = newId();
        const token = newId();
        await adapter('Grant').upsert(grantId, record('Grant', grantId, { accountId: 'alice' }), TTL);
        await adapter('RefreshToken').upsert(token, record('RefreshToken', token, { grantId }), TTL);
        assert.deepEqual(await reader.findWithGrant(token), {
          record: record('RefreshToken', token, { grantId }),
          grant: record('Grant', grantId, { accountId: 'alice' }),
        });
        await adapter('Grant').destroy(grantId);
        assert.deepEqual(
          await reader.findWithGrant(token),
          { record: record('RefreshToken', token, { grantId }), grant: undefined },
          'a gone grant is not brought along',
        );
        assert.deepEqual(await reader.findWithGrant(newId()), {}, 'an unknown token');
        assert.deepEqual(await reader.findWithGrant('a\u0000b'), {}, 'an id no record can have');
      });

    // Redis (not clustered) writes a DPoP-bound token together with its proof's replay record.
    if (name === 'Redis')
      it('writes a record with a claim in one step: of many writes claiming one id exactly one writes its record', async () => {
        const writer = adapter('ClientCredentials') as unknown as {
          upsertClaiming(
            claim: { model: string; id: string; payload: AdapterPayload; expiresIn: number },
            id: string,
            payload: AdapterPayload,
            expiresIn?: number,
          ): Promise<boolean>;
        };
        const claimId = newId();
        const claim = { model: 'ReplayDetection', id: claimId, payload: record('ReplayDetection', claimId, { iss: 'client' }), expiresIn: TTL };
        const ids = Array.from({ length: 8 }, () => newId());
        const results = await Promise.all(ids.map((id) => writer.upsertClaiming(claim, id, record('ClientCredentials', id), TTL)));
        assert.equal(results.filter(Boolean).length, 1);
        const winner = ids[results.indexOf(true)]!;
        assert.deepEqual(await adapter('ClientCredentials').find(winner), record('ClientCredentials', winner));
        for (const id of ids.filter((id) => id !== winner)) assert.equal(await adapter('ClientCredentials').find(id), undefined, 'a loser wrote nothing');
        assert.equal((await adapter('ReplayDetection').find(claimId))?.iss, 'client', 'the claim is the replay record');
        const claimer = adapter('ReplayDetection') as unknown as { claim(id: string, payload: AdapterPayload, expiresIn: number): Promise<boolean> };
        assert.equal(await claimer.claim(claimId, claim.payload, TTL), false, 'and counts as claimed for a plain claim');
      });

    it('returns undefined for an unknown id', async () => {
      assert.equal(await adapter('AccessToken').find(newId()), undefined);
    });

    it('marks a consumed record consumed and keeps finding it', async () => {
      const id = newId();
      const payload = record('AuthorizationCode', id, { grantId: newId() });
      await adapter('AuthorizationCode').upsert(id, payload, TTL);
      const before = Math.floor(Date.now() / 1000);
      await adapter('AuthorizationCode').consume(id);
      const found = await adapter('AuthorizationCode').find(id);
      assert.ok(found?.consumed, 'consumed is truthy');
      assert.equal(typeof found.consumed, 'number');
      assert.ok(found.consumed >= before - 1 && found.consumed <= before + 2, 'consumed is the current unix time');
      assert.deepEqual({ ...found, consumed: undefined }, { ...payload, consumed: undefined });
    });

    it('forgets the consumption when a consumed record is upserted again', async () => {
      const id = newId();
      await adapter('RefreshToken').upsert(id, record('RefreshToken', id), TTL);
      await adapter('RefreshToken').consume(id);
      const replacement = record('RefreshToken', id, { rotations: 1 });
      await adapter('RefreshToken').upsert(id, replacement, TTL);
      assert.deepEqual(await adapter('RefreshToken').find(id), replacement);
    });

    it('does not create a record when consuming an unknown id', async () => {
      const id = newId();
      await adapter('AuthorizationCode').consume(id);
      assert.equal(await adapter('AuthorizationCode').find(id), undefined);
      assert.equal(await backend.holds('AuthorizationCode', id), false);
    });

    it('no longer finds a destroyed record', async () => {
      const id = newId();
      await adapter('AccessToken').upsert(id, record('AccessToken', id, { grantId: newId() }), TTL);
      await adapter('AccessToken').destroy(id);
      assert.equal(await adapter('AccessToken').find(id), undefined);
    });

    it('finds a Session by its uid, and not after it is destroyed', async () => {
      const id = newId();
      const uid = newId();
      const payload = record('Session', id, { uid, accountId: 'alice' });
      await adapter('Session').upsert(id, payload, TTL);
      assert.deepEqual(await adapter('Session').findByUid(uid), payload);
      assert.equal(await adapter('Session').findByUid(newId()), undefined);
      await adapter('Session').destroy(id);
      assert.equal(await adapter('Session').findByUid(uid), undefined);
    });

    it('finds a DeviceCode by its user code, and not after it is destroyed', async () => {
      const id = newId();
      const userCode = newId();
      const payload = record('DeviceCode', id, { userCode, grantId: newId() });
      await adapter('DeviceCode').upsert(id, payload, TTL);
      assert.deepEqual(await adapter('DeviceCode').findByUserCode(userCode), payload);
      assert.equal(await adapter('DeviceCode').findByUserCode(newId()), undefined);
      await adapter('DeviceCode').destroy(id);
      assert.equal(await adapter('DeviceCode').findByUserCode(userCode), undefined);
    });

    it("revokes every record of a grant of its own model, and no other grant's or model's records", async () => {
      const grantId = newId();
      const otherGrantId = newId();
      const [first, second, otherGrant, refreshToken] = [newId(), newId(), newId(), newId()];
      await Promise.all([
        adapter('AccessToken').upsert(first, record('AccessToken', first, { grantId }), TTL),
        adapter('AccessToken').upsert(second, record('AccessToken', second, { grantId }), TTL * 2),
        adapter('AccessToken').upsert(otherGrant, record('AccessToken', otherGrant, { grantId: otherGrantId }), TTL),
        adapter('RefreshToken').upsert(refreshToken, record('RefreshToken', refreshToken, { grantId }), TTL),
      ]);

      await adapter('AccessToken').revokeByGrantId(grantId);

      assert.equal(await adapter('AccessToken').find(first), undefined);
      assert.equal(await adapter('AccessToken').find(second), undefined);
      assert.ok(await adapter('AccessToken').find(otherGrant), 'the other grant keeps its access token');
      assert.ok(await adapter('RefreshToken').find(refreshToken), 'the refresh token of the same grant is kept');
    });

    it('keeps records of different models with the same id apart', async () => {
      const id = newId();
      const accessToken = record('AccessToken', id, { scope: 'openid' });
      const code = record('AuthorizationCode', id, { redirectUri: 'https://rp.example/cb' });
      await adapter('AccessToken').upsert(id, accessToken, TTL);
      await adapter('AuthorizationCode').upsert(id, code, TTL);
      assert.deepEqual(await adapter('AccessToken').find(id), accessToken);
      assert.deepEqual(await adapter('AuthorizationCode').find(id), code);

      await adapter('AccessToken').destroy(id);
      assert.equal(await adapter('AccessToken').find(id), undefined);
      assert.deepEqual(await adapter('AuthorizationCode').find(id), code);
    });

    it('no longer finds an expired record, by id, uid or user code', async () => {
      await expiring.waitUntilExpired();
      assert.equal(await adapter('AccessToken').find(expiring.ids.token), undefined);
      assert.equal(await adapter('Session').find(expiring.ids.session), undefined);
      assert.equal(await adapter('Session').findByUid(expiring.uid), undefined);
      assert.equal(await adapter('DeviceCode').findByUserCode(expiring.userCode), undefined);
    });
  });
}

function postgresBackend(open: () => Promise<TestDatabase>): () => Promise<Backend> {
  return async () => {
    const { db, cleanup } = await open();
    return {
      adapterFor: (model) => new PostgresAdapter(model, db),
      holds: (model, id) => rowExists(db, model, id),
      cleanup,
    };
  };
}

async function openRedisBackend(): Promise<Backend> {
  const { redis, cleanup } = await openRedisForTest();
  return {
    adapterFor: (model) => new RedisAdapter(model, redis),
    holds: (model, id) => keyExists(redis, model, id),
    cleanup,
  };
}

adapterContract('PGlite', postgresBackend(openPgliteForTest));
adapterContract('PostgreSQL', postgresBackend(openPostgresForTest), needsPostgres);
adapterContract('Redis', openRedisBackend, needsRedis);

describe('createAdapterFactory', () => {
  let database: TestDatabase;

  before(async () => {
    database = await openTestDatabase();
  });
  after(() => database?.cleanup());

  describe('with Redis', { skip: needsRedis }, () => {
    let store: TestRedis;
    let adapterFor: ReturnType<typeof createAdapterFactory>;

    before(async () => {
      store = await openRedisForTest();
      adapterFor = createAdapterFactory({ db: database.db, redis: store.redis });
    });
    after(() => store?.cleanup());

    it('stores AccessToken in Redis and RefreshToken and Grant in PostgreSQL', async () => {
      const id = newId();
      await Promise.all(['AccessToken', 'RefreshToken', 'Grant'].map((model) => adapterFor(model).upsert(id, record(model, id), TTL)));

      assert.ok(await keyExists(store.redis, 'AccessToken', id), 'AccessToken is in Redis');
      assert.equal(await rowExists(database.db, 'AccessToken', id), false, 'AccessToken is not in PostgreSQL');
      for (const model of ['RefreshToken', 'Grant']) {
        assert.ok(await rowExists(database.db, model, id), `${model} is in PostgreSQL`);
        assert.equal(await keyExists(store.redis, model, id), false, `${model} is not in Redis`);
      }
    });

    it('stores a single-token grant and what is kept under its id in Redis, any other grant in PostgreSQL', async () => {
      const single = singleTokenGrantId();
      const durable = newId();
      for (const model of ['Grant', 'TokenExchangeOutcome']) {
        await Promise.all([single, durable].map((id) => adapterFor(model).upsert(id, record(model, id), TTL)));
        assert.ok(await keyExists(store.redis, model, single), `single-token ${model} is in Redis`);
        assert.equal(await rowExists(database.db, model, single), false, `single-token ${model} is not in PostgreSQL`);
        assert.ok(await rowExists(database.db, model, durable), `durable ${model} is in PostgreSQL`);
        assert.equal(await keyExists(store.redis, model, durable), false, `durable ${model} is not in Redis`);
        for (const id of [single, durable]) assert.equal((await adapterFor(model).find(id))?.jti, id);

        await Promise.all([single, durable].map((id) => adapterFor(model).destroy(id)));
        assert.equal(await keyExists(store.redis, model, single), false);
        assert.equal(await rowExists(database.db, model, durable), false);
      }
      assert.equal(await adapterFor('Grant').find(singleTokenGrantId()), undefined, 'an unknown single-token id');
    });

    it("revokes a grant's records in both stores", async () => {
      const grantId = newId();
      const [accessToken, code, refreshToken] = [newId(), newId(), newId()];
      await Promise.all([
        adapterFor('AccessToken').upsert(accessToken, record('AccessToken', accessToken, { grantId }), TTL),
        adapterFor('AuthorizationCode').upsert(code, record('AuthorizationCode', code, { grantId }), TTL),
        adapterFor('RefreshToken').upsert(refreshToken, record('RefreshToken', refreshToken, { grantId }), TTL),
      ]);

      await Promise.all(['AccessToken', 'RefreshToken', 'AuthorizationCode'].map((model) => adapterFor(model).revokeByGrantId(grantId)));

      assert.equal(await keyExists(store.redis, 'AccessToken', accessToken), false);
      assert.equal(await keyExists(store.redis, 'AuthorizationCode', code), false);
      assert.equal(await rowExists(database.db, 'RefreshToken', refreshToken), false);
    });
  });

  describe('without Redis', () => {
    it('stores a single-token grant in PostgreSQL', async () => {
      const adapterFor = createAdapterFactory({ db: database.db });
      const id = singleTokenGrantId();
      await adapterFor('Grant').upsert(id, record('Grant', id), TTL);
      assert.ok(await rowExists(database.db, 'Grant', id));
      assert.equal((await adapterFor('Grant').find(id))?.jti, id);
    });

    it('stores AccessToken in PostgreSQL', async () => {
      const adapterFor = createAdapterFactory({ db: database.db });
      const id = newId();
      await adapterFor('AccessToken').upsert(id, record('AccessToken', id), TTL);
      assert.ok(await rowExists(database.db, 'AccessToken', id));
    });
  });
});

describe('deleteExpiredEngineRecords', () => {
  let database: TestDatabase;

  before(async () => {
    database = await openTestDatabase();
  });
  after(() => database?.cleanup());

  async function expire(id: string): Promise<void> {
    await database.db.query("UPDATE engine_records SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
  }

  it('deletes expired records in bounded batches and keeps live and non-expiring ones', async () => {
    const adapter = new PostgresAdapter('AccessToken', database.db);
    const [expired1, expired2, live, permanent] = [newId(), newId(), newId(), newId()];
    for (const id of [expired1, expired2, live]) await adapter.upsert(id, record('AccessToken', id), TTL);
    await adapter.upsert(permanent, record('AccessToken', permanent));
    await expire(expired1);
    await expire(expired2);

    assert.equal(await deleteExpiredEngineRecords(database.db, 1), 1);
    assert.equal(await deleteExpiredEngineRecords(database.db), 1);
    assert.equal(await deleteExpiredEngineRecords(database.db), 0);

    assert.equal(await rowExists(database.db, 'AccessToken', expired1), false);
    assert.equal(await rowExists(database.db, 'AccessToken', expired2), false);
    assert.ok(await rowExists(database.db, 'AccessToken', live));
    assert.ok(await rowExists(database.db, 'AccessToken', permanent));
  });

  it('a sweep keeps deleting batch after batch until nothing expired is left (no Redis: every short-lived record is here)', async () => {
    const adapter = new PostgresAdapter('Session', database.db);
    const live = newId();
    await adapter.upsert(live, record('Session', live), TTL);
    await database.db.query(
      `INSERT INTO engine_records (model, id, payload, expires_at)
       SELECT 'Session', 'swept-' || n, '{}'::jsonb, now() - interval '1 minute' FROM generate_series(1, 2345) AS n`,
    );
    assert.equal(await sweepExpiredEngineRecords(database.db, 500), 2345);
    const { rows } = await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM engine_records WHERE expires_at <= now()');
    assert.equal(rows[0]!.n, 0);
    assert.ok(await rowExists(database.db, 'Session', live));
  });
});
