import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';
import { newId } from '../../src/domain/ids.ts';
import { rolesOfUser } from '../../src/storage/grants.ts';
import { isFeatureEnabled } from '../../src/queries/features.ts';

// docs/api/users.md and docs/api/features.md: user grants (project roles),
// org and instance members, and the instance feature flags, with their
// permissions and validation.

let server: TestServer;
let instanceId: string;
let defaultOrgId: string;
let defaultDomain: string;
let otherOrgId: string;
let otherDomain: string;
let otherOwnerHumanId: string;
/** PAT of a machine user without any role. */
let nobodyPat: string;
/** PAT of a machine user holding ORG_OWNER of the other org only. */
let otherOwnerPat: string;

async function addMachine(userName: string, orgId?: string): Promise<string> {
  const res = await server.api('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId });
  assert.equal(res.status, 200, res.text);
  return res.body.userId;
}

async function addPat(userId: string, orgId?: string): Promise<string> {
  const res = await server.api('POST', `/management/v1/users/${userId}/pats`, { orgId });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

/** Projects are another team's API; the grant tests put theirs straight into the tables. */
async function insertProject(orgId: string, roleKeys: string[]): Promise<string> {
  const id = newId();
  await server.running.db.query('INSERT INTO projects (id, org_id, name, sequence, creation_date, change_date) VALUES ($1, $2, $3, 0, now(), now())', [
    id,
    orgId,
    `project ${id}`,
  ]);
  for (const key of roleKeys) await server.running.db.query('INSERT INTO project_roles (project_id, role_key, display_name) VALUES ($1, $2, $2)', [id, key]);
  return id;
}

before(async () => {
  server = await testServer({ captureLog: true });
  const { rows } = await server.running.db.query<{ id: string; default_org_id: string; domain: string }>(
    'SELECT i.id, i.default_org_id, d.domain FROM instance i JOIN org_domains d ON d.org_id = i.default_org_id AND d.is_primary',
  );
  ({ id: instanceId, default_org_id: defaultOrgId, domain: defaultDomain } = rows[0]!);
  const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
    body: {
      org: { name: 'Other Org', domain: 'other.example.test' },
      human: { userName: 'owner', profile: { firstName: 'O', lastName: 'Wner' }, email: { email: 'owner@other.example.test' } },
    },
  });
  assert.equal(setup.status, 200, setup.text);
  ({ orgId: otherOrgId, userId: otherOwnerHumanId } = setup.body);
  otherDomain = 'other.example.test';
  nobodyPat = await addPat(await addMachine('nobody'));
  const otherOwnerId = await addMachine('other-owner', otherOrgId);
  const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: otherOwnerId, roles: ['ORG_OWNER'] }, orgId: otherOrgId });
  assert.equal(member.status, 200, member.text);
  otherOwnerPat = await addPat(otherOwnerId, otherOrgId);
});

after(async () => {
  await server?.stop();
});

describe('user grants: POST, GET /management/v1/users/{userId}/grants', () => {
  let userId: string;
  let projectId: string;

  before(async () => {
    userId = await addMachine('granted');
    projectId = await insertProject(defaultOrgId, ['reader', 'writer', 'admin']);
  });

  it('grants roles of a project of the acting org and lists the grant', async () => {
    const res = await server.api('POST', `/management/v1/users/${userId}/grants`, { body: { projectId, roleKeys: ['reader', 'writer'] } });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.userGrantId, /^\d+$/);
    assertDetails(res.body.details, defaultOrgId);
    const listed = await server.api('GET', `/management/v1/users/${userId}/grants`);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.result.length, 1);
    const [grant] = listed.body.result;
    assert.deepEqual(
      { id: grant.id, projectId: grant.projectId, roleKeys: grant.roleKeys },
      { id: res.body.userGrantId, projectId, roleKeys: ['reader', 'writer'] },
    );
    assert.deepEqual(grant.details, res.body.details);
  });

  it('rolesOfUser gives each role with the granting org and its primary domain, optionally per project', async () => {
    assert.deepEqual(await rolesOfUser(server.running.db, userId), [
      { projectId, roleKey: 'reader', orgId: defaultOrgId, orgPrimaryDomain: defaultDomain },
      { projectId, roleKey: 'writer', orgId: defaultOrgId, orgPrimaryDomain: defaultDomain },
    ]);
    assert.equal((await rolesOfUser(server.running.db, userId, [projectId])).length, 2);
    assert.deepEqual(await rolesOfUser(server.running.db, userId, ['another-project']), []);
    assert.deepEqual(await rolesOfUser(server.running.db, userId, []), []);
  });

  it('rolesOfUser leaves out a role the project no longer defines', async () => {
    const project = await insertProject(defaultOrgId, ['temp', 'kept']);
    const user = await addMachine('temporary-roles');
    assert.equal((await server.api('POST', `/management/v1/users/${user}/grants`, { body: { projectId: project, roleKeys: ['temp', 'kept'] } })).status, 200);
    await server.running.db.query("DELETE FROM project_roles WHERE project_id = $1 AND role_key = 'temp'", [project]);
    assert.deepEqual(
      (await rolesOfUser(server.running.db, user)).map((r) => r.roleKey),
      ['kept'],
    );
  });

  it('allows a grant with no role keys', async () => {
    const other = await addMachine('no-roles');
    const res = await server.api('POST', `/management/v1/users/${other}/grants`, { body: { projectId, roleKeys: [] } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await rolesOfUser(server.running.db, other), []);
  });

  it('names every role key the project does not define (400)', async () => {
    const other = await addMachine('unknown-roles');
    assertInvalid(
      await server.api('POST', `/management/v1/users/${other}/grants`, { body: { projectId, roleKeys: ['reader', 'owner', 'writer', 'root'] } }),
      ['roleKeys[1]', 'roleKeys[3]'],
      { atLeast: true },
    );
    assert.equal((await server.api('GET', `/management/v1/users/${other}/grants`)).body.result.length, 0);
  });

  it('checks the body: projectId and roleKeys required, keys 1..200 characters, no unknown fields', async () => {
    const post = (body: unknown) => server.api('POST', `/management/v1/users/${userId}/grants`, { body });
    assertInvalid(await post({}), ['projectId', 'roleKeys'], { atLeast: true });
    assertInvalid(await post({ projectId: '', roleKeys: [] }), ['projectId'], { atLeast: true });
    assertInvalid(await post({ projectId, roleKeys: 'reader' }), ['roleKeys'], { atLeast: true });
    assertInvalid(await post({ projectId, roleKeys: [''] }), ['roleKeys[0]'], { atLeast: true });
    assertInvalid(await post({ projectId, roleKeys: ['r'.repeat(201)] }), ['roleKeys[0]'], { atLeast: true });
    assertInvalid(await post({ projectId, roleKeys: [], orgId: defaultOrgId }), ['orgId'], { atLeast: true });
  });

  it('allows one grant per user and project (409)', async () => {
    assertError(await server.api('POST', `/management/v1/users/${userId}/grants`, { body: { projectId, roleKeys: ['admin'] } }), 409);
  });

  it('answers 404 for an unknown project, a project of another org, an unknown user and a user of another org', async () => {
    const foreignProject = await insertProject(otherOrgId, ['reader']);
    assertError(await server.api('POST', `/management/v1/users/${userId}/grants`, { body: { projectId: '4711', roleKeys: [] } }), 404);
    assertError(await server.api('POST', `/management/v1/users/${userId}/grants`, { body: { projectId: foreignProject, roleKeys: ['reader'] } }), 404);
    assertError(await server.api('POST', '/management/v1/users/4711/grants', { body: { projectId, roleKeys: [] } }), 404);
    assertError(await server.api('POST', `/management/v1/users/${otherOwnerHumanId}/grants`, { body: { projectId, roleKeys: [] } }), 404);
    assertError(await server.api('GET', `/management/v1/users/${otherOwnerHumanId}/grants`), 404);
    assertError(await server.api('GET', `/management/v1/users/${userId}/grants`, { orgId: 'not-an-org' }), 404);
  });

  it('grants in another org through x-service-orgid, with that org as owner', async () => {
    const foreignProject = await insertProject(otherOrgId, ['reader']);
    const res = await server.api('POST', `/management/v1/users/${otherOwnerHumanId}/grants`, {
      body: { projectId: foreignProject, roleKeys: ['reader'] },
      orgId: otherOrgId,
    });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, otherOrgId);
    assert.deepEqual(await rolesOfUser(server.running.db, otherOwnerHumanId), [
      { projectId: foreignProject, roleKey: 'reader', orgId: otherOrgId, orgPrimaryDomain: otherDomain },
    ]);
  });

  it('needs a token (401) and ORG_OWNER or ORG_USER_MANAGER of the acting org (403)', async () => {
    const body = { projectId, roleKeys: [] };
    assertError(await server.api('POST', `/management/v1/users/${userId}/grants`, { body, token: null }), 401);
    assertError(await server.api('POST', `/management/v1/users/${userId}/grants`, { body, token: nobodyPat }), 403);
    assertError(await server.api('GET', `/management/v1/users/${userId}/grants`, { token: nobodyPat }), 403);
    assertError(await server.api('POST', `/management/v1/users/${userId}/grants`, { body, token: otherOwnerPat, orgId: defaultOrgId }), 403);
  });
});

describe('POST /management/v1/orgs/me/members', () => {
  it('makes a user an ORG_USER_MANAGER, who may then manage users but not members', async () => {
    const managerId = await addMachine('manager');
    const res = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: managerId, roles: ['ORG_USER_MANAGER'] } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, defaultOrgId);
    const pat = await addPat(managerId);
    assert.equal((await server.api('POST', '/management/v1/users/machine', { body: { userName: 'by-manager', name: 'm' }, token: pat })).status, 200);
    const nobodyId = await addMachine('still-nobody');
    assertError(await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: nobodyId, roles: ['ORG_OWNER'] }, token: pat }), 403);
    const { rows } = await server.running.db.query<{ roles: string[] }>("SELECT roles FROM memberships WHERE user_id = $1 AND scope = 'org'", [managerId]);
    assert.deepEqual(rows[0]!.roles, ['ORG_USER_MANAGER']);
  });

  it('lets an ORG_OWNER add members of its own org only', async () => {
    const mine = await addMachine('owners-pick', otherOrgId);
    assert.equal(
      (await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: mine, roles: ['ORG_END_USER_IMPERSONATOR'] }, token: otherOwnerPat }))
        .status,
      200,
    );
    const theirs = await addMachine('not-yours');
    assertError(
      await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: theirs, roles: ['ORG_OWNER'] }, token: otherOwnerPat, orgId: defaultOrgId }),
      403,
    );
  });

  it('needs at least one org role and names every unknown one (400)', async () => {
    const userId = await addMachine('role-check');
    const post = (body: unknown) => server.api('POST', '/management/v1/orgs/me/members', { body });
    assertInvalid(await post({ userId, roles: [] }), ['roles'], { atLeast: true });
    assertInvalid(await post({ userId, roles: ['ORG_OWNER', 'IAM_OWNER', 'ORG_ROOT'] }), ['roles[1]', 'roles[2]'], { atLeast: true });
    assertInvalid(await post({ userId }), ['roles'], { atLeast: true });
    assertInvalid(await post({ roles: ['ORG_OWNER'] }), ['userId'], { atLeast: true });
    assertInvalid(await post({ userId, roles: ['ORG_OWNER'], scope: 'org' }), ['scope'], { atLeast: true });
  });

  it('answers 404 for an unknown user or org, 409 for an existing member, 401 without a token', async () => {
    assertError(await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: '4711', roles: ['ORG_OWNER'] } }), 404);
    const userId = await addMachine('member-twice');
    assertError(await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles: ['ORG_OWNER'] }, orgId: '4711' }), 404);
    assert.equal((await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles: ['ORG_OWNER'] } })).status, 200);
    assertError(await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles: ['ORG_USER_MANAGER'] } }), 409);
    assertError(await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles: ['ORG_OWNER'] }, token: null }), 401);
    assertError(await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles: ['ORG_OWNER'] }, token: nobodyPat }), 403);
  });
});

describe('POST /admin/v1/members', () => {
  it('gives a user an instance role', async () => {
    const userId = await addMachine('impersonator');
    const res = await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_END_USER_IMPERSONATOR'] } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, instanceId);
    const { rows } = await server.running.db.query<{ scope_id: string; roles: string[] }>(
      "SELECT scope_id, roles FROM memberships WHERE user_id = $1 AND scope = 'instance'",
      [userId],
    );
    assert.deepEqual(rows, [{ scope_id: instanceId, roles: ['IAM_END_USER_IMPERSONATOR'] }]);
    assertError(await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER'] } }), 409);
  });

  it('a new IAM_OWNER may do everything, in every org', async () => {
    const userId = await addMachine('second-admin');
    assert.equal((await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER'] } })).status, 200);
    const pat = await addPat(userId);
    assert.equal((await server.api('GET', '/v2/features/instance', { token: pat })).status, 200);
    assert.equal(
      (await server.api('POST', '/management/v1/users/machine', { body: { userName: 'by-admin', name: 'a' }, token: pat, orgId: otherOrgId })).status,
      200,
    );
  });

  it('accepts instance roles only and names the others (400)', async () => {
    const userId = await addMachine('instance-role-check');
    assertInvalid(await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['ORG_OWNER'] } }), ['roles[0]'], { atLeast: true });
    assertInvalid(await server.api('POST', '/admin/v1/members', { body: { userId, roles: [] } }), ['roles'], { atLeast: true });
    assertInvalid(await server.api('POST', '/admin/v1/members', { body: { userId: 'u'.repeat(65), roles: ['IAM_OWNER'] } }), ['userId'], { atLeast: true });
  });

  it('needs IAM_OWNER (403 even for an ORG_OWNER), a token (401) and a known user (404)', async () => {
    const userId = await addMachine('hopeful');
    assertError(await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER'] }, token: otherOwnerPat }), 403);
    assertError(await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER'] }, token: nobodyPat }), 403);
    assertError(await server.api('POST', '/admin/v1/members', { body: { userId, roles: ['IAM_OWNER'] }, token: null }), 401);
    assertError(await server.api('POST', '/admin/v1/members', { body: { userId: '4711', roles: ['IAM_OWNER'] } }), 404);
  });
});

describe('GET, PUT /v2/features/instance', () => {
  it('reports oidcTokenExchange off until it is set', async () => {
    const res = await server.api('GET', '/v2/features/instance');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.oidcTokenExchange, { enabled: false });
    assertDetails(res.body.details, instanceId);
    assert.equal(await isFeatureEnabled(server.running.db, 'oidcTokenExchange'), false);
  });

  it('turns oidcTokenExchange on and off, each change an instance.feature.set event', async () => {
    const on = await server.api('PUT', '/v2/features/instance', { body: { oidcTokenExchange: true } });
    assert.equal(on.status, 200, on.text);
    assertDetails(on.body.details, instanceId);
    const read = await server.api('GET', '/v2/features/instance');
    assert.deepEqual(read.body.oidcTokenExchange, { enabled: true });
    assert.equal(read.body.details.sequence, on.body.details.sequence);
    assert.equal(await isFeatureEnabled(server.running.db, 'oidcTokenExchange'), true);

    const off = await server.api('PUT', '/v2/features/instance', { body: { oidcTokenExchange: false } });
    assert.equal(off.status, 200, off.text);
    assert.ok(BigInt(off.body.details.sequence) > BigInt(on.body.details.sequence));
    assert.deepEqual((await server.api('GET', '/v2/features/instance')).body.oidcTokenExchange, { enabled: false });
    assert.equal(await isFeatureEnabled(server.running.db, 'oidcTokenExchange'), false);

    const { rows } = await server.running.db.query<{ payload: unknown }>(
      "SELECT payload FROM events WHERE event_type = 'instance.feature.set' ORDER BY position",
    );
    assert.deepEqual(
      rows.map((r) => r.payload),
      [
        { feature: 'oidcTokenExchange', enabled: true },
        { feature: 'oidcTokenExchange', enabled: false },
      ],
    );
  });

  it('refuses unknown features, non-boolean values and an empty change (400)', async () => {
    assertInvalid(await server.api('PUT', '/v2/features/instance', { body: { loginV2: true } }), ['loginV2'], { atLeast: true });
    assertInvalid(await server.api('PUT', '/v2/features/instance', { body: { oidcTokenExchange: 'yes' } }), ['oidcTokenExchange'], { atLeast: true });
    assertInvalid(await server.api('PUT', '/v2/features/instance', { body: {} }), [], { atLeast: true });
    assertInvalid(await server.api('PUT', '/v2/features/instance', { raw: '[true]' }), [], { atLeast: true });
  });

  it('needs IAM_OWNER (403, also for an ORG_OWNER) and a token (401)', async () => {
    assertError(await server.api('GET', '/v2/features/instance', { token: otherOwnerPat }), 403);
    assertError(await server.api('PUT', '/v2/features/instance', { body: { oidcTokenExchange: true }, token: otherOwnerPat }), 403);
    assertError(await server.api('PUT', '/v2/features/instance', { body: { oidcTokenExchange: true }, token: nobodyPat }), 403);
    assertError(await server.api('GET', '/v2/features/instance', { token: null }), 401);
    assert.equal(await isFeatureEnabled(server.running.db, 'oidcTokenExchange'), false);
  });
});
