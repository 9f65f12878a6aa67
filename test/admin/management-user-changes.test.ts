import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';
import { LOGIN_FORM_REDIRECT, passwordForm, passwordFormApp, passwordFormAppWithSecret } from '../support/login-form.ts';
import { basicHeader, type ApiResponse } from '../support/api.ts';
import { runCodeFlow, type TokenSet } from '../support/code-flow.ts';

// docs/api/users.md: changing a user after its creation — profile, login
// name, phone, state (deactivate, reactivate, lock) and its grants — each
// with its event and `details`, every bad input a 400 naming the field,
// and every refusal (401, 403, 404, 409) leaving the user as it was.

let server: TestServer;
let defaultOrgId: string;
let defaultDomain: string;
let otherOrgId: string;
let otherOrgUserId: string;
let adminMachineId: string;
let nobodyPat: string;
let managerPat: string;
let ownerId: string;
let loginClientId: string;

const USERS = '/management/v1/users';
const PASSWORD = 'Secret-Passw0rd!';
const OVERLONG = 'x'.repeat(201);

async function addHuman(userName: string, orgId?: string): Promise<string> {
  const body = {
    userName,
    profile: { firstName: 'Ada', lastName: 'Lovelace', nickName: 'ada' },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
    phone: { phone: '+41791234567', isPhoneVerified: true },
    password: PASSWORD,
  };
  const res = await server.api('POST', `${USERS}/human`, { body, orgId });
  assert.equal(res.status, 200, res.text);
  return res.body.userId;
}

async function addMachine(userName: string): Promise<string> {
  const res = await server.api('POST', `${USERS}/machine`, { body: { userName, name: `Machine ${userName}` } });
  assert.equal(res.status, 200, res.text);
  return res.body.userId;
}

async function addPat(userId: string): Promise<string> {
  const res = await server.api('POST', `${USERS}/${userId}/pats`, { body: {} });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

async function addOrgMember(userId: string, roles: string[]): Promise<void> {
  const res = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles } });
  assert.equal(res.status, 200, res.text);
}

async function userView(userId: string): Promise<any> {
  const got = await server.api('GET', `${USERS}/${userId}`);
  assert.equal(got.status, 200, got.text);
  return got.body.user;
}

async function eventTypesOf(aggregateId: string): Promise<string[]> {
  const { rows } = await server.running.db.query<{ event_type: string }>('SELECT event_type FROM events WHERE aggregate_id = $1 ORDER BY position', [
    aggregateId,
  ]);
  return rows.map((row) => row.event_type);
}

/** Runs the refused calls and proves that none of them changed the user or wrote an event. */
async function assertNothingChanged(userId: string, refused: () => Promise<void>): Promise<void> {
  const row = async () => JSON.stringify((await server.running.db.query('SELECT * FROM users WHERE id = $1', [userId])).rows);
  const before = await row();
  const { rows } = await server.running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM events');
  await refused();
  assert.equal(await row(), before, 'the user is unchanged');
  const after = await server.running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM events');
  assert.equal(after.rows[0]!.n, rows[0]!.n, 'no event was written');
}

/** A 200 with `details` of the default org; answers the body. */
function written(res: ApiResponse): any {
  assert.equal(res.status, 200, res.text);
  assertDetails(res.body.details, defaultOrgId);
  return res.body;
}

before(async () => {
  server = await testServer();
  const { rows } = await server.running.db.query<{ id: string; org_id: string; domain: string }>(
    `SELECT u.id, u.org_id, d.domain FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.user_name = 'portcullis-admin'`,
  );
  ({ id: adminMachineId, org_id: defaultOrgId, domain: defaultDomain } = rows[0]!);
  const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
    body: { org: { name: 'Other Org' }, human: { userName: 'other', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@example.com' } } },
  });
  assert.equal(setup.status, 200, setup.text);
  ({ orgId: otherOrgId, userId: otherOrgUserId } = setup.body);
  nobodyPat = await addPat(await addMachine('nobody'));
  const managerId = await addMachine('manager');
  await addOrgMember(managerId, ['ORG_USER_MANAGER']);
  managerPat = await addPat(managerId);
  ownerId = await addHuman('owner');
  await addOrgMember(ownerId, ['ORG_OWNER']);
  loginClientId = await passwordFormApp(server.api, 'User changes');
});

after(async () => {
  await server?.stop();
});

/** The refusals every call shares: no token, no roles, unknown and foreign users. */
function itRefusesStrangers(method: string, suffix: string, body: () => unknown) {
  it('answers 401 without a token, 403 without the roles, 404 for unknown users and users of another org; nothing changes', async () => {
    const userId = await addHuman(`target-${suffix.replace(/\W/g, '')}-${Math.random().toString(36).slice(2, 8)}`);
    await assertNothingChanged(userId, async () => {
      assertError(await server.api(method, `${USERS}/${userId}/${suffix}`, { body: body(), token: null }), 401);
      assertError(await server.api(method, `${USERS}/${userId}/${suffix}`, { body: body(), token: 'not-a-token' }), 401);
      assertError(await server.api(method, `${USERS}/${userId}/${suffix}`, { body: body(), token: nobodyPat }), 403);
      assertError(await server.api(method, `${USERS}/${userId}/${suffix}`, { body: body(), orgId: otherOrgId, token: managerPat }), 403);
    });
    assertError(await server.api(method, `${USERS}/12345/${suffix}`, { body: body() }), 404);
    assertError(await server.api(method, `${USERS}/${'9'.repeat(300)}/${suffix}`, { body: body() }), 404);
    assertError(await server.api(method, `${USERS}/%00/${suffix}`, { body: body() }), 404);
    await assertNothingChanged(otherOrgUserId, async () => {
      assertError(await server.api(method, `${USERS}/${otherOrgUserId}/${suffix}`, { body: body() }), 404);
    });
    assertError(await server.api(method, `${USERS}/${userId}/${suffix}`, { body: body(), orgId: 'unknown-org' }), 404);
  });
}

describe('PUT /management/v1/users/{userId}/profile', () => {
  const profile = {
    firstName: 'Grace',
    lastName: 'Hopper',
    nickName: 'amazing',
    displayName: 'Rear Admiral',
    preferredLanguage: 'de-CH',
    gender: 'GENDER_FEMALE',
  };

  it('replaces the profile: user.human.profile.changed, details answered', async () => {
    const userId = await addHuman('profiled');
    const body = written(await server.api('PUT', `${USERS}/${userId}/profile`, { body: profile }));
    const user = await userView(userId);
    assert.deepEqual(user.human.profile, profile);
    assert.equal(user.details.sequence, body.details.sequence);
    assert.equal(user.human.phone.phone, '+41791234567', 'the phone is untouched');
    assert.equal((await eventTypesOf(userId)).at(-1), 'user.human.profile.changed');
  });

  it('defaults the display name to "first last" and clears what is left out', async () => {
    const userId = await addHuman('profiled-2');
    written(await server.api('PUT', `${USERS}/${userId}/profile`, { body: { firstName: 'Alan', lastName: 'Turing' } }));
    assert.deepEqual((await userView(userId)).human.profile, {
      firstName: 'Alan',
      lastName: 'Turing',
      nickName: '',
      displayName: 'Alan Turing',
      preferredLanguage: '',
      gender: 'GENDER_UNSPECIFIED',
    });
  });

  it('names every bad field (400) and changes nothing', async () => {
    const userId = await addHuman('profiled-3');
    const put = (body: unknown) => server.api('PUT', `${USERS}/${userId}/profile`, { body });
    await assertNothingChanged(userId, async () => {
      assertInvalid(await put({}), ['firstName', 'lastName']);
      assertInvalid(await put({ firstName: ' ', lastName: OVERLONG }), ['firstName', 'lastName']);
      assertInvalid(await put({ ...profile, nickName: OVERLONG, displayName: OVERLONG }), ['nickName', 'displayName']);
      assertInvalid(await put({ ...profile, preferredLanguage: 'not a tag', gender: 'GENDER_ROBOT' }), ['preferredLanguage', 'gender']);
      assertInvalid(await put({ ...profile, firstName: 42, lastName: null }), ['firstName', 'lastName'], { atLeast: true });
      assertInvalid(await put({ ...profile, userName: 'sneaky' }), ['userName'], { atLeast: true });
      assert.equal((await put([profile])).status, 400);
      assert.equal((await server.api('PUT', `${USERS}/${userId}/profile`, { raw: '{"firstName":' })).status, 400);
      assert.equal((await server.api('PUT', `${USERS}/${userId}/profile`, { raw: 'firstName=x', contentType: 'text/plain' })).status, 400);
    });
  });

  it('is for humans only (400)', async () => {
    const machineId = await addMachine('profile-less');
    assert.equal((await server.api('PUT', `${USERS}/${machineId}/profile`, { body: profile })).status, 400);
  });

  it("an ORG_USER_MANAGER may change an ORG_OWNER's profile (no credential or security state)", async () => {
    written(await server.api('PUT', `${USERS}/${ownerId}/profile`, { body: { firstName: 'Olga', lastName: 'Owner' }, token: managerPat }));
    assert.equal((await userView(ownerId)).human.profile.displayName, 'Olga Owner');
  });

  itRefusesStrangers('PUT', 'profile', () => profile);
});

describe('PUT /management/v1/users/{userId}/username', () => {
  it('renames the user: user.username.changed, the new login name signs in, the old one no longer', async () => {
    const userId = await addHuman('renamed');
    written(await server.api('PUT', `${USERS}/${userId}/username`, { body: { userName: 'renamed-2' } }));
    const user = await userView(userId);
    assert.equal(user.userName, 'renamed-2');
    assert.equal(user.preferredLoginName, `renamed-2@${defaultDomain}`);
    assert.equal((await eventTypesOf(userId)).at(-1), 'user.username.changed');
    const form = await passwordForm(server.url, loginClientId);
    assert.equal((await form(`renamed-2@${defaultDomain}`, PASSWORD)).status, 303);
    const again = await passwordForm(server.url, loginClientId);
    assert.notEqual((await again(`renamed@${defaultDomain}`, PASSWORD)).status, 303);
  });

  it("may change only the letter case of its own name; another user's name is 409 (any case), nothing changed", async () => {
    const userId = await addHuman('casey');
    written(await server.api('PUT', `${USERS}/${userId}/username`, { body: { userName: 'Casey' } }));
    await addHuman('taken');
    await assertNothingChanged(userId, async () => {
      assertError(await server.api('PUT', `${USERS}/${userId}/username`, { body: { userName: 'TAKEN' } }), 409);
    });
  });

  it('the same name in another org is no clash', async () => {
    const userId = await addHuman('roamer');
    written(await server.api('PUT', `${USERS}/${userId}/username`, { body: { userName: 'other' } }));
  });

  it('renames machine users too', async () => {
    const machineId = await addMachine('robot');
    written(await server.api('PUT', `${USERS}/${machineId}/username`, { body: { userName: 'robot-2' } }));
    assert.equal((await userView(machineId)).userName, 'robot-2');
  });

  it('names the bad field (400) and changes nothing', async () => {
    const userId = await addHuman('badly-renamed');
    const put = (body: unknown) => server.api('PUT', `${USERS}/${userId}/username`, { body });
    await assertNothingChanged(userId, async () => {
      assertInvalid(await put({}), ['userName']);
      assertInvalid(await put({ userName: '' }), ['userName']);
      assertInvalid(await put({ userName: 'two words' }), ['userName']);
      assertInvalid(await put({ userName: OVERLONG }), ['userName']);
      assertInvalid(await put({ userName: ['x'] }), ['userName']);
      assertInvalid(await put({ userName: 'ok', extra: 1 }), ['extra'], { atLeast: true });
    });
  });

  it('an ORG_USER_MANAGER cannot rename an ORG_OWNER (403), nor the IAM_OWNER admin', async () => {
    await assertNothingChanged(ownerId, async () => {
      assertError(await server.api('PUT', `${USERS}/${ownerId}/username`, { body: { userName: 'pwned' }, token: managerPat }), 403);
    });
    assertError(await server.api('PUT', `${USERS}/${adminMachineId}/username`, { body: { userName: 'pwned' }, token: managerPat }), 403);
  });

  itRefusesStrangers('PUT', 'username', () => ({ userName: `fresh-${Math.random().toString(36).slice(2, 8)}` }));
});

describe('PUT /management/v1/users/{userId}/phone', () => {
  it('sets the phone and its verification: user.human.phone.changed, and a code for a number not given as verified', async () => {
    const userId = await addHuman('phoned');
    written(await server.api('PUT', `${USERS}/${userId}/phone`, { body: { phone: '+1(555)010-9999' } }));
    assert.deepEqual((await userView(userId)).human.phone, { phone: '+1(555)010-9999', isPhoneVerified: false });
    written(await server.api('PUT', `${USERS}/${userId}/phone`, { body: { phone: '+4930123456', isPhoneVerified: true } }));
    assert.deepEqual((await userView(userId)).human.phone, { phone: '+4930123456', isPhoneVerified: true });
    assert.deepEqual((await eventTypesOf(userId)).slice(-3), ['user.human.phone.changed', 'user.human.phone.code.added', 'user.human.phone.changed']);
  });

  it('names every bad field (400) and changes nothing', async () => {
    const userId = await addHuman('badly-phoned');
    const put = (body: unknown) => server.api('PUT', `${USERS}/${userId}/phone`, { body });
    await assertNothingChanged(userId, async () => {
      assertInvalid(await put({}), ['phone']);
      assertInvalid(await put({ phone: '0791234567' }), ['phone']);
      assertInvalid(await put({ phone: `+${'1'.repeat(50)}` }), ['phone']);
      assertInvalid(await put({ phone: '+41791234567', isPhoneVerified: 'yes' }), ['isPhoneVerified']);
      assertInvalid(await put({ phone: '+41791234567', email: 'x@example.com' }), ['email'], { atLeast: true });
    });
  });

  it('is for humans only (400)', async () => {
    const machineId = await addMachine('phone-less');
    assert.equal((await server.api('PUT', `${USERS}/${machineId}/phone`, { body: { phone: '+41791234567' } })).status, 400);
  });

  it("an ORG_USER_MANAGER cannot change an ORG_OWNER's phone (403, nothing changed)", async () => {
    await assertNothingChanged(ownerId, async () => {
      assertError(await server.api('PUT', `${USERS}/${ownerId}/phone`, { body: { phone: '+999999' }, token: managerPat }), 403);
    });
  });

  itRefusesStrangers('PUT', 'phone', () => ({ phone: '+41790000000' }));
});

describe('POST /management/v1/users/{userId}/_deactivate, _reactivate', () => {
  it('a deactivated human cannot sign in; reactivated, it can again', async () => {
    const userId = await addHuman('dormant');
    written(await server.api('POST', `${USERS}/${userId}/_deactivate`, { body: {} }));
    assert.equal((await userView(userId)).state, 'USER_STATE_INACTIVE');
    const form = await passwordForm(server.url, loginClientId);
    assert.notEqual((await form(`dormant@${defaultDomain}`, PASSWORD)).status, 303, 'no sign-in while inactive');
    written(await server.api('POST', `${USERS}/${userId}/_reactivate`));
    assert.equal((await userView(userId)).state, 'USER_STATE_ACTIVE');
    const again = await passwordForm(server.url, loginClientId);
    assert.equal((await again(`dormant@${defaultDomain}`, PASSWORD)).status, 303);
    assert.deepEqual((await eventTypesOf(userId)).slice(-2), ['user.deactivated', 'user.reactivated']);
  });

  it("a deactivated machine user's PAT is refused (401) at once; reactivated, it works again", async () => {
    const machineId = await addMachine('dormant-robot');
    await addOrgMember(machineId, ['ORG_USER_MANAGER']);
    const pat = await addPat(machineId);
    assert.equal((await server.api('GET', `${USERS}/${machineId}`, { token: pat })).status, 200);
    written(await server.api('POST', `${USERS}/${machineId}/_deactivate`));
    assertError(await server.api('GET', `${USERS}/${machineId}`, { token: pat }), 401);
    written(await server.api('POST', `${USERS}/${machineId}/_reactivate`));
    assert.equal((await server.api('GET', `${USERS}/${machineId}`, { token: pat })).status, 200);
  });

  it('deactivates a locked user; refuses twice, and reactivating an active user (400), nothing changed', async () => {
    const userId = await addHuman('twice');
    written(await server.api('POST', `${USERS}/${userId}/_lock`));
    written(await server.api('POST', `${USERS}/${userId}/_deactivate`));
    assert.equal((await userView(userId)).state, 'USER_STATE_INACTIVE');
    await assertNothingChanged(userId, async () => {
      assert.equal((await server.api('POST', `${USERS}/${userId}/_deactivate`)).status, 400);
    });
    written(await server.api('POST', `${USERS}/${userId}/_reactivate`));
    await assertNothingChanged(userId, async () => {
      assert.equal((await server.api('POST', `${USERS}/${userId}/_reactivate`)).status, 400);
    });
  });

  it('nobody deactivates itself (400)', async () => {
    await assertNothingChanged(adminMachineId, async () => {
      assert.equal((await server.api('POST', `${USERS}/${adminMachineId}/_deactivate`)).status, 400);
    });
  });

  it('takes no fields (400)', async () => {
    const userId = await addHuman('fieldless');
    await assertNothingChanged(userId, async () => {
      assertInvalid(await server.api('POST', `${USERS}/${userId}/_deactivate`, { body: { reason: 'x' } }), ['reason'], { atLeast: true });
      assert.equal((await server.api('POST', `${USERS}/${userId}/_deactivate`, { body: 'x' })).status, 400);
    });
  });

  it('an ORG_USER_MANAGER cannot deactivate an ORG_OWNER nor the IAM_OWNER admin (403), but an end user', async () => {
    await assertNothingChanged(ownerId, async () => {
      assertError(await server.api('POST', `${USERS}/${ownerId}/_deactivate`, { token: managerPat }), 403);
    });
    assertError(await server.api('POST', `${USERS}/${adminMachineId}/_deactivate`, { token: managerPat }), 403);
    const endUser = await addHuman('end-user');
    written(await server.api('POST', `${USERS}/${endUser}/_deactivate`, { token: managerPat }));
  });

  itRefusesStrangers('POST', '_deactivate', () => ({}));
  itRefusesStrangers('POST', '_reactivate', () => ({}));
});

describe('POST /management/v1/users/{userId}/_lock', () => {
  it('locks until an admin unlocks: user.locked without an end, no sign-in', async () => {
    const userId = await addHuman('locked-out');
    written(await server.api('POST', `${USERS}/${userId}/_lock`));
    assert.equal((await userView(userId)).state, 'USER_STATE_LOCKED');
    const { rows } = await server.running.db.query<{ payload: any }>("SELECT payload FROM events WHERE aggregate_id = $1 AND event_type = 'user.locked'", [
      userId,
    ]);
    assert.deepEqual(
      rows.map((row) => row.payload),
      [{ lockedUntil: null }],
    );
    const form = await passwordForm(server.url, loginClientId);
    assert.notEqual((await form(`locked-out@${defaultDomain}`, PASSWORD)).status, 303);
    written(await server.api('POST', `${USERS}/${userId}/_unlock`));
    assert.equal((await userView(userId)).state, 'USER_STATE_ACTIVE');
  });

  it('refuses a locked or inactive user and itself (400), nothing changed', async () => {
    const userId = await addHuman('lock-twice');
    written(await server.api('POST', `${USERS}/${userId}/_lock`));
    await assertNothingChanged(userId, async () => {
      assert.equal((await server.api('POST', `${USERS}/${userId}/_lock`)).status, 400);
    });
    await assertNothingChanged(adminMachineId, async () => {
      assert.equal((await server.api('POST', `${USERS}/${adminMachineId}/_lock`)).status, 400);
    });
  });

  it('an ORG_USER_MANAGER cannot lock an ORG_OWNER (403)', async () => {
    await assertNothingChanged(ownerId, async () => {
      assertError(await server.api('POST', `${USERS}/${ownerId}/_lock`, { token: managerPat }), 403);
    });
  });

  itRefusesStrangers('POST', '_lock', () => ({}));
});

describe('PUT, DELETE /management/v1/users/{userId}/grants/{grantId}', () => {
  let projectId: string;
  let otherProjectId: string;

  async function project(name: string, roles: string[]): Promise<string> {
    const created = await server.api('POST', '/management/v1/projects', { body: { name } });
    assert.equal(created.status, 200, created.text);
    for (const roleKey of roles) {
      const role = await server.api('POST', `/management/v1/projects/${created.body.id}/roles`, { body: { roleKey, displayName: roleKey } });
      assert.equal(role.status, 200, role.text);
    }
    return created.body.id;
  }

  async function grant(userId: string, roleKeys: string[], onProject = projectId): Promise<string> {
    const res = await server.api('POST', `${USERS}/${userId}/grants`, { body: { projectId: onProject, roleKeys } });
    assert.equal(res.status, 200, res.text);
    return res.body.userGrantId;
  }

  const grantsOf = async (userId: string) => (await server.api('GET', `${USERS}/${userId}/grants`)).body.result;

  before(async () => {
    projectId = await project('Granting', ['reader', 'writer', 'admin']);
    otherProjectId = await project('Other granting', ['auditor']);
  });

  it('replaces the roles of a grant: user.grant.changed', async () => {
    const userId = await addHuman('regranted');
    const grantId = await grant(userId, ['reader']);
    const body = written(await server.api('PUT', `${USERS}/${userId}/grants/${grantId}`, { body: { roleKeys: ['writer', 'admin', 'writer'] } }));
    const [listed] = await grantsOf(userId);
    assert.deepEqual(listed.roleKeys, ['writer', 'admin']);
    assert.equal(listed.details.sequence, body.details.sequence);
    assert.equal((await eventTypesOf(grantId)).at(-1), 'user.grant.changed');
  });

  it('names each role the project does not define (400), also a role of another project; nothing changed', async () => {
    const userId = await addHuman('badly-regranted');
    const grantId = await grant(userId, ['reader']);
    const put = (body: unknown) => server.api('PUT', `${USERS}/${userId}/grants/${grantId}`, { body });
    assertInvalid(await put({ roleKeys: ['reader', 'auditor', 'root'] }), ['roleKeys[1]', 'roleKeys[2]'], { atLeast: true });
    assertInvalid(await put({}), ['roleKeys']);
    assertInvalid(await put({ roleKeys: 'reader' }), ['roleKeys']);
    assertInvalid(await put({ roleKeys: [OVERLONG] }), ['roleKeys[0]'], { atLeast: true });
    assertInvalid(await put({ roleKeys: [], projectId: otherProjectId }), ['projectId'], { atLeast: true });
    assert.deepEqual(
      (await grantsOf(userId)).map((g: any) => g.roleKeys),
      [['reader']],
    );
    assert.deepEqual(await eventTypesOf(grantId), ['user.grant.added']);
  });

  it('removes a grant: user.grant.removed, gone from the list', async () => {
    const userId = await addHuman('ungranted');
    const grantId = await grant(userId, ['reader']);
    const kept = await grant(userId, ['auditor'], otherProjectId);
    written(await server.api('DELETE', `${USERS}/${userId}/grants/${grantId}`));
    assert.deepEqual(
      (await grantsOf(userId)).map((g: any) => g.id),
      [kept],
    );
    assert.equal((await eventTypesOf(grantId)).at(-1), 'user.grant.removed');
    assertError(await server.api('DELETE', `${USERS}/${userId}/grants/${grantId}`), 404);
  });

  it("another user's grant, an unknown or malformed grant id are 404; nothing changed", async () => {
    const userId = await addHuman('grant-owner');
    const grantId = await grant(userId, ['reader']);
    const stranger = await addHuman('grant-stranger');
    for (const [user, id] of [
      [stranger, grantId],
      [userId, '12345'],
      [userId, '%00'],
      [userId, 'x'.repeat(300)],
    ]) {
      assertError(await server.api('PUT', `${USERS}/${user}/grants/${id}`, { body: { roleKeys: ['writer'] } }), 404);
      assertError(await server.api('DELETE', `${USERS}/${user}/grants/${id}`), 404);
    }
    assert.deepEqual(
      (await grantsOf(userId)).map((g: any) => g.roleKeys),
      [['reader']],
    );
  });

  it('answers 401 without a token, 403 without the roles or in another org, 404 for a user of another org; nothing changed', async () => {
    const userId = await addHuman('guarded-grant');
    const grantId = await grant(userId, ['reader']);
    const path = `${USERS}/${userId}/grants/${grantId}`;
    const body = { roleKeys: ['admin'] };
    for (const token of [null, 'not-a-token']) {
      assertError(await server.api('PUT', path, { body, token }), 401);
      assertError(await server.api('DELETE', path, { token }), 401);
    }
    assertError(await server.api('PUT', path, { body, token: nobodyPat }), 403);
    assertError(await server.api('DELETE', path, { token: nobodyPat }), 403);
    assertError(await server.api('DELETE', path, { token: managerPat, orgId: otherOrgId }), 403);
    assertError(await server.api('PUT', path, { body, orgId: otherOrgId }), 404);
    assertError(await server.api('DELETE', path, { orgId: otherOrgId }), 404);
    assertError(await server.api('DELETE', `${USERS}/${otherOrgUserId}/grants/${grantId}`), 404);
    assert.deepEqual(
      (await grantsOf(userId)).map((g: any) => g.roleKeys),
      [['reader']],
    );
  });

  it('an ORG_USER_MANAGER changes and removes grants of its org', async () => {
    const userId = await addHuman('manager-granted');
    const grantId = await grant(userId, ['reader']);
    written(await server.api('PUT', `${USERS}/${userId}/grants/${grantId}`, { body: { roleKeys: ['writer'] }, token: managerPat }));
    written(await server.api('DELETE', `${USERS}/${userId}/grants/${grantId}`, { token: managerPat }));
  });
});

describe('GET /management/v1/users/{userId}/sessions, DELETE …/sessions/{sessionId}', () => {
  let app: { clientId: string; clientSecret: string };

  before(async () => {
    app = await passwordFormAppWithSecret(server.api, 'Sessions');
  });

  /** One sign-in in a fresh browser: a session of its own. */
  const signIn = (userName: string): Promise<TokenSet> =>
    runCodeFlow(
      { baseUrl: server.url, ...app, redirectUri: LOGIN_FORM_REDIRECT, scope: 'openid' },
      { loginName: `${userName}@${defaultDomain}`, password: PASSWORD },
    );

  async function introspect(token: string): Promise<boolean> {
    const res = await fetch(`${server.url}/oauth/v2/introspect`, {
      method: 'POST',
      headers: { authorization: basicHeader(app.clientId, app.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    });
    return ((await res.json()) as { active: boolean }).active;
  }

  const sessionsOf = async (userId: string, token?: string) => {
    const res = await server.api('GET', `${USERS}/${userId}/sessions`, { token });
    assert.equal(res.status, 200, res.text);
    return res.body.result as Array<{ id: string; creationDate: string; lastActiveDate: string; userAgent: string; amr: string[] }>;
  };

  it('lists each browser session with its dates and amr, never the session cookie', async () => {
    const userId = await addHuman('traveller');
    assert.deepEqual(await sessionsOf(userId), []);
    const started = Date.now() - 1000;
    await signIn('traveller');
    await signIn('traveller');
    const sessions = await sessionsOf(userId);
    assert.equal(sessions.length, 2);
    for (const session of sessions) {
      assert.deepEqual(Object.keys(session).sort(), ['amr', 'creationDate', 'id', 'lastActiveDate', 'userAgent']);
      assert.deepEqual(session.amr, ['pwd']);
      assert.equal(session.userAgent, '');
      assert.ok(Date.parse(session.creationDate) >= started && Date.parse(session.creationDate) <= Date.now());
      assert.ok(Date.parse(session.lastActiveDate) >= Date.parse(session.creationDate));
      assert.ok(Date.parse(session.lastActiveDate) <= Date.now() + 1000);
    }
    assert.notEqual(sessions[0]!.id, sessions[1]!.id);
    const { rows } = await server.running.db.query<{ session_id: string }>('SELECT session_id FROM user_sessions WHERE account_id = $1', [userId]);
    const cookies = rows.map((row) => row.session_id);
    assert.equal(cookies.length, 2);
    for (const session of sessions) assert.ok(!cookies.includes(session.id), 'the id is not the session cookie value');
  });

  it('ends one session: its tokens end, the other session and its tokens stay; user.session.terminated', async () => {
    const userId = await addHuman('two-browsers');
    const first = await signIn('two-browsers');
    const [one] = await sessionsOf(userId);
    const second = await signIn('two-browsers');
    const other = (await sessionsOf(userId)).find((session) => session.id !== one!.id)!;
    assert.equal(await introspect(first.access_token), true);
    written(await server.api('DELETE', `${USERS}/${userId}/sessions/${one!.id}`));
    assert.deepEqual(
      (await sessionsOf(userId)).map((session) => session.id),
      [other.id],
    );
    assert.equal(await introspect(first.access_token), false);
    assert.equal(await introspect(second.access_token), true);
    assert.equal((await eventTypesOf(userId)).at(-1), 'user.session.terminated');
    assertError(await server.api('DELETE', `${USERS}/${userId}/sessions/${one!.id}`), 404);
  });

  it('a session of another user, an unknown or malformed id are 404, nothing ended', async () => {
    const userId = await addHuman('session-holder');
    await signIn('session-holder');
    const [session] = await sessionsOf(userId);
    const stranger = await addHuman('session-stranger');
    const { rows } = await server.running.db.query<{ session_id: string }>('SELECT session_id FROM user_sessions WHERE account_id = $1', [userId]);
    await assertNothingChanged(userId, async () => {
      assertError(await server.api('DELETE', `${USERS}/${stranger}/sessions/${session!.id}`), 404);
      assertError(await server.api('DELETE', `${USERS}/${userId}/sessions/${rows[0]!.session_id}`), 404);
      assertError(await server.api('DELETE', `${USERS}/${userId}/sessions/unknown`), 404);
      assertError(await server.api('DELETE', `${USERS}/${userId}/sessions/${'x'.repeat(500)}`), 404);
      assertError(await server.api('DELETE', `${USERS}/${userId}/sessions/%00`), 404);
    });
    assert.equal((await sessionsOf(userId)).length, 1);
  });

  it("the every-role rule: an ORG_USER_MANAGER neither lists nor ends an ORG_OWNER's sessions (403), but an end user's", async () => {
    const ownerName = 'session-owner';
    const owner = await addHuman(ownerName);
    await addOrgMember(owner, ['ORG_OWNER']);
    await signIn(ownerName);
    const [session] = await sessionsOf(owner);
    await assertNothingChanged(owner, async () => {
      assertError(await server.api('GET', `${USERS}/${owner}/sessions`, { token: managerPat }), 403);
      assertError(await server.api('DELETE', `${USERS}/${owner}/sessions/${session!.id}`, { token: managerPat }), 403);
    });
    assert.equal((await sessionsOf(owner)).length, 1);
    const endUser = await addHuman('session-end-user');
    await signIn('session-end-user');
    const [endUserSession] = await sessionsOf(endUser, managerPat);
    written(await server.api('DELETE', `${USERS}/${endUser}/sessions/${endUserSession!.id}`, { token: managerPat }));
  });

  it('answers 401 without a token, 403 without the roles, 404 for unknown users and users of another org', async () => {
    const userId = await addHuman('session-guarded');
    for (const [method, path] of [
      ['GET', 'sessions'],
      ['DELETE', 'sessions/abc'],
    ] as const) {
      await assertNothingChanged(userId, async () => {
        assertError(await server.api(method, `${USERS}/${userId}/${path}`, { token: null }), 401);
        assertError(await server.api(method, `${USERS}/${userId}/${path}`, { token: nobodyPat }), 403);
        assertError(await server.api(method, `${USERS}/${userId}/${path}`, { token: managerPat, orgId: otherOrgId }), 403);
      });
      assertError(await server.api(method, `${USERS}/12345/${path}`), 404);
      assertError(await server.api(method, `${USERS}/${otherOrgUserId}/${path}`), 404);
      assertError(await server.api(method, `${USERS}/${userId}/${path}`, { orgId: 'unknown-org' }), 404);
    }
  });
});
