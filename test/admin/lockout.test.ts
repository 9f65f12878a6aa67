import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, type Api, type ApiResponse } from '../support/api.ts';
import { assertDetails, assertError, assertErrorBody } from '../support/assertions.ts';
import { passwordForm, passwordFormApp } from '../support/login-form.ts';
import { eventually } from '../support/tokens.ts';
import { readAdminPat, sleep, testServer, type TestServer } from '../support/server.ts';
import { unlockExpiredLocks } from '../../src/commands/password-login.ts';

// The lockout policy at work (docs/security.md): consecutive failed password
// checks per user, counted in the database; reaching maxPasswordAttempts
// locks the user (USER_STATE_LOCKED, user.locked); while locked the login
// page answers the same whatever the password, and no code is issued;
// _unlock or the end of lockoutDurationSeconds unlocks (user.unlocked).

const WRONG = /login name or password is wrong/;
const LOCKED = /This account is locked/;

for (const stores of ['configured', 'embedded'] as const) {
  describe(`lockout (${stores} stores)`, () => {
    let server: TestServer;
    let admin: Api;
    let orgId: string;
    let clientId: string;
    let counter = 0;

    async function human(password = 'Right-Passw0rd'): Promise<{ userId: string; loginName: string; password: string }> {
      const userName = `lou${++counter}`;
      const created = await admin('POST', '/management/v1/users/human', {
        body: { userName, profile: { firstName: 'Lou', lastName: 'Locke' }, email: { email: `${userName}@example.test` }, password },
      });
      assert.equal(created.status, 200, created.text);
      return { userId: created.body.userId, loginName: userName, password };
    }

    async function stateOf(userId: string): Promise<string> {
      const got = await admin('GET', `/management/v1/users/${userId}`);
      assert.equal(got.status, 200, got.text);
      return got.body.user.state;
    }

    async function eventsOf(userId: string): Promise<Array<{ event_type: string; payload: any }>> {
      const { rows } = await server.running.db.query<{ event_type: string; payload: any }>(
        "SELECT event_type, payload FROM events WHERE aggregate_id = $1 AND event_type IN ('user.locked', 'user.unlocked') ORDER BY position",
        [userId],
      );
      return rows;
    }

    async function setPolicy(policy: Record<string, number>): Promise<void> {
      const put = await admin('PUT', '/admin/v1/policies/lockout', { body: policy });
      assert.equal(put.status, 200, put.text);
    }

    async function login(loginName: string, password: string): Promise<ApiResponse> {
      return (await passwordForm(server.url, clientId))(loginName, password);
    }

    before(async () => {
      server = await testServer({ sharedStores: stores === 'configured' });
      admin = apiClient(server.url, readAdminPat(server.dataDir), { strictJson: true });
      const { rows } = await server.running.db.query<{ default_org_id: string }>('SELECT default_org_id FROM instance');
      orgId = rows[0]!.default_org_id;
      clientId = await passwordFormApp(admin, 'Lockout');
    });
    after(async () => {
      await server?.stop();
    });

    test('reaching maxPasswordAttempts locks the user; then right and wrong passwords get the same page and no code', async () => {
      await setPolicy({ maxPasswordAttempts: 3, lockoutDurationSeconds: 0 });
      const user = await human();
      const form = await passwordForm(server.url, clientId);
      for (let i = 0; i < 2; i++) assert.match((await form(user.loginName, 'wrong')).text, WRONG);
      assert.equal(await stateOf(user.userId), 'USER_STATE_ACTIVE');
      const third = await form(user.loginName, 'wrong');
      assert.equal(third.status, 200);
      assert.match(third.text, LOCKED, `the attempt that reaches the maximum says so: ${third.text.slice(-800)}`);
      assert.equal(await stateOf(user.userId), 'USER_STATE_LOCKED');
      assert.deepEqual(
        (await eventsOf(user.userId)).map((e) => [e.event_type, e.payload.lockedUntil]),
        [['user.locked', null]],
      );

      const right = await form(user.loginName, user.password);
      const wrong = await form(user.loginName, 'still-wrong');
      assert.equal(right.status, 200, 'no redirect: no code is issued');
      assert.equal(right.text, wrong.text, 'the same page, byte for byte');
      assert.match(right.text, LOCKED);
      assert.equal((await login(user.loginName, user.password)).status, 200, 'a new login is locked too');
      assert.equal((await eventsOf(user.userId)).length, 1, 'attempts while locked write nothing');
    });

    test('a successful password check starts the count again; 0 attempts never locks', async () => {
      await setPolicy({ maxPasswordAttempts: 3, lockoutDurationSeconds: 0 });
      const user = await human();
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 2; i++) assert.match((await login(user.loginName, 'wrong')).text, WRONG);
        assert.equal((await login(user.loginName, user.password)).status, 303, 'the right password signs in');
      }
      await setPolicy({ maxPasswordAttempts: 0 });
      const free = await human();
      for (let i = 0; i < 12; i++) assert.match((await login(free.loginName, 'wrong')).text, WRONG);
      assert.equal((await login(free.loginName, free.password)).status, 303);
      assert.equal(await stateOf(free.userId), 'USER_STATE_ACTIVE');
    });

    test('the org override applies to its users; an unknown login name locks nothing', async () => {
      await setPolicy({ maxPasswordAttempts: 10, lockoutDurationSeconds: 0 });
      const put = await admin('PUT', '/management/v1/policies/lockout', { body: { maxPasswordAttempts: 1 } });
      assert.equal(put.status, 200, put.text);
      try {
        const user = await human();
        assert.match((await login(user.loginName, 'wrong')).text, LOCKED);
        assert.equal(await stateOf(user.userId), 'USER_STATE_LOCKED');
        for (let i = 0; i < 3; i++) assert.match((await login('nobody@example.test', 'x')).text, WRONG);
      } finally {
        assert.equal((await admin('DELETE', '/management/v1/policies/lockout')).status, 200);
      }
    });

    test('concurrent wrong passwords lock exactly once (the count is atomic)', async () => {
      await setPolicy({ maxPasswordAttempts: 3, lockoutDurationSeconds: 0 });
      const user = await human();
      const forms = await Promise.all(Array.from({ length: 8 }, () => passwordForm(server.url, clientId)));
      const answers = await Promise.all(forms.map((form) => form(user.loginName, 'wrong')));
      assert.ok(answers.filter((a) => LOCKED.test(a.text)).length >= 6, 'all but the first two see the lock');
      assert.deepEqual(
        (await eventsOf(user.userId)).map((e) => e.event_type),
        ['user.locked'],
      );
    });

    test('POST _unlock: ORG_OWNER or ORG_USER_MANAGER; user.unlocked; the count starts again', async () => {
      await setPolicy({ maxPasswordAttempts: 2, lockoutDurationSeconds: 0 });
      const user = await human();
      for (let i = 0; i < 2; i++) await login(user.loginName, 'wrong');
      assert.equal(await stateOf(user.userId), 'USER_STATE_LOCKED');

      const nobody = await admin('POST', '/management/v1/users/machine', { body: { userName: `nobody${counter}`, name: 'n' } });
      const nobodyPat = await admin('POST', `/management/v1/users/${nobody.body.userId}/pats`);
      assertError(await admin('POST', `/management/v1/users/${user.userId}/_unlock`, { token: nobodyPat.body.token }), 403);
      assertError(await admin('POST', `/management/v1/users/${user.userId}/_unlock`, { token: null }), 401);
      assertError(await admin('POST', '/management/v1/users/123456/_unlock'), 404);
      assertError(await admin('POST', `/management/v1/users/${user.userId}%00/_unlock`), 404);
      const withBody = await admin('POST', `/management/v1/users/${user.userId}/_unlock`, { body: { force: true } });
      assert.equal(withBody.status, 400, withBody.text);
      assert.equal(await stateOf(user.userId), 'USER_STATE_LOCKED', 'refused calls change nothing');

      const manager = await admin('POST', '/management/v1/users/machine', { body: { userName: `manager${counter}`, name: 'm' } });
      assert.equal((await admin('POST', '/management/v1/orgs/me/members', { body: { userId: manager.body.userId, roles: ['ORG_USER_MANAGER'] } })).status, 200);
      const managerPat = await admin('POST', `/management/v1/users/${manager.body.userId}/pats`);
      const unlocked = await admin('POST', `/management/v1/users/${user.userId}/_unlock`, { token: managerPat.body.token });
      assert.equal(unlocked.status, 200, unlocked.text);
      assertDetails(unlocked.body.details, orgId);
      assert.equal(await stateOf(user.userId), 'USER_STATE_ACTIVE');
      assert.deepEqual(
        (await eventsOf(user.userId)).map((e) => [e.event_type, e.payload.reason ?? null]),
        [
          ['user.locked', null],
          ['user.unlocked', 'admin'],
        ],
      );

      const again = await admin('POST', `/management/v1/users/${user.userId}/_unlock`);
      assert.equal(again.status, 400, 'a user that is not locked');
      assertErrorBody(again, 3);
      assert.match((await login(user.loginName, 'wrong')).text, WRONG, 'one failure after the unlock does not lock again');
      assert.equal((await login(user.loginName, user.password)).status, 303);
    });

    test('a timed lock ends by itself: at the next login at once, and for an idle user within seconds', async () => {
      await setPolicy({ maxPasswordAttempts: 1, lockoutDurationSeconds: 1 });
      const user = await human();
      const idle = await human();
      assert.match((await login(user.loginName, 'wrong')).text, LOCKED);
      assert.match((await login(idle.loginName, 'wrong')).text, LOCKED);
      const [locked] = await eventsOf(user.userId);
      assert.ok(Date.parse(locked!.payload.lockedUntil) > Date.now(), 'user.locked names the end of the lock');
      assert.match((await login(user.loginName, user.password)).text, LOCKED, 'still locked');
      await sleep(1100);
      assert.equal((await login(user.loginName, user.password)).status, 303, 'the lock has ended: the right password signs in');
      assert.deepEqual(
        (await eventsOf(user.userId)).map((e) => [e.event_type, e.payload.reason ?? null]),
        [
          ['user.locked', null],
          ['user.unlocked', 'expired'],
        ],
      );
      // The idle user: each node lifts ended locks every few seconds.
      assert.ok(await eventually(async () => (await stateOf(idle.userId)) === 'USER_STATE_ACTIVE', 8000, 250), 'lifted without a login');
      assert.deepEqual(
        (await eventsOf(idle.userId)).map((e) => e.event_type),
        ['user.locked', 'user.unlocked'],
      );
      assert.equal(await unlockExpiredLocks(server.running.db), 0, 'nothing is lifted twice');
    });

    test('an admin lock (duration 0) is never lifted by time', async () => {
      await setPolicy({ maxPasswordAttempts: 1, lockoutDurationSeconds: 0 });
      const user = await human();
      await login(user.loginName, 'wrong');
      assert.equal(await unlockExpiredLocks(server.running.db), 0);
      assert.match((await login(user.loginName, user.password)).text, LOCKED);
    });
  });
}
