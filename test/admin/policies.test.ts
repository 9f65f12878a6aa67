import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertDetails, assertError, assertErrorBody, assertInvalid } from '../support/assertions.ts';
import { readAdminPat, testServer, type InProcessServer } from '../support/server.ts';
import { effectivePolicy } from '../../src/queries/policies.ts';
import { LOCKOUT_POLICY } from '../../src/domain/policies/lockout.ts';

// Policies (docs/api/policies.md), shown with the lockout policy: the
// instance default (IAM_OWNER) and an org's override (ORG_OWNER), with their
// events, validation and permissions. Run on the stores of the test run
// (PostgreSQL and Redis under .ci/run) and on the embedded default.

const DEFAULTS = { maxPasswordAttempts: 10, maxOtpAttempts: 10, lockoutDurationSeconds: 900 };

for (const stores of ['configured', 'embedded'] as const) {
  describe(`lockout policy API (${stores} stores)`, () => {
    let server: InProcessServer;
    let admin: Api;
    let instanceId: string;
    let defaultOrgId: string;
    let otherOrgId: string;
    /** ORG_OWNER of the other org only. */
    let otherOwner: Api;
    /** ORG_USER_MANAGER of the other org only. */
    let otherManager: Api;

    async function machineWithRole(orgId: string, userName: string, roles: string[]): Promise<Api> {
      const user = await admin('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId });
      assert.equal(user.status, 200, user.text);
      const member = await admin('POST', '/management/v1/orgs/me/members', { body: { userId: user.body.userId, roles }, orgId });
      assert.equal(member.status, 200, member.text);
      const pat = await admin('POST', `/management/v1/users/${user.body.userId}/pats`, { orgId });
      assert.equal(pat.status, 200, pat.text);
      return apiClient(server.url, pat.body.token, { strictJson: true });
    }

    async function eventsOf(type: string): Promise<Array<{ aggregate_id: string; payload: Record<string, unknown> }>> {
      const { rows } = await server.running.db.query<{ aggregate_id: string; payload: Record<string, unknown> }>(
        'SELECT aggregate_id, payload FROM events WHERE event_type = $1 ORDER BY position',
        [type],
      );
      return rows;
    }

    before(async () => {
      server = await testServer({ sharedStores: stores === 'configured' });
      admin = apiClient(server.url, readAdminPat(server.dataDir), { strictJson: true });
      const { rows } = await server.running.db.query<{ id: string; default_org_id: string }>('SELECT id, default_org_id FROM instance');
      ({ id: instanceId, default_org_id: defaultOrgId } = rows[0]!);
      const setup = await admin('POST', '/admin/v1/orgs/_setup', {
        body: {
          org: { name: 'Other', domain: 'other.example.test' },
          human: { userName: 'o', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@other.example.test' } },
        },
      });
      assert.equal(setup.status, 200, setup.text);
      otherOrgId = setup.body.orgId;
      otherOwner = await machineWithRole(otherOrgId, 'other-owner', ['ORG_OWNER']);
      otherManager = await machineWithRole(otherOrgId, 'other-manager', ['ORG_USER_MANAGER']);
    });
    after(async () => {
      await server?.stop();
    });

    it('the instance default starts as the built-in defaults, with the details of the instance', async () => {
      const got = await admin('GET', '/admin/v1/policies/lockout');
      assert.equal(got.status, 200, got.text);
      const { details, ...policy } = got.body.policy;
      assert.deepEqual(policy, DEFAULTS);
      assertDetails(details, instanceId);
      assert.deepEqual(await effectivePolicy(server.running.db, LOCKOUT_POLICY, otherOrgId), DEFAULTS);
    });

    it('PUT sets the fields given and keeps the others; an event records the whole policy', async () => {
      const put = await admin('PUT', '/admin/v1/policies/lockout', { body: { maxPasswordAttempts: 3 } });
      assert.equal(put.status, 200, put.text);
      assertDetails(put.body.details, instanceId);
      const got = await admin('GET', '/admin/v1/policies/lockout');
      assert.deepEqual({ ...got.body.policy, details: undefined }, { ...DEFAULTS, maxPasswordAttempts: 3, details: undefined });
      assert.equal(got.body.policy.details.sequence, put.body.details.sequence);
      const again = await admin('PUT', '/admin/v1/policies/lockout', { body: { lockoutDurationSeconds: 0, maxOtpAttempts: 0 } });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(await effectivePolicy(server.running.db, LOCKOUT_POLICY, otherOrgId), {
        maxPasswordAttempts: 3,
        maxOtpAttempts: 0,
        lockoutDurationSeconds: 0,
      });
      const events = await eventsOf('instance.policy.lockout.set');
      assert.equal(events.length, 2);
      assert.equal(events[0]!.aggregate_id, instanceId);
      assert.deepEqual(events[1]!.payload, { maxPasswordAttempts: 3, maxOtpAttempts: 0, lockoutDurationSeconds: 0 });
    });

    it('an org follows the instance default until it sets its own, and again after DELETE', async () => {
      const before = await otherOwner('GET', '/management/v1/policies/lockout');
      assert.equal(before.status, 200, before.text);
      assert.equal(before.body.isDefault, true);
      assert.equal(before.body.policy.maxPasswordAttempts, 3, 'the instance default applies');

      const put = await otherOwner('PUT', '/management/v1/policies/lockout', { body: { maxPasswordAttempts: 5 } });
      assert.equal(put.status, 200, put.text);
      assertDetails(put.body.details, otherOrgId);
      const own = await otherOwner('GET', '/management/v1/policies/lockout');
      assert.equal(own.body.isDefault, false);
      const { details, ...policy } = own.body.policy;
      assert.deepEqual(policy, { maxPasswordAttempts: 5, maxOtpAttempts: 0, lockoutDurationSeconds: 0 }, 'fields not given come from the default that applied');
      assertDetails(details, otherOrgId);
      assert.equal((await effectivePolicy(server.running.db, LOCKOUT_POLICY, otherOrgId)).maxPasswordAttempts, 5);
      // The instance default and other orgs are untouched.
      assert.equal((await admin('GET', '/admin/v1/policies/lockout')).body.policy.maxPasswordAttempts, 3);
      assert.equal((await admin('GET', '/management/v1/policies/lockout')).body.isDefault, true);
      // The instance owner sees and changes the org's policy through x-service-orgid.
      const viaHeader = await admin('GET', '/management/v1/policies/lockout', { orgId: otherOrgId });
      assert.equal(viaHeader.body.policy.maxPasswordAttempts, 5);

      const removed = await otherOwner('DELETE', '/management/v1/policies/lockout');
      assert.equal(removed.status, 200, removed.text);
      assertDetails(removed.body.details, otherOrgId);
      const after = await otherOwner('GET', '/management/v1/policies/lockout');
      assert.equal(after.body.isDefault, true);
      assert.equal(after.body.policy.maxPasswordAttempts, 3);
      assertError(await otherOwner('DELETE', '/management/v1/policies/lockout'), 404);
      assert.deepEqual(
        (await eventsOf('org.policy.lockout.set')).map((e) => e.aggregate_id),
        [otherOrgId],
      );
      assert.deepEqual(
        (await eventsOf('org.policy.lockout.removed')).map((e) => e.aggregate_id),
        [otherOrgId],
      );
    });

    it('bad bodies are 400, code 3, naming every bad field, and change nothing', async () => {
      const before = (await admin('GET', '/admin/v1/policies/lockout')).body.policy;
      const cases: Array<[unknown, string[]]> = [
        [{ maxPasswordAttempts: -1 }, ['maxPasswordAttempts']],
        [{ maxPasswordAttempts: 1.5, maxOtpAttempts: '3' }, ['maxPasswordAttempts', 'maxOtpAttempts']],
        [{ lockoutDurationSeconds: 2 ** 31 }, ['lockoutDurationSeconds']],
        [{ lockoutDurationSeconds: null }, ['lockoutDurationSeconds']],
        [{ maxPasswordAttempts: 3, unknown: 1 }, ['unknown']],
        [{ maxPasswordAttempts: [3] }, ['maxPasswordAttempts']],
      ];
      for (const [body, fields] of cases) {
        for (const [call, path] of [
          [admin, '/admin/v1/policies/lockout'],
          [otherOwner, '/management/v1/policies/lockout'],
        ] as const) {
          const response = await call('PUT', path, { body });
          assertInvalid(response, fields, { atLeast: true });
          assertErrorBody(response, 3);
        }
      }
      for (const raw of ['{}', '[]', 'null', '"x"', '{"maxPasswordAttempts":']) {
        const response = await admin('PUT', '/admin/v1/policies/lockout', { raw });
        assert.equal(response.status, 400, `${raw}: ${response.text}`);
        assertErrorBody(response, 3);
      }
      assert.equal((await admin('PUT', '/admin/v1/policies/lockout', { raw: '{"maxPasswordAttempts":1}', contentType: 'text/plain' })).status, 400);
      assert.deepEqual((await admin('GET', '/admin/v1/policies/lockout')).body.policy, before);
      assert.equal((await otherOwner('GET', '/management/v1/policies/lockout')).body.isDefault, true);
    });

    it('permissions: the instance default needs IAM_OWNER, an org policy ORG_OWNER of that org; no token is 401', async () => {
      assertError(await otherOwner('GET', '/admin/v1/policies/lockout'), 403);
      assertError(await otherOwner('PUT', '/admin/v1/policies/lockout', { body: { maxPasswordAttempts: 1 } }), 403);
      for (const method of ['GET', 'PUT', 'DELETE']) {
        assertError(await otherManager(method, '/management/v1/policies/lockout', { ...(method === 'PUT' ? { body: { maxPasswordAttempts: 1 } } : {}) }), 403);
        // An org owner of another org acting in the default org.
        const foreign = await otherOwner(method, '/management/v1/policies/lockout', {
          orgId: defaultOrgId,
          ...(method === 'PUT' ? { body: { maxPasswordAttempts: 1 } } : {}),
        });
        assert.ok([403, 404].includes(foreign.status), foreign.text);
        assertError(await admin(method, '/management/v1/policies/lockout', { token: null }), 401);
      }
      assertError(await admin('GET', '/management/v1/policies/lockout', { orgId: 'no-such-org' }), 404);
      assert.equal((await admin('GET', '/admin/v1/policies/lockout')).body.policy.maxPasswordAttempts, 3, 'nothing changed');
      assert.equal((await eventsOf('org.policy.lockout.set')).length, 1);
    });

    it('an unknown policy kind is 404, code 5', async () => {
      assertError(await admin('GET', '/admin/v1/policies/nothing'), 404);
      assertError(await admin('GET', '/management/v1/policies/nothing'), 404);
    });
  });
}
