import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertError, assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';

// The admin calls of the self-service flows (docs/api/users.md,
// "Invitations, verification and password reset"): what each answers, what
// it queues, and every bad input a documented 4xx that changes nothing.
// Without an SMTP server the mails go to the outbox folder; the outbox
// table tells what was queued.

describe('user code calls: password/_reset, _resend_initialization, email/_resend_verification, PUT email', () => {
  let server: TestServer;
  let acme: string;
  let ownerId: string;
  let inAcme: Api;
  let counter = 0;

  async function human(fields: { password?: string; verified?: boolean } = {}): Promise<string> {
    const userName = `person${++counter}`;
    const created = await inAcme('POST', '/management/v1/users/human', {
      body: {
        userName,
        profile: { firstName: 'P', lastName: 'Q' },
        email: { email: `${userName}@acme.example.test`, ...(fields.verified ? { isEmailVerified: true } : {}) },
        ...(fields.password ? { password: fields.password } : {}),
      },
    });
    assert.equal(created.status, 200, created.text);
    return created.body.userId;
  }

  /** A machine user of `orgId` holding `roles` there, calling with its PAT. */
  async function staff(orgId: string, roles: string[]): Promise<Api> {
    const userName = `staff${++counter}`;
    const user = await server.api('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId });
    assert.equal(user.status, 200, user.text);
    assert.equal((await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: user.body.userId, roles }, orgId })).status, 200);
    const pat = await server.api('POST', `/management/v1/users/${user.body.userId}/pats`, { orgId });
    return apiClient(server.url, pat.body.token, { strictJson: true, orgId });
  }

  const queued = async (userId: string) =>
    (await server.running.db.query<{ t: string }>('SELECT message_type AS t FROM notification_outbox WHERE user_id = $1 ORDER BY id', [userId])).rows.map(
      (r) => r.t,
    );
  const events = async (userId: string) =>
    (
      await server.running.db.query<{ t: string; p: unknown }>('SELECT event_type AS t, payload AS p FROM events WHERE aggregate_id = $1 ORDER BY position', [
        userId,
      ])
    ).rows;

  before(async () => {
    server = await testServer();
    const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'ACME', domain: 'acme.example.test' },
        human: { userName: 'owner', profile: { firstName: 'O', lastName: 'W' }, email: { email: 'owner@acme.example.test' }, password: 'Owner-Passw0rd' },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    acme = setup.body.orgId;
    ownerId = setup.body.userId;
    inAcme = apiClient(server.url, server.pat, { strictJson: true, orgId: acme });
  });
  after(() => server?.stop());

  test('a human added without a password is invited; with one and an unverified email, VerifyEmail; a verified one, nothing', async () => {
    const invited = await human();
    const unverified = await human({ password: 'Some-Passw0rd' });
    const verified = await human({ password: 'Some-Passw0rd', verified: true });
    assert.deepEqual(await queued(invited), ['InitCode']);
    assert.deepEqual(await queued(unverified), ['VerifyEmail']);
    assert.deepEqual(await queued(verified), []);
    assert.deepEqual(
      (await events(invited)).map((e) => e.t),
      ['user.human.added', 'user.human.initialization.code.added'],
    );
  });

  test('password/_reset: returnCode answers the code (digested at rest, never in an event), sendMail queues PasswordReset', async () => {
    const userId = await human({ password: 'Some-Passw0rd', verified: true });
    const returned = await inAcme('POST', `/management/v1/users/${userId}/password/_reset`, { body: { returnCode: true } });
    assert.equal(returned.status, 200, returned.text);
    assert.match(returned.body.verificationCode, /^[A-Z0-9]{10}$/);
    assert.equal(returned.body.details.resourceOwner, acme);
    const mailed = await inAcme('POST', `/management/v1/users/${userId}/password/_reset`, { body: { sendMail: true } });
    assert.equal(mailed.status, 200, mailed.text);
    assert.equal(mailed.body.verificationCode, undefined);
    assert.deepEqual(await queued(userId), ['PasswordReset']);
    const written = await events(userId);
    assert.deepEqual(
      written.filter((e) => e.t === 'user.human.password.code.added').map((e) => (e.p as { messageSent: boolean }).messageSent),
      [false, true],
    );
    assert.doesNotMatch(JSON.stringify(written), new RegExp(returned.body.verificationCode));
    const { rows } = await server.running.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM verification_codes WHERE user_id = $1 AND length(typed_digest) = 32 AND length(link_digest) = 32 AND position(convert_to($2, 'UTF8') in typed_digest) = 0",
      [userId, returned.body.verificationCode],
    );
    assert.equal(rows[0]!.n, 2);
  });

  test('password/_reset: both, neither, wrong types, unknown fields and NUL bytes are 400 naming the field, and nothing is issued', async () => {
    const userId = await human({ password: 'Some-Passw0rd', verified: true });
    const reset = (body: unknown) => inAcme('POST', `/management/v1/users/${userId}/password/_reset`, { body });
    assertInvalid(await reset({}), ['sendMail']);
    assertInvalid(await reset({ sendMail: true, returnCode: true }), ['sendMail']);
    assertInvalid(await reset({ sendMail: false, returnCode: false }), ['sendMail']);
    assertInvalid(await reset({ sendMail: 'yes' }), ['sendMail']);
    assertInvalid(await reset({ returnCode: 1 }), ['returnCode', 'sendMail']);
    assertInvalid(await reset({ sendMail: true, password: 'x' }), ['password']);
    assertInvalid(await reset({ 'send\u0000Mail': true }), ['(key)', 'send\u0000Mail', 'sendMail'], { atLeast: true });
    assertInvalid(await reset([true]), ['(body)'], { atLeast: true });
    const malformed = await inAcme('POST', `/management/v1/users/${userId}/password/_reset`, { raw: '{"sendMail": tru' });
    assert.equal(malformed.status, 400, malformed.text);
    assert.deepEqual(await queued(userId), []);
    assert.equal((await events(userId)).filter((e) => e.t === 'user.human.password.code.added').length, 0);
  });

  test('an unknown user, a user of another org and an id that cannot be one are 404 on every call', async () => {
    const userId = await human({ password: 'Some-Passw0rd' });
    const other = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Other', domain: 'other.example.test' },
        human: { userName: 'o', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@other.example.test' }, password: 'Other-Passw0rd' },
      },
    });
    const otherOwner = await staff(other.body.orgId, ['ORG_OWNER']);
    const calls: Array<[string, string, unknown]> = [
      ['POST', 'password/_reset', { sendMail: true }],
      ['POST', '_resend_initialization', {}],
      ['POST', 'email/_resend_verification', {}],
      ['PUT', 'email', { email: 'new@acme.example.test' }],
    ];
    for (const [method, path, body] of calls) {
      assertError(await inAcme(method, `/management/v1/users/nosuchuser/${path}`, { body }), 404);
      assertError(await inAcme(method, `/management/v1/users/bad%00id/${path}`, { body }), 404);
      // The other org's owner, in its own org: the user is not there.
      assertError(await otherOwner(method, `/management/v1/users/${userId}/${path}`, { body }), 404);
      // Naming ACME does not help: it holds no role there.
      assertError(await otherOwner(method, `/management/v1/users/${userId}/${path}`, { body, orgId: acme }), 403);
    }
    assert.deepEqual(await queued(userId), ['VerifyEmail'], 'only the mail of its creation');
  });

  test('an ORG_USER_MANAGER cannot act on an ORG_OWNER: 403 on every call, the email unchanged', async () => {
    const manager = await staff(acme, ['ORG_USER_MANAGER']);
    for (const [method, path, body] of [
      ['POST', 'password/_reset', { returnCode: true }],
      ['POST', '_resend_initialization', {}],
      ['POST', 'email/_resend_verification', {}],
      ['PUT', 'email', { email: 'taken-over@evil.example.test', isEmailVerified: true }],
    ] as const) {
      assertError(await manager(method, `/management/v1/users/${ownerId}/${path}`, { body }), 403);
    }
    const owner = await inAcme('GET', `/management/v1/users/${ownerId}`);
    assert.equal(owner.body.user.human.email.email, 'owner@acme.example.test');
    assert.deepEqual(await queued(ownerId), []);
    const endUser = await human({ password: 'Some-Passw0rd', verified: true });
    assert.equal((await manager('POST', `/management/v1/users/${endUser}/password/_reset`, { body: { sendMail: true } })).status, 200);
  });

  test('the user resource says whether a human has a password, read and searched; a machine has no human part', async () => {
    const invited = await human();
    const withPassword = await human({ password: 'Some-Passw0rd' });
    const machine = await inAcme('POST', '/management/v1/users/machine', { body: { userName: `m${++counter}`, name: 'M' } });
    const read = async (userId: string) => (await inAcme('GET', `/management/v1/users/${userId}`)).body.user;
    assert.equal((await read(invited)).human.passwordSet, false);
    assert.equal((await read(withPassword)).human.passwordSet, true);
    assert.equal((await read(ownerId)).human.passwordSet, true, 'the org setup’s human');
    assert.equal((await read(machine.body.userId)).human, undefined);
    const found = await inAcme('POST', '/management/v1/users/_search', { body: { queries: [{ typeQuery: { type: 'TYPE_HUMAN' } }] } });
    assert.equal(found.status, 200, found.text);
    const listed = new Map(found.body.result.map((u: { id: string; human: { passwordSet: boolean } }) => [u.id, u.human.passwordSet]));
    assert.equal(listed.get(invited), false);
    assert.equal(listed.get(withPassword), true);
    // Read-only: a body that tries to set it is refused, and nothing changes.
    const changed = await inAcme('PUT', `/management/v1/users/${invited}/profile`, { body: { firstName: 'P', lastName: 'Q', passwordSet: true } });
    assertInvalid(changed, ['passwordSet']);
    const added = await inAcme('POST', '/management/v1/users/human', {
      body: { userName: `x${++counter}`, profile: { firstName: 'X', lastName: 'Y' }, email: { email: `x${counter}@acme.example.test` }, passwordSet: true },
    });
    assertInvalid(added, ['passwordSet']);
    assert.equal((await read(invited)).human.passwordSet, false);
  });

  test('_resend_initialization: only for a human without a password; a body with fields is 400', async () => {
    const invited = await human();
    const withPassword = await human({ password: 'Some-Passw0rd' });
    assert.equal((await inAcme('POST', `/management/v1/users/${invited}/_resend_initialization`, { body: {} })).status, 200);
    assert.equal((await inAcme('POST', `/management/v1/users/${invited}/_resend_initialization`)).status, 200);
    assert.deepEqual(await queued(invited), ['InitCode', 'InitCode', 'InitCode']);
    assertInvalid(await inAcme('POST', `/management/v1/users/${invited}/_resend_initialization`, { body: { sendMail: true } }), ['sendMail']);
    const refused = await inAcme('POST', `/management/v1/users/${withPassword}/_resend_initialization`, { body: {} });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.message, /already set its password/);
    const machine = await inAcme('POST', '/management/v1/users/machine', { body: { userName: `m${++counter}`, name: 'M' } });
    assert.equal((await inAcme('POST', `/management/v1/users/${machine.body.userId}/_resend_initialization`, { body: {} })).status, 400);
    const locked = await human();
    assert.equal((await inAcme('POST', `/management/v1/users/${locked}/_lock`, { body: {} })).status, 200);
    const whileLocked = await inAcme('POST', `/management/v1/users/${locked}/_resend_initialization`, { body: {} });
    assert.equal(whileLocked.status, 400, 'no code while locked');
    assert.deepEqual(await queued(locked), ['InitCode']);
  });

  test('email/_resend_verification: queues VerifyEmail for an unverified address; a verified one is 400', async () => {
    const unverified = await human({ password: 'Some-Passw0rd' });
    const verified = await human({ password: 'Some-Passw0rd', verified: true });
    assert.equal((await inAcme('POST', `/management/v1/users/${unverified}/email/_resend_verification`, { body: {} })).status, 200);
    assert.deepEqual(await queued(unverified), ['VerifyEmail', 'VerifyEmail']);
    const refused = await inAcme('POST', `/management/v1/users/${verified}/email/_resend_verification`, { body: {} });
    assert.equal(refused.status, 400, refused.text);
    assertInvalid(await inAcme('POST', `/management/v1/users/${unverified}/email/_resend_verification`, { body: { x: 1 } }), ['x']);
  });

  test('PUT email: a new address is unverified and sent VerifyEmail; one given as verified is not; bad bodies are 400', async () => {
    const userId = await human({ password: 'Some-Passw0rd', verified: true });
    const changed = await inAcme('PUT', `/management/v1/users/${userId}/email`, { body: { email: 'moved@acme.example.test' } });
    assert.equal(changed.status, 200, changed.text);
    let user = (await inAcme('GET', `/management/v1/users/${userId}`)).body.user;
    assert.deepEqual(user.human.email, { email: 'moved@acme.example.test', isEmailVerified: false });
    assert.deepEqual(await queued(userId), ['VerifyEmail']);
    const [queuedTo] = (await server.running.db.query<{ r: string }>('SELECT recipient AS r FROM notification_outbox WHERE user_id = $1', [userId])).rows;
    assert.equal(queuedTo!.r, 'moved@acme.example.test');

    const given = await inAcme('PUT', `/management/v1/users/${userId}/email`, { body: { email: 'given@acme.example.test', isEmailVerified: true } });
    assert.equal(given.status, 200, given.text);
    user = (await inAcme('GET', `/management/v1/users/${userId}`)).body.user;
    assert.deepEqual(user.human.email, { email: 'given@acme.example.test', isEmailVerified: true });
    assert.deepEqual(await queued(userId), ['VerifyEmail']);
    const types = (await events(userId)).map((e) => e.t);
    assert.deepEqual(types.slice(-4), ['user.human.email.changed', 'user.human.email.code.added', 'user.human.email.changed', 'user.human.email.verified']);

    const put = (body: unknown) => inAcme('PUT', `/management/v1/users/${userId}/email`, { body });
    assertInvalid(await put({}), ['email']);
    assertInvalid(await put({ email: 'not an address' }), ['email']);
    assertInvalid(await put({ email: 5 }), ['email']);
    assertInvalid(await put({ email: 'a\u0000b@acme.example.test' }), ['email'], { atLeast: true });
    assertInvalid(await put({ email: 'ok@acme.example.test', isEmailVerified: 'yes' }), ['isEmailVerified']);
    assertInvalid(await put({ email: 'ok@acme.example.test', extra: true }), ['extra']);
    assertInvalid(await put({ email: `${'a'.repeat(250)}@acme.example.test` }), ['email']);
    user = (await inAcme('GET', `/management/v1/users/${userId}`)).body.user;
    assert.equal(user.human.email.email, 'given@acme.example.test', 'nothing changed by the bad bodies');
  });
});
