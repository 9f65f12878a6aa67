import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../src/storage/database.ts';
import { policyCache } from '../../src/queries/policy-cache.ts';
import { SESSION_INDEX_SLACK_SECONDS, sessionIndex, sessionsOfUser } from '../../src/storage/user-sessions.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { openTestDatabase, type TestDatabase } from '../support/stores.ts';

// What a sign-in reads and writes through per-node memory instead of a
// statement each time (docs/decisions.md): the login policy and the index of
// a user's sessions. Real database; `counting` only counts the statements
// that reach it.

function counting(db: Queryable): { db: Queryable; statements: () => number } {
  let statements = 0;
  return {
    db: {
      query: (sql, params) => {
        statements++;
        return db.query(sql, params);
      },
    } as Queryable,
    statements: () => statements,
  };
}

/** A session index over `db`, the warnings it reports, and a session of an hour to save in it. */
function newIndex(db: Queryable) {
  const warnings: unknown[] = [];
  const index = sessionIndex(db, (err) => warnings.push(err));
  return { index, warnings, accountId: randomUUID(), sessionId: randomUUID(), exp: Date.now() + 3600_000 };
}

/** Lets the index's writes (not awaited by the engine's events) land. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

describe('login caches', () => {
  let store: TestDatabase;

  before(async () => {
    store = await openTestDatabase();
  });

  after(async () => {
    await store?.cleanup();
  });

  async function expiryOf(accountId: string, sessionId: string): Promise<number | undefined> {
    const { rows } = await store.db.query<{ expires_at: Date }>('SELECT expires_at FROM user_sessions WHERE account_id = $1 AND session_id = $2', [
      accountId,
      sessionId,
    ]);
    return rows[0]?.expires_at.getTime();
  }

  test('the policy cache: built-in defaults, then the instance default once stored, one statement per org until cleared', async () => {
    const { db, statements } = counting(store.db);
    const policies = policyCache(db);
    const orgId = randomUUID();

    assert.deepEqual(await policies.effective(LOGIN_POLICY, orgId), LOGIN_POLICY.defaults);
    assert.equal(statements(), 1);
    await policies.effective(LOGIN_POLICY, orgId);
    await policies.effective(LOGIN_POLICY, orgId);
    assert.equal(statements(), 1, 'repeated reads within the cache lifetime are served from memory');

    await store.db.query(
      `INSERT INTO policies (kind, org_id, settings, sequence, creation_date, change_date) VALUES ('login', NULL, '{"allowRegister": false}', 1, now(), now())`,
    );
    assert.equal((await policies.effective(LOGIN_POLICY, orgId)).allowRegister, true, 'still the cached value: nothing announced the change');
    policies.clear();
    const now = await policies.effective(LOGIN_POLICY, orgId);
    assert.deepEqual(now, { ...LOGIN_POLICY.defaults, allowRegister: false }, 'the stored fields over the built-in defaults');
    assert.equal(statements(), 2);

    // Another org and a garbage org id are their own entries, not errors.
    assert.equal((await policies.effective(LOGIN_POLICY, 'not-an-org')).allowRegister, false);
    assert.equal(statements(), 3);
  });

  test('the session index: one write while the expiry stays covered, the entry never ends before its session', async () => {
    const { db, statements } = counting(store.db);
    const { index, warnings, accountId, sessionId, exp } = newIndex(db);

    // Each authorization in a signed-in browser saves its session again.
    index.saved({ accountId, sessionId, expiresAt: new Date(exp) });
    index.saved({ accountId, sessionId, expiresAt: new Date(exp + 1000) });
    index.saved({ accountId, sessionId, expiresAt: new Date(exp + 2000) });
    await settle();
    assert.equal(statements(), 1);
    assert.equal(await expiryOf(accountId, sessionId), exp + SESSION_INDEX_SLACK_SECONDS * 1000);
    assert.deepEqual(await sessionsOfUser(store.db, accountId), [sessionId]);

    // A save past the slack moves the entry on.
    const later = exp + SESSION_INDEX_SLACK_SECONDS * 1000 + 5000;
    index.saved({ accountId, sessionId, expiresAt: new Date(later) });
    await settle();
    assert.equal(statements(), 2);
    assert.equal(await expiryOf(accountId, sessionId), later + SESSION_INDEX_SLACK_SECONDS * 1000);

    // An earlier expiry written by another node never shortens the entry.
    const other = sessionIndex(store.db, (err) => warnings.push(err));
    other.saved({ accountId, sessionId, expiresAt: new Date(exp) });
    await settle();
    assert.equal(await expiryOf(accountId, sessionId), later + SESSION_INDEX_SLACK_SECONDS * 1000);

    // The same session id for another account is an entry of its own.
    const otherAccount = randomUUID();
    index.saved({ accountId: otherAccount, sessionId, expiresAt: new Date(exp) });
    await settle();
    assert.equal(statements(), 3);
    assert.ok(await expiryOf(otherAccount, sessionId));

    // Renewed (the engine's new id at a sign-in step): the old entry goes with the write of the new one.
    const renewed = randomUUID();
    index.saved({ accountId, sessionId: renewed, expiresAt: new Date(exp), replacedId: sessionId });
    await settle();
    assert.equal(statements(), 4);
    assert.deepEqual(await sessionsOfUser(store.db, accountId), [renewed]);
    assert.deepEqual(await sessionsOfUser(store.db, otherAccount), []);
    index.saved({ accountId, sessionId, expiresAt: new Date(exp) });
    await settle();
    assert.equal(statements(), 5, 'the replaced id is forgotten: saving it again writes');

    // Destroyed: the entries go, and a new save of that id writes again.
    index.destroyed(sessionId);
    await settle();
    assert.deepEqual(await sessionsOfUser(store.db, accountId), [renewed]);
    index.saved({ accountId, sessionId, expiresAt: new Date(exp) });
    await settle();
    assert.equal(statements(), 7);
    assert.deepEqual(new Set(await sessionsOfUser(store.db, accountId)), new Set([renewed, sessionId]));
    assert.deepEqual(warnings, []);
  });

  test('the session index: a write that failed is made again at the next save', async () => {
    let failNext = true;
    const flaky: Queryable = {
      query: (sql, params) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('connection terminated'));
        }
        return store.db.query(sql, params);
      },
    } as Queryable;
    const { index, warnings, accountId, sessionId, exp } = newIndex(flaky);

    index.saved({ accountId, sessionId, expiresAt: new Date(exp) });
    await settle();
    assert.equal(warnings.length, 1, 'the failure is reported');
    assert.equal(await expiryOf(accountId, sessionId), undefined);

    index.saved({ accountId, sessionId, expiresAt: new Date(exp + 1000) });
    await settle();
    assert.equal(await expiryOf(accountId, sessionId), exp + 1000 + SESSION_INDEX_SLACK_SECONDS * 1000);
  });
});
