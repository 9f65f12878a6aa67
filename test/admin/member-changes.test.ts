import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid, errorReason } from '../support/assertions.ts';
import { insertPat, testServer, type TestServer } from '../support/server.ts';

// docs/api/users.md, Members: listing, changing and removing the members of
// an org and of the instance; the every-role rule and the last owner, each
// refused with its own ErrorInfo reason (docs/api/README.md, Errors).

let server: TestServer;
let api: Api;
let orgId: string;
let ownerId: string;
let ownerToken: string;
let managerToken: string;
let managerId: string;
let firstOrgId: string;

const ORG_MEMBERS = '/management/v1/orgs/me/members';
const INSTANCE_MEMBERS = '/admin/v1/members';

before(async () => {
  server = await testServer();
  api = apiClient(server.url, server.pat);
  const setup = await api('POST', '/admin/v1/orgs/_setup', {
    body: {
      org: { name: 'Members Org' },
      human: {
        userName: 'olga',
        profile: { firstName: 'Olga', lastName: 'Owner' },
        email: { email: 'olga@members.example.com', isEmailVerified: true },
        password: 'S3cure-Passw0rd!',
      },
    },
  });
  assert.equal(setup.status, 200, setup.text);
  orgId = setup.json.orgId;
  ownerId = setup.json.userId;
  ownerToken = await insertPat(server, ownerId);
  managerId = await newHuman('manfred', 'Manfred Manager');
  await addOrgMember(managerId, ['ORG_USER_MANAGER']);
  managerToken = await insertPat(server, managerId);
  const orgs = await api('POST', '/admin/v1/orgs/_search', { body: {} });
  firstOrgId = orgs.json.result.find((o: { id: string }) => o.id !== orgId).id;
});
after(async () => {
  await server?.stop();
});

async function newHuman(userName: string, displayName: string, inOrg = orgId): Promise<string> {
  const [firstName, lastName] = displayName.split(' ');
  const res = await api('POST', '/management/v1/users/human', {
    body: { userName, profile: { firstName, lastName, displayName }, email: { email: `${userName}@example.com` }, password: 'S3cure-Passw0rd!' },
    orgId: inOrg,
  });
  assert.equal(res.status, 200, res.text);
  return res.json.userId;
}

async function addOrgMember(userId: string, roles: string[], inOrg = orgId): Promise<void> {
  const res = await api('POST', ORG_MEMBERS, { body: { userId, roles }, orgId: inOrg });
  assert.equal(res.status, 200, res.text);
}

async function orgMembers(inOrg = orgId): Promise<Array<{ userId: string; roles: string[] }>> {
  const res = await api('POST', `${ORG_MEMBERS}/_search`, { body: {}, orgId: inOrg });
  assert.equal(res.status, 200, res.text);
  return res.json.result;
}

async function rolesOf(userId: string, inOrg = orgId): Promise<string[] | undefined> {
  return (await orgMembers(inOrg)).find((m) => m.userId === userId)?.roles;
}

describe('POST /management/v1/orgs/me/members/_search', () => {
  test('lists the members with roles, names and type, ordered by user name', async () => {
    const machine = await api('POST', '/management/v1/users/machine', { body: { userName: 'robot', name: 'Build Robot' }, orgId });
    assert.equal(machine.status, 200, machine.text);
    await addOrgMember(machine.json.userId, ['ORG_USER_MANAGER']);
    const res = await api('POST', `${ORG_MEMBERS}/_search`, { token: ownerToken, body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.details.totalResult, '3');
    assert.deepEqual(res.json.result, [
      {
        userId: managerId,
        roles: ['ORG_USER_MANAGER'],
        displayName: 'Manfred Manager',
        preferredLoginName: res.json.result[0].preferredLoginName,
        userType: 'TYPE_HUMAN',
      },
      {
        userId: ownerId,
        roles: ['ORG_OWNER'],
        displayName: res.json.result[1].displayName,
        preferredLoginName: res.json.result[1].preferredLoginName,
        userType: 'TYPE_HUMAN',
      },
      {
        userId: machine.json.userId,
        roles: ['ORG_USER_MANAGER'],
        displayName: 'Build Robot',
        preferredLoginName: res.json.result[2].preferredLoginName,
        userType: 'TYPE_MACHINE',
      },
    ]);
    assert.equal(res.json.result[1].displayName, 'Olga Owner');
    assert.match(res.json.result[0].preferredLoginName, /^manfred@/);
    assert.match(res.json.result[2].preferredLoginName, /^robot@/);
    const filtered = await api('POST', `${ORG_MEMBERS}/_search`, {
      token: ownerToken,
      body: { queries: [{ displayNameQuery: { displayName: 'build', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }] },
    });
    assert.deepEqual(
      filtered.json.result.map((m: { userId: string }) => m.userId),
      [machine.json.userId],
    );
    const byName = await api('POST', `${ORG_MEMBERS}/_search`, {
      token: ownerToken,
      body: { queries: [{ userNameQuery: { userName: 'olga' } }], query: { limit: 1 } },
    });
    assert.deepEqual(
      byName.json.result.map((m: { userId: string }) => m.userId),
      [ownerId],
    );
    assert.equal((await api('POST', `${ORG_MEMBERS}/_search`, { token: ownerToken })).status, 200, 'no body is the first page');
  });

  test('bad bodies 400 naming the field; no token 401; no ORG_OWNER 403; another org lists its own', async () => {
    assertInvalid(
      await api('POST', `${ORG_MEMBERS}/_search`, { token: ownerToken, body: { queries: [{ emailQuery: { emailAddress: 'x' } }] } }),
      ['queries[0].emailQuery'],
      {
        atLeast: true,
      },
    );
    assertInvalid(await api('POST', `${ORG_MEMBERS}/_search`, { token: ownerToken, body: { query: { limit: '5000' } } }), ['query.limit'], { atLeast: true });
    assertInvalid(await api('POST', `${ORG_MEMBERS}/_search`, { token: ownerToken, body: { userId: 'x' } }), ['userId']);
    assertError(await api('POST', `${ORG_MEMBERS}/_search`, { token: null, body: {} }), 401);
    assertError(await api('POST', `${ORG_MEMBERS}/_search`, { token: managerToken, body: {} }), 403);
    const firstOrg = await api('POST', `${ORG_MEMBERS}/_search`, { body: {}, orgId: firstOrgId });
    assert.ok(firstOrg.json.result.length > 0, firstOrg.text);
    assert.ok(!firstOrg.json.result.some((m: { userId: string }) => m.userId === ownerId), 'the first org lists none of this org’s members');
    assertError(await api('POST', `${ORG_MEMBERS}/_search`, { token: ownerToken, body: {}, orgId: firstOrgId }), 403);
  });
});

describe('PUT and DELETE /management/v1/orgs/me/members/{userId}', () => {
  test('PUT replaces the member’s roles, with an event and details', async () => {
    const userId = await newHuman('paula', 'Paula Promoted');
    await addOrgMember(userId, ['ORG_USER_MANAGER']);
    const res = await api('PUT', `${ORG_MEMBERS}/${userId}`, { token: ownerToken, body: { roles: ['ORG_USER_MANAGER', 'ORG_END_USER_IMPERSONATOR'] } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, orgId);
    assert.deepEqual(await rolesOf(userId), ['ORG_USER_MANAGER', 'ORG_END_USER_IMPERSONATOR']);
    const events = await api('POST', '/admin/v1/events/_search', { body: { queries: [{ eventTypesQuery: { types: ['org.member.changed'] } }] } });
    assert.ok(events.json.result.some((e: { payload: { userId: string } }) => e.payload.userId === userId));
  });

  test('PUT: bad bodies are 400 naming the field, and nothing changes', async () => {
    const path = `${ORG_MEMBERS}/${managerId}`;
    const call = (body: unknown) => api('PUT', path, { token: ownerToken, body });
    assertInvalid(await call({}), ['roles'], { what: 'missing' });
    assertInvalid(await call({ roles: [] }), ['roles'], { what: 'empty' });
    assertInvalid(await call({ roles: 'ORG_OWNER' }), ['roles'], { what: 'string' });
    const wrongKind = await call({ roles: ['IAM_OWNER'] });
    assertInvalid(wrongKind, ['roles[0]'], { what: 'instance role', atLeast: true });
    assert.equal(errorReason(wrongKind), undefined, 'named fields need no reason');
    assertInvalid(await call({ roles: ['ORG_OWNER'], userId: managerId }), ['userId'], { what: 'unknown field' });
    assertInvalid(await call({ roles: Array(21).fill('ORG_OWNER') }), ['roles'], { what: 'too many', atLeast: true });
    assert.deepEqual(await rolesOf(managerId), ['ORG_USER_MANAGER']);
  });

  test('unknown users, non-members and members of another org are 404; no token 401; no ORG_OWNER 403', async () => {
    const outsider = await newHuman('otto', 'Otto Outsider');
    // A member of the first org only.
    const elsewhere = await newHuman('erik', 'Erik Elsewhere', firstOrgId);
    await addOrgMember(elsewhere, ['ORG_USER_MANAGER'], firstOrgId);
    for (const userId of ['123456789', outsider, elsewhere]) {
      assertError(await api('PUT', `${ORG_MEMBERS}/${userId}`, { token: ownerToken, body: { roles: ['ORG_OWNER'] } }), 404);
      assertError(await api('DELETE', `${ORG_MEMBERS}/${userId}`, { token: ownerToken }), 404);
    }
    assertError(await api('PUT', `${ORG_MEMBERS}/${managerId}`, { token: null, body: { roles: ['ORG_OWNER'] } }), 401);
    assertError(await api('DELETE', `${ORG_MEMBERS}/${managerId}`, { token: null }), 401);
    const notOwner = await api('PUT', `${ORG_MEMBERS}/${managerId}`, { token: managerToken, body: { roles: ['ORG_OWNER'] } });
    assertError(notOwner, 403);
    assert.equal(errorReason(notOwner), 'PERMISSION_DENIED', 'lacking ORG_OWNER is no every-role refusal');
    assertError(await api('DELETE', `${ORG_MEMBERS}/${ownerId}`, { token: managerToken }), 403);
    assert.equal(errorReason(await api('DELETE', `${ORG_MEMBERS}/${outsider}`, { token: ownerToken })), 'NOT_FOUND');
    assert.deepEqual(await rolesOf(managerId), ['ORG_USER_MANAGER']);
    assert.deepEqual(await rolesOf(ownerId), ['ORG_OWNER']);
  });

  test('the last ORG_OWNER is neither demoted nor removed (400); with a second owner both work', async () => {
    const demote = await api('PUT', `${ORG_MEMBERS}/${ownerId}`, { token: ownerToken, body: { roles: ['ORG_USER_MANAGER'] } });
    assertInvalid(demote, []);
    assert.match(demote.json.message, /last ORG_OWNER/);
    assert.equal(errorReason(demote), 'LAST_OWNER');
    const remove = await api('DELETE', `${ORG_MEMBERS}/${ownerId}`, { orgId });
    assert.equal(remove.status, 400, remove.text);
    assert.match(remove.json.message, /last ORG_OWNER/);
    assert.equal(errorReason(remove), 'LAST_OWNER');
    assert.deepEqual(await rolesOf(ownerId), ['ORG_OWNER']);
    // Keeping ORG_OWNER among other roles is no demotion.
    assert.equal((await api('PUT', `${ORG_MEMBERS}/${ownerId}`, { token: ownerToken, body: { roles: ['ORG_OWNER', 'ORG_USER_MANAGER'] } })).status, 200);

    const second = await newHuman('sven', 'Sven Second');
    await addOrgMember(second, ['ORG_OWNER']);
    const removed = await api('DELETE', `${ORG_MEMBERS}/${second}`, { token: ownerToken });
    assert.equal(removed.status, 200, removed.text);
    assertDetails(removed.json.details, orgId);
    assert.equal(await rolesOf(second), undefined);
    await addOrgMember(second, ['ORG_OWNER']);
    assert.equal((await api('PUT', `${ORG_MEMBERS}/${ownerId}`, { body: { roles: ['ORG_USER_MANAGER'] }, orgId })).status, 200);
    assert.deepEqual(await rolesOf(ownerId), ['ORG_USER_MANAGER']);
    assert.equal((await api('PUT', `${ORG_MEMBERS}/${ownerId}`, { body: { roles: ['ORG_OWNER'] }, orgId })).status, 200);
  });

  test('an ORG_OWNER does not change or remove a member holding roles it lacks (an IAM_OWNER); nothing changes', async () => {
    const admin = await newHuman('ada', 'Ada Admin');
    assert.equal((await api('POST', INSTANCE_MEMBERS, { body: { userId: admin, roles: ['IAM_OWNER'] } })).status, 200);
    await addOrgMember(admin, ['ORG_USER_MANAGER']);
    for (const refused of [
      await api('PUT', `${ORG_MEMBERS}/${admin}`, { token: ownerToken, body: { roles: ['ORG_END_USER_IMPERSONATOR'] } }),
      await api('DELETE', `${ORG_MEMBERS}/${admin}`, { token: ownerToken }),
    ]) {
      assertError(refused, 403);
      assert.equal(errorReason(refused), 'MEMBER_ROLES_NOT_HELD');
    }
    assert.deepEqual(await rolesOf(admin), ['ORG_USER_MANAGER']);
    // An instance owner may.
    assert.equal((await api('DELETE', `${ORG_MEMBERS}/${admin}`, { orgId })).status, 200);
    assert.equal(await rolesOf(admin), undefined);
  });

  test('cross-org tokens: an owner of one org changes no member of another (header or not), nor a member who owns another org; nothing changes', async () => {
    // Erika owns the first org only; Olga owns Members Org only.
    const erika = await newHuman('erika', 'Erika Elsewhere', firstOrgId);
    await addOrgMember(erika, ['ORG_OWNER'], firstOrgId);
    const erikaToken = await insertPat(server, erika);
    const firstMember = await newHuman('felix', 'Felix First', firstOrgId);
    await addOrgMember(firstMember, ['ORG_USER_MANAGER'], firstOrgId);
    // Olga's token aimed at the first org, and Erika's at Members Org: not their org.
    for (const [token, inOrg, userId] of [
      [ownerToken, firstOrgId, firstMember],
      [erikaToken, orgId, managerId],
    ] as const) {
      const refused = await api('PUT', `${ORG_MEMBERS}/${userId}`, { token, orgId: inOrg, body: { roles: ['ORG_OWNER'] } });
      assertError(refused, 403);
      assert.equal(errorReason(refused), 'PERMISSION_DENIED', 'not an owner of that org at all');
      assertError(await api('DELETE', `${ORG_MEMBERS}/${userId}`, { token, orgId: inOrg }), 403);
    }
    // Without the header Erika acts in her own org, where Manfred is no member.
    assertError(await api('PUT', `${ORG_MEMBERS}/${managerId}`, { token: erikaToken, body: { roles: ['ORG_OWNER'] } }), 404);
    // Erika joins Members Org as a user manager: Olga owns that org but not Erika's own, so Erika is beyond her.
    await addOrgMember(erika, ['ORG_USER_MANAGER']);
    assertError(await api('PUT', `${ORG_MEMBERS}/${erika}`, { token: ownerToken, body: { roles: ['ORG_END_USER_IMPERSONATOR'] } }), 403);
    const beyond = await api('DELETE', `${ORG_MEMBERS}/${erika}`, { token: ownerToken });
    assertError(beyond, 403);
    assert.equal(errorReason(beyond), 'MEMBER_ROLES_NOT_HELD');
    assert.deepEqual(await rolesOf(erika), ['ORG_USER_MANAGER']);
    assert.deepEqual(await rolesOf(managerId), ['ORG_USER_MANAGER']);
    assert.deepEqual(await rolesOf(firstMember, firstOrgId), ['ORG_USER_MANAGER']);
    // An instance owner may.
    assert.equal((await api('DELETE', `${ORG_MEMBERS}/${erika}`, { orgId })).status, 200);
  });

  test('a removed member loses the org’s API at once', async () => {
    const leaver = await newHuman('lena', 'Lena Leaver');
    await addOrgMember(leaver, ['ORG_OWNER']);
    const token = await insertPat(server, leaver);
    assert.equal((await api('POST', `${ORG_MEMBERS}/_search`, { token, body: {} })).status, 200);
    assert.equal((await api('DELETE', `${ORG_MEMBERS}/${leaver}`, { token: ownerToken })).status, 200);
    assertError(await api('POST', `${ORG_MEMBERS}/_search`, { token, body: {} }), 403);
  });
});

describe('/admin/v1/members', () => {
  test('_search lists the instance members; PUT and DELETE change them; the last IAM_OWNER stays', async () => {
    const list = await api('POST', `${INSTANCE_MEMBERS}/_search`, { body: {} });
    assert.equal(list.status, 200, list.text);
    const owners = list.json.result.filter((m: { roles: string[] }) => m.roles.includes('IAM_OWNER'));
    assert.ok(owners.length >= 2, list.text);
    assert.ok(list.json.result.some((m: { userType: string }) => m.userType === 'TYPE_MACHINE'));

    const imp = await newHuman('ivan', 'Ivan Impersonator');
    assert.equal((await api('POST', INSTANCE_MEMBERS, { body: { userId: imp, roles: ['IAM_END_USER_IMPERSONATOR'] } })).status, 200);
    const changed = await api('PUT', `${INSTANCE_MEMBERS}/${imp}`, { body: { roles: ['IAM_OWNER'] } });
    assert.equal(changed.status, 200, changed.text);
    const removed = await api('DELETE', `${INSTANCE_MEMBERS}/${imp}`);
    assert.equal(removed.status, 200, removed.text);
    const after = await api('POST', `${INSTANCE_MEMBERS}/_search`, { body: { queries: [{ userNameQuery: { userName: 'ivan' } }] } });
    assert.equal(after.json.details.totalResult, '0');

    // Every IAM_OWNER but the caller loses the role; then the caller is the last one.
    // The caller is the first start's admin machine user.
    const machineOwner = owners.find((m: { userType: string }) => m.userType === 'TYPE_MACHINE').userId as string;
    const others = (await api('POST', `${INSTANCE_MEMBERS}/_search`, { body: {} })).json.result.filter(
      (m: { userId: string; roles: string[] }) => m.roles.includes('IAM_OWNER') && m.userId !== machineOwner,
    );
    for (const other of others)
      assert.equal((await api('PUT', `${INSTANCE_MEMBERS}/${other.userId}`, { body: { roles: ['IAM_END_USER_IMPERSONATOR'] } })).status, 200);
    const demote = await api('PUT', `${INSTANCE_MEMBERS}/${machineOwner}`, { body: { roles: ['IAM_END_USER_IMPERSONATOR'] } });
    assert.equal(demote.status, 400, demote.text);
    assert.match(demote.json.message, /last IAM_OWNER/);
    assert.equal(errorReason(demote), 'LAST_OWNER');
    const remove = await api('DELETE', `${INSTANCE_MEMBERS}/${machineOwner}`);
    assert.equal(remove.status, 400, remove.text);
    assert.equal(errorReason(remove), 'LAST_OWNER');
    assert.equal((await api('POST', `${INSTANCE_MEMBERS}/_search`, { body: {} })).status, 200, 'still an instance owner');
  });

  test('bad bodies 400; unknown or non-member 404; no token 401; no IAM_OWNER 403', async () => {
    const someone = await newHuman('nina', 'Nina Nobody');
    assertInvalid(await api('PUT', `${INSTANCE_MEMBERS}/${someone}`, { body: { roles: ['ORG_OWNER'] } }), ['roles[0]'], { atLeast: true });
    assertInvalid(await api('PUT', `${INSTANCE_MEMBERS}/${someone}`, { body: { roles: ['IAM_OWNER'], extra: 1 } }), ['extra']);
    assertInvalid(await api('POST', `${INSTANCE_MEMBERS}/_search`, { body: { queries: [{}] } }), ['queries[0]'], { atLeast: true });
    for (const userId of ['123456789', someone]) {
      assertError(await api('PUT', `${INSTANCE_MEMBERS}/${userId}`, { body: { roles: ['IAM_OWNER'] } }), 404);
      assertError(await api('DELETE', `${INSTANCE_MEMBERS}/${userId}`), 404);
    }
    for (const [token, status] of [
      [null, 401],
      [ownerToken, 403],
    ] as const) {
      assertError(await api('POST', `${INSTANCE_MEMBERS}/_search`, { token, body: {} }), status);
      assertError(await api('PUT', `${INSTANCE_MEMBERS}/${someone}`, { token, body: { roles: ['IAM_OWNER'] } }), status);
      assertError(await api('DELETE', `${INSTANCE_MEMBERS}/${someone}`, { token }), status);
    }
    const owners = (await api('POST', `${INSTANCE_MEMBERS}/_search`, { body: {} })).json.result.filter((m: { roles: string[] }) =>
      m.roles.includes('IAM_OWNER'),
    );
    assert.equal(owners.length, 1, 'nothing changed by a refused call');
  });
});
