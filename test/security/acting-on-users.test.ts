import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertError, assertInvalid } from '../support/assertions.ts';
import { passwordForm, passwordFormApp } from '../support/login-form.ts';
import { readAdminPat, testServer, type TestServer } from '../support/server.ts';
import { beginWrite } from '../../src/storage/event-log.ts';
import { confirmOtp, findOtp, putPendingOtp } from '../../src/storage/otp.ts';
import { addPasskey, passkeysOf } from '../../src/storage/passkeys.ts';
import { newId } from '../../src/domain/ids.ts';

// Staff of the instance's first org against the instance owner
// (docs/security.md, "Acting on another user"): the second security review
// found that a first-org ORG_USER_MANAGER could remove the instance admin's
// authenticator app and unlock it after ten wrong passwords, and a first-org
// ORG_OWNER could switch off the lockout that protects it. Each request is
// replayed as it was found, with the legitimate paths beside it.

const ADMIN_PASSWORD = 'Adm1n-Passw0rd!';

describe('acting on another user needs every role that user holds', () => {
  let server: TestServer;
  let iamOwner: Api;
  let firstOrg: string;
  let adminId: string;
  let appClientId: string;
  let counter = 0;

  /** A machine user of `orgId` holding `roles` there, calling with its PAT. */
  async function staff(orgId: string, roles: string[]): Promise<{ api: Api; userId: string }> {
    const userName = `staff${++counter}`;
    const user = await iamOwner('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId });
    assert.equal(user.status, 200, user.text);
    const member = await iamOwner('POST', '/management/v1/orgs/me/members', { body: { userId: user.body.userId, roles }, orgId });
    assert.equal(member.status, 200, member.text);
    const pat = await iamOwner('POST', `/management/v1/users/${user.body.userId}/pats`, { orgId });
    assert.equal(pat.status, 200, pat.text);
    return { api: apiClient(server.url, pat.body.token, { strictJson: true, orgId }), userId: user.body.userId };
  }

  /** A human of `orgId` with a password, holding `roles` there (none: an end user). */
  async function human(orgId: string, roles: string[] = []): Promise<string> {
    const userName = `person${++counter}`;
    const user = await iamOwner('POST', '/management/v1/users/human', {
      body: { userName, profile: { firstName: 'P', lastName: 'Q' }, email: { email: `${userName}@example.test` }, password: 'Right-Passw0rd' },
      orgId,
    });
    assert.equal(user.status, 200, user.text);
    if (roles.length)
      assert.equal((await iamOwner('POST', '/management/v1/orgs/me/members', { body: { userId: user.body.userId, roles }, orgId })).status, 200);
    return user.body.userId;
  }

  /** A confirmed authenticator app for `userId`, as the security page leaves it. */
  async function giveOtp(userId: string, orgId: string): Promise<void> {
    const { db } = server.running;
    assert.ok(await putPendingOtp(db, userId, randomBytes(48)));
    await db.transaction(async (tx) => assert.ok(await confirmOtp(await beginWrite(tx, { userId }), { id: userId, orgId }, 1, [])));
  }

  async function givePasskey(userId: string, orgId: string): Promise<string> {
    const id = newId();
    await server.running.db.transaction(async (tx) =>
      assert.ok(
        await addPasskey(
          await beginWrite(tx, { userId }),
          { id: userId, orgId },
          { id, credentialId: randomBytes(16).toString('base64url'), publicKey: randomBytes(77), counter: 0, transports: [], name: 'key' },
        ),
      ),
    );
    return id;
  }

  const stateOf = async (userId: string, orgId = firstOrg) => (await iamOwner('GET', `/management/v1/users/${userId}`, { orgId })).body.user.state;

  async function lockoutPolicyOfFirstOrg(): Promise<Record<string, unknown>> {
    const got = await iamOwner('GET', '/management/v1/policies/lockout', { orgId: firstOrg });
    assert.equal(got.status, 200, got.text);
    const { details: _details, ...policy } = got.body.policy;
    return { ...policy, isDefault: got.body.isDefault };
  }

  before(async () => {
    server = await testServer({ env: { ADMIN_PASSWORD } });
    iamOwner = apiClient(server.url, readAdminPat(server.dataDir), { strictJson: true });
    const { rows } = await server.running.db.query<{ id: string; org_id: string }>("SELECT id, org_id FROM users WHERE user_name = 'admin'");
    ({ id: adminId, org_id: firstOrg } = rows[0]!);
    appClientId = await passwordFormApp(iamOwner, 'Acting');
  });
  after(async () => {
    await server?.stop();
  });

  test("a first-org ORG_USER_MANAGER cannot remove the instance admin's authenticator app: 403, the app stays", async () => {
    await giveOtp(adminId, firstOrg);
    const manager = await staff(firstOrg, ['ORG_USER_MANAGER']);
    assertError(await manager.api('DELETE', `/management/v1/users/${adminId}/auth_factors/otp`), 403);
    assert.equal((await findOtp(server.running.db, adminId))?.ready, true);
    const factors = await iamOwner('GET', `/management/v1/users/${adminId}/auth_factors`, { orgId: firstOrg });
    assert.deepEqual(
      factors.body.result.map((f: Record<string, unknown>) => Object.keys(f).find((k) => k !== 'state')),
      ['otp'],
    );
    // And it still guards the admin: a right password alone is no sign-in.
    const signIn = await (await passwordForm(server.url, appClientId))(await adminLoginName(), ADMIN_PASSWORD);
    assert.ok(signIn.status === 303 || signIn.status === 200, signIn.text.slice(0, 300));
    assert.doesNotMatch(signIn.headers.get('location') ?? '', /[?&]code=/);
  });

  test("nor a passkey of the instance admin, nor a first-org ORG_OWNER's factors", async () => {
    const manager = await staff(firstOrg, ['ORG_USER_MANAGER']);
    const passkeyId = await givePasskey(adminId, firstOrg);
    assertError(await manager.api('DELETE', `/management/v1/users/${adminId}/passkeys/${passkeyId}`), 403);
    assert.equal((await passkeysOf(server.running.db, adminId)).length, 1);

    const owner = await human(firstOrg, ['ORG_OWNER']);
    await giveOtp(owner, firstOrg);
    assertError(await manager.api('DELETE', `/management/v1/users/${owner}/auth_factors/otp`), 403);
    // An ORG_OWNER of the first org is no IAM_OWNER either.
    const orgOwner = await staff(firstOrg, ['ORG_OWNER']);
    assertError(await orgOwner.api('DELETE', `/management/v1/users/${adminId}/passkeys/${passkeyId}`), 403);
    assertError(await orgOwner.api('DELETE', `/management/v1/users/${adminId}/auth_factors/otp`), 403);
    assert.equal((await findOtp(server.running.db, adminId))?.ready, true);
  });

  test('a first-org ORG_USER_MANAGER cannot unlock the instance admin after ten wrong passwords: 403, still locked', async () => {
    const loginName = await adminLoginName();
    const form = await passwordForm(server.url, appClientId);
    for (let i = 0; i < 10; i += 1) await form(loginName, 'wrong-password');
    assert.equal(await stateOf(adminId), 'USER_STATE_LOCKED');
    const manager = await staff(firstOrg, ['ORG_USER_MANAGER']);
    assertError(await manager.api('POST', `/management/v1/users/${adminId}/_unlock`), 403);
    assert.equal(await stateOf(adminId), 'USER_STATE_LOCKED');
    // Nor may it end the admin's sessions.
    assertError(await manager.api('DELETE', `/management/v1/users/${adminId}/sessions`), 403);
    // The instance owner may.
    assert.equal((await iamOwner('POST', `/management/v1/users/${adminId}/_unlock`, { orgId: firstOrg })).status, 200);
    assert.equal(await stateOf(adminId), 'USER_STATE_ACTIVE');
  });

  test("a first-org ORG_OWNER cannot change or reset the first org's policies; IAM_OWNER can", async () => {
    const before = await lockoutPolicyOfFirstOrg();
    const owner = await staff(firstOrg, ['ORG_OWNER']);
    assertError(await owner.api('PUT', '/management/v1/policies/lockout', { body: { maxPasswordAttempts: 0, lockoutDurationSeconds: 0 } }), 403);
    assertError(await owner.api('PUT', '/management/v1/policies/login', { body: { forceMfa: false } }), 403);
    assert.deepEqual(await lockoutPolicyOfFirstOrg(), before);

    const set = await iamOwner('PUT', '/management/v1/policies/lockout', { body: { maxPasswordAttempts: 12 }, orgId: firstOrg });
    assert.equal(set.status, 200, set.text);
    assertError(await owner.api('DELETE', '/management/v1/policies/lockout'), 403);
    assert.equal((await lockoutPolicyOfFirstOrg()).maxPasswordAttempts, 12);
    assert.equal((await iamOwner('DELETE', '/management/v1/policies/lockout', { orgId: firstOrg })).status, 200);
    assert.deepEqual(await lockoutPolicyOfFirstOrg(), before);
  });

  test("an org's own owner still sets its policies, and its managers act on its end users", async () => {
    const setup = await iamOwner('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Tenant', domain: 'tenant.example.test' },
        human: { userName: 't', profile: { firstName: 'T', lastName: 'T' }, email: { email: 't@tenant.example.test' } },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    const tenant = setup.body.orgId;
    const owner = await staff(tenant, ['ORG_OWNER']);
    assert.equal((await owner.api('PUT', '/management/v1/policies/lockout', { body: { maxPasswordAttempts: 5 } })).status, 200);
    assert.equal((await owner.api('DELETE', '/management/v1/policies/lockout')).status, 200);

    const manager = await staff(tenant, ['ORG_USER_MANAGER']);
    const endUser = await human(tenant);
    await giveOtp(endUser, tenant);
    const passkeyId = await givePasskey(endUser, tenant);
    assert.equal((await manager.api('DELETE', `/management/v1/users/${endUser}/auth_factors/otp`)).status, 200);
    assert.equal((await manager.api('DELETE', `/management/v1/users/${endUser}/passkeys/${passkeyId}`)).status, 200);
    // A fellow manager holds no more than the manager: fine. An owner holds more: refused, even for its owner's factors.
    const fellow = await human(tenant, ['ORG_USER_MANAGER']);
    await giveOtp(fellow, tenant);
    assert.equal((await manager.api('DELETE', `/management/v1/users/${fellow}/auth_factors/otp`)).status, 200);
    const tenantOwner = await human(tenant, ['ORG_OWNER']);
    await giveOtp(tenantOwner, tenant);
    assertError(await manager.api('DELETE', `/management/v1/users/${tenantOwner}/auth_factors/otp`), 403);
    assert.equal((await owner.api('DELETE', `/management/v1/users/${tenantOwner}/auth_factors/otp`)).status, 200);
  });

  test("the IAM_OWNER removes anyone's factors", async () => {
    const passkeyId = (await passkeysOf(server.running.db, adminId))[0]!.id;
    assert.equal((await iamOwner('DELETE', `/management/v1/users/${adminId}/passkeys/${passkeyId}`, { orgId: firstOrg })).status, 200);
    assert.equal((await iamOwner('DELETE', `/management/v1/users/${adminId}/auth_factors/otp`, { orgId: firstOrg })).status, 200);
    assert.equal(await findOtp(server.running.db, adminId), undefined);
  });

  async function adminLoginName(): Promise<string> {
    return (await iamOwner('GET', `/management/v1/users/${adminId}`, { orgId: firstOrg })).body.user.preferredLoginName;
  }
});

describe('a login policy that leaves no way to sign in is refused', () => {
  let server: TestServer;
  let iamOwner: Api;
  let orgId: string;

  before(async () => {
    server = await testServer();
    iamOwner = apiClient(server.url, readAdminPat(server.dataDir), { strictJson: true });
    const setup = await iamOwner('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Strict', domain: 'strict.example.test' },
        human: { userName: 's', profile: { firstName: 'S', lastName: 'S' }, email: { email: 's@strict.example.test' } },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    orgId = setup.body.orgId;
  });
  after(async () => {
    await server?.stop();
  });

  const lockedOut = { forceMfa: true, secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' };

  test('forceMfa with no second factor and no passkeys: 400 naming secondFactors, at the instance and in an org; nothing changes', async () => {
    const instanceBefore = (await iamOwner('GET', '/admin/v1/policies/login')).body.policy;
    assertInvalid(await iamOwner('PUT', '/admin/v1/policies/login', { body: lockedOut }), ['secondFactors']);
    assert.deepEqual((await iamOwner('GET', '/admin/v1/policies/login')).body.policy, instanceBefore);

    const orgBefore = await iamOwner('GET', '/management/v1/policies/login', { orgId });
    assertInvalid(await iamOwner('PUT', '/management/v1/policies/login', { body: lockedOut, orgId }), ['secondFactors']);
    assert.deepEqual((await iamOwner('GET', '/management/v1/policies/login', { orgId })).body, orgBefore.body);
  });

  test('the same reached in two steps is refused at the second', async () => {
    const first = await iamOwner('PUT', '/management/v1/policies/login', {
      body: { secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' },
      orgId,
    });
    assert.equal(first.status, 200, first.text);
    assertInvalid(await iamOwner('PUT', '/management/v1/policies/login', { body: { forceMfa: true }, orgId }), ['secondFactors']);
    assert.equal((await iamOwner('GET', '/management/v1/policies/login', { orgId })).body.policy.forceMfa, false);
  });

  test('forceMfa with passkeys only, or with one second factor, is fine', async () => {
    const passkeysOnly = await iamOwner('PUT', '/management/v1/policies/login', {
      body: { forceMfa: true, secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' },
      orgId,
    });
    assert.equal(passkeysOnly.status, 200, passkeysOnly.text);
    const otpOnly = await iamOwner('PUT', '/management/v1/policies/login', {
      body: { secondFactors: ['SECOND_FACTOR_TYPE_OTP'], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' },
      orgId,
    });
    assert.equal(otpOnly.status, 200, otpOnly.text);
  });
});
