import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { apiClient, type Api } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { insertPat, testServer, type TestServer } from '../support/server.ts';

// docs/api/projects-apps.md: renaming and removing projects, changing,
// removing and searching their roles, and a new client secret for an app;
// project names are unique within an org.

let server: TestServer;
let api: Api;
let firstOrgId: string;
let otherOrgId: string;
let managerToken: string;

const PROJECTS = '/management/v1/projects';
const CB = 'https://app.example.com/cb';
const REFRESHABLE = { redirectUris: [CB], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] };
const insecure = { execute: [client.allowInsecureRequests] };

before(async () => {
  server = await testServer();
  api = apiClient(server.url, server.pat);
  const setup = await api('POST', '/admin/v1/orgs/_setup', {
    body: {
      org: { name: 'Other Org' },
      human: {
        userName: 'mona',
        profile: { firstName: 'Mona', lastName: 'Manager' },
        email: { email: 'mona@other.example.com', isEmailVerified: true },
        password: 'S3cure-Passw0rd!',
      },
      roles: ['ORG_USER_MANAGER'],
    },
  });
  assert.equal(setup.status, 200, setup.text);
  otherOrgId = setup.json.orgId;
  managerToken = await insertPat(server, setup.json.userId);
  const probe = await api('POST', PROJECTS, { body: { name: 'Probe' } });
  assert.equal(probe.status, 200, probe.text);
  firstOrgId = probe.json.details.resourceOwner;
});
after(async () => {
  await server?.stop();
});

async function newProject(name: string, orgId?: string): Promise<string> {
  const res = await api('POST', PROJECTS, { body: { name }, ...(orgId ? { orgId } : {}) });
  assert.equal(res.status, 200, res.text);
  return res.json.id;
}

async function projectOf(id: string, orgId?: string) {
  const res = await api('GET', `${PROJECTS}/${id}`, orgId ? { orgId } : {});
  return res.status === 200 ? res.json.project : undefined;
}

async function newUser(userName: string): Promise<string> {
  const res = await api('POST', '/management/v1/users/human', {
    body: { userName, profile: { firstName: 'G', lastName: 'Rantee' }, email: { email: `${userName}@example.com` }, password: 'S3cure-Passw0rd!' },
  });
  assert.equal(res.status, 200, res.text);
  return res.json.userId;
}

async function grantsOf(userId: string): Promise<Array<{ projectId: string; roleKeys: string[] }>> {
  const res = await api('GET', `/management/v1/users/${userId}/grants`);
  assert.equal(res.status, 200, res.text);
  return res.json.result;
}

async function eventTypes(aggregateId: string): Promise<string[]> {
  const res = await api('POST', '/admin/v1/events/_search', { body: { queries: [{ aggregateIdQuery: { id: aggregateId } }] } });
  assert.equal(res.status, 200, res.text);
  return res.json.result.map((e: { type: string }) => e.type);
}

describe('project names are unique within an org', () => {
  test('a second project of the same name is 409 and not stored; another org may use the name', async () => {
    await newProject('Shop');
    const again = await api('POST', PROJECTS, { body: { name: 'Shop' } });
    assertError(again, 409);
    const found = await api('POST', `${PROJECTS}/_search`, { body: { queries: [{ nameQuery: { name: 'Shop' } }] } });
    assert.equal(found.json.details.totalResult, '1');
    await newProject('Shop', otherOrgId);
  });

  test('the names differ by case: "shop" is another name', async () => {
    await newProject('shop');
  });
});

describe('PUT /management/v1/projects/{id}', () => {
  test('renames the project, with an event and details', async () => {
    const id = await newProject('Before');
    const res = await api('PUT', `${PROJECTS}/${id}`, { body: { name: 'After' } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, firstOrgId);
    assert.equal((await projectOf(id)).name, 'After');
    assert.ok((await eventTypes(id)).includes('project.changed'));
    // The same name again is no conflict with itself.
    assert.equal((await api('PUT', `${PROJECTS}/${id}`, { body: { name: 'After' } })).status, 200);
  });

  test('a name another project of the org has is 409, and nothing changes', async () => {
    const id = await newProject('Rename me');
    await newProject('Taken');
    assertError(await api('PUT', `${PROJECTS}/${id}`, { body: { name: 'Taken' } }), 409);
    assert.equal((await projectOf(id)).name, 'Rename me');
  });

  test('bad bodies are 400 naming the field, and nothing changes', async () => {
    const id = await newProject('Validated');
    const path = `${PROJECTS}/${id}`;
    assertInvalid(await api('PUT', path, { body: {} }), ['name'], { what: 'missing' });
    assertInvalid(await api('PUT', path, { body: { name: '' } }), ['name'], { what: 'empty' });
    assertInvalid(await api('PUT', path, { body: { name: 'n'.repeat(201) } }), ['name'], { what: 'over-long' });
    assertInvalid(await api('PUT', path, { body: { name: 7 } }), ['name'], { what: 'number' });
    assertInvalid(await api('PUT', path, { body: { name: 'X', colour: 'red' } }), ['colour'], { what: 'unknown field' });
    assert.equal((await api('PUT', path, { raw: '{"name":' })).status, 400);
    assert.equal((await projectOf(id)).name, 'Validated');
  });

  test('unknown id and another org’s project are 404; no token 401; no ORG_OWNER 403', async () => {
    const foreign = await newProject('Foreign', otherOrgId);
    assertError(await api('PUT', `${PROJECTS}/123456789`, { body: { name: 'X' } }), 404);
    assertError(await api('PUT', `${PROJECTS}/${foreign}`, { body: { name: 'X' } }), 404);
    assertError(await api('PUT', `${PROJECTS}/${foreign}`, { body: { name: 'X' }, token: null }), 401);
    assertError(await api('PUT', `${PROJECTS}/${foreign}`, { body: { name: 'X' }, token: managerToken }), 403);
    assert.equal((await projectOf(foreign, otherOrgId)).name, 'Foreign');
  });
});

describe('DELETE /management/v1/projects/{id}', () => {
  test('removes the project with its roles, grants and apps; the app’s client ends', async () => {
    const id = await newProject('Doomed');
    assert.equal((await api('POST', `${PROJECTS}/${id}/roles`, { body: { roleKey: 'reader' } })).status, 200);
    const userId = await newUser('doomed-grantee');
    const grant = await api('POST', `/management/v1/users/${userId}/grants`, { body: { projectId: id, roleKeys: ['reader'] } });
    assert.equal(grant.status, 200, grant.text);
    const app = await api('POST', `${PROJECTS}/${id}/apps/oidc`, { body: { name: 'Doomed app', ...REFRESHABLE } });
    assert.equal(app.status, 200, app.text);
    const config = await client.discovery(new URL(server.issuer), app.json.clientId, app.json.clientSecret, undefined, insecure);
    assert.equal(await clientCheck(config), 'invalid_grant', 'the client is known before');

    const res = await api('DELETE', `${PROJECTS}/${id}`);
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, firstOrgId);
    assertError(await api('GET', `${PROJECTS}/${id}`), 404);
    assertError(await api('GET', `${PROJECTS}/${id}/apps/${app.json.appId}`), 404);
    assert.deepEqual(await grantsOf(userId), []);
    assert.equal(await clientCheck(config), 'invalid_client', 'the client is gone');
    const types = await eventTypes(id);
    assert.ok(types.includes('project.application.removed') && types.includes('project.removed'), types.join());
    assert.ok((await eventTypes(grant.json.userGrantId)).includes('user.grant.cascade.removed'));
    // The name is free again.
    await newProject('Doomed');
  });

  test('unknown id and another org’s project are 404; no token 401; no ORG_OWNER 403; nothing removed', async () => {
    const foreign = await newProject('Kept', otherOrgId);
    assertError(await api('DELETE', `${PROJECTS}/123456789`), 404);
    assertError(await api('DELETE', `${PROJECTS}/${foreign}`), 404);
    assertError(await api('DELETE', `${PROJECTS}/${foreign}`, { token: null }), 401);
    assertError(await api('DELETE', `${PROJECTS}/${foreign}`, { token: managerToken }), 403);
    assertError(await api('DELETE', `${PROJECTS}/${foreign}`, { token: managerToken, orgId: otherOrgId }), 403);
    assert.equal((await projectOf(foreign, otherOrgId)).name, 'Kept');
  });
});

describe('projects holding an app with iamApiAccess', () => {
  test('only an instance owner removes the project or regenerates the app’s secret (403 for an ORG_OWNER); nothing changes', async () => {
    const ownerId = await newUser('first-org-owner');
    assert.equal((await api('POST', '/management/v1/orgs/me/members', { body: { userId: ownerId, roles: ['ORG_OWNER'] } })).status, 200);
    const ownerToken = await insertPat(server, ownerId);
    const id = await newProject('Console-like');
    const app = await api('POST', `${PROJECTS}/${id}/apps/oidc`, { body: { name: 'API app', ...REFRESHABLE, iamApiAccess: true } });
    assert.equal(app.status, 200, app.text);
    assertError(await api('DELETE', `${PROJECTS}/${id}`, { token: ownerToken }), 403);
    assertError(await api('POST', `${PROJECTS}/${id}/apps/${app.json.appId}/_regenerate_secret`, { token: ownerToken, body: {} }), 403);
    assert.equal((await projectOf(id)).name, 'Console-like');
    const config = await client.discovery(new URL(server.issuer), app.json.clientId, app.json.clientSecret, undefined, insecure);
    assert.equal(await clientCheck(config), 'invalid_grant', 'the secret still works');
    // The same owner removes a project without such an app.
    const plain = await newProject('Plain');
    assert.equal((await api('DELETE', `${PROJECTS}/${plain}`, { token: ownerToken })).status, 200);
  });
});

/** A refresh with a bogus token: a client that authenticates gets invalid_grant, one that does not invalid_client. */
async function clientCheck(config: client.Configuration): Promise<string | undefined> {
  try {
    await client.refreshTokenGrant(config, 'bogus-refresh-token');
  } catch (err) {
    const e = err as { error?: string; cause?: Array<{ parameters?: { error?: string } }> };
    return e.error ?? (Array.isArray(e.cause) ? e.cause[0]?.parameters?.error : undefined);
  }
  assert.fail('a bogus refresh token was accepted');
}

describe('project roles', () => {
  let projectId: string;
  let userId: string;

  before(async () => {
    projectId = await newProject('Roles');
    for (const [roleKey, displayName] of [
      ['admin', 'Administrator'],
      ['reader', 'Reader'],
      ['writer', 'Writer'],
    ])
      assert.equal((await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey, displayName } })).status, 200);
    userId = await newUser('role-grantee');
    const grant = await api('POST', `/management/v1/users/${userId}/grants`, { body: { projectId, roleKeys: ['reader', 'writer'] } });
    assert.equal(grant.status, 200, grant.text);
  });

  const rolesPath = (key = '') => `${PROJECTS}/${projectId}/roles${key ? `/${key}` : ''}`;

  test('PUT …/roles/{roleKey} changes the display name', async () => {
    const res = await api('PUT', rolesPath('admin'), { body: { displayName: 'Boss' } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, firstOrgId);
    const roles = (await projectOf(projectId)).roles;
    assert.deepEqual(
      roles.find((r: { roleKey: string }) => r.roleKey === 'admin'),
      { roleKey: 'admin', displayName: 'Boss' },
    );
    assert.ok((await eventTypes(projectId)).includes('project.role.changed'));
  });

  test('PUT …/roles/{roleKey}: bad bodies 400, unknown role 404, nothing changes', async () => {
    assertInvalid(await api('PUT', rolesPath('admin'), { body: {} }), ['displayName'], { what: 'missing' });
    assertInvalid(await api('PUT', rolesPath('admin'), { body: { displayName: '' } }), ['displayName'], { what: 'empty' });
    assertInvalid(await api('PUT', rolesPath('admin'), { body: { displayName: 'd'.repeat(201) } }), ['displayName'], { what: 'over-long' });
    assertInvalid(await api('PUT', rolesPath('admin'), { body: { displayName: true } }), ['displayName'], { what: 'boolean' });
    assertInvalid(await api('PUT', rolesPath('admin'), { body: { displayName: 'X', roleKey: 'other' } }), ['roleKey'], { what: 'unknown field' });
    assertError(await api('PUT', rolesPath('nobody'), { body: { displayName: 'X' } }), 404);
    assertError(await api('PUT', `${PROJECTS}/123456789/roles/admin`, { body: { displayName: 'X' } }), 404);
    const admin = (await projectOf(projectId)).roles.find((r: { roleKey: string }) => r.roleKey === 'admin');
    assert.equal(admin.displayName, 'Boss');
  });

  test('DELETE …/roles/{roleKey} removes the role and takes it out of user grants', async () => {
    const res = await api('DELETE', rolesPath('writer'));
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, firstOrgId);
    assert.deepEqual(
      (await projectOf(projectId)).roles.map((r: { roleKey: string }) => r.roleKey),
      ['admin', 'reader'],
    );
    assert.deepEqual(
      (await grantsOf(userId)).map((g) => g.roleKeys),
      [['reader']],
    );
    assertError(await api('DELETE', rolesPath('writer')), 404);
    // The key may be added again.
    assert.equal((await api('POST', rolesPath(), { body: { roleKey: 'writer' } })).status, 200);
  });

  test('POST …/roles/_search lists the roles by key, with filters and a page', async () => {
    const all = await api('POST', rolesPath('_search'), { body: {} });
    assert.equal(all.status, 200, all.text);
    assert.equal(all.json.details.totalResult, '3');
    assert.deepEqual(
      all.json.result.map((r: { key: string }) => r.key),
      ['admin', 'reader', 'writer'],
    );
    assert.deepEqual(all.json.result[0], { key: 'admin', displayName: 'Boss' });
    const noBody = await api('POST', rolesPath('_search'));
    assert.equal(noBody.status, 200, noBody.text);
    const byName = await api('POST', rolesPath('_search'), {
      body: { queries: [{ displayNameQuery: { displayName: 'read', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }] },
    });
    assert.deepEqual(
      byName.json.result.map((r: { key: string }) => r.key),
      ['reader'],
    );
    const paged = await api('POST', rolesPath('_search'), { body: { query: { offset: 1, limit: 1, asc: false } } });
    assert.equal(paged.json.details.totalResult, '3');
    assert.deepEqual(
      paged.json.result.map((r: { key: string }) => r.key),
      ['reader'],
    );
    const byKey = await api('POST', rolesPath('_search'), { body: { queries: [{ keyQuery: { key: 'writer' } }] } });
    assert.deepEqual(
      byKey.json.result.map((r: { key: string }) => r.key),
      ['writer'],
    );
  });

  test('POST …/roles/_search: bad bodies are 400 naming the field', async () => {
    assertInvalid(await api('POST', rolesPath('_search'), { body: { queries: [{ nameQuery: { name: 'x' } }] } }), ['queries[0].nameQuery'], { atLeast: true });
    assertInvalid(await api('POST', rolesPath('_search'), { body: { query: { limit: 100000 } } }), ['query.limit'], { atLeast: true });
    assertInvalid(await api('POST', rolesPath('_search'), { body: { queries: [{ keyQuery: { key: 'k'.repeat(201) } }] } }), ['queries[0].keyQuery.key'], {
      atLeast: true,
    });
    assertInvalid(await api('POST', rolesPath('_search'), { body: { sort: 'key' } }), ['sort']);
  });

  test('roles of another org’s project are 404; no token 401; no ORG_OWNER 403; nothing changed', async () => {
    const foreign = await newProject('Foreign roles', otherOrgId);
    assert.equal((await api('POST', `${PROJECTS}/${foreign}/roles`, { body: { roleKey: 'r', displayName: 'R' }, orgId: otherOrgId })).status, 200);
    const path = `${PROJECTS}/${foreign}/roles`;
    assertError(await api('PUT', `${path}/r`, { body: { displayName: 'X' } }), 404);
    assertError(await api('DELETE', `${path}/r`), 404);
    assertError(await api('POST', `${path}/_search`, { body: {} }), 404);
    for (const token of [null, managerToken]) {
      const status = token === null ? 401 : 403;
      assertError(await api('PUT', `${path}/r`, { body: { displayName: 'X' }, token, orgId: otherOrgId }), status);
      assertError(await api('DELETE', `${path}/r`, { token, orgId: otherOrgId }), status);
      assertError(await api('POST', `${path}/_search`, { body: {}, token, orgId: otherOrgId }), status);
    }
    assert.deepEqual((await projectOf(foreign, otherOrgId)).roles, [{ roleKey: 'r', displayName: 'R' }]);
  });
});

describe('POST …/apps/{appId}/_regenerate_secret', () => {
  let projectId: string;
  before(async () => {
    projectId = await newProject('Secret rotation');
  });
  const regenerate = (appId: string, options = {}) => api('POST', `${PROJECTS}/${projectId}/apps/${appId}/_regenerate_secret`, { body: {}, ...options });

  for (const authMethodType of ['OIDC_AUTH_METHOD_TYPE_BASIC', 'OIDC_AUTH_METHOD_TYPE_POST']) {
    test(`${authMethodType}: a new secret, shown once; the old one stops working at once`, async () => {
      const app = await api('POST', `${PROJECTS}/${projectId}/apps/oidc`, { body: { name: `Rotating ${authMethodType}`, ...REFRESHABLE, authMethodType } });
      assert.equal(app.status, 200, app.text);
      const method = authMethodType === 'OIDC_AUTH_METHOD_TYPE_POST' ? client.ClientSecretPost() : undefined;
      const old = await client.discovery(new URL(server.issuer), app.json.clientId, app.json.clientSecret, method, insecure);
      assert.equal(await clientCheck(old), 'invalid_grant');

      const res = await regenerate(app.json.appId);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.clientId, app.json.clientId);
      assert.match(res.json.clientSecret, /^\S{32,}$/);
      assert.notEqual(res.json.clientSecret, app.json.clientSecret);
      assertDetails(res.json.details, firstOrgId);
      assert.equal(await clientCheck(old), 'invalid_client', 'the old secret is refused');
      const fresh = await client.discovery(new URL(server.issuer), app.json.clientId, res.json.clientSecret, method, insecure);
      assert.equal(await clientCheck(fresh), 'invalid_grant', 'the new secret is accepted');

      const read = await api('GET', `${PROJECTS}/${projectId}/apps/${app.json.appId}`);
      assert.ok(!read.text.includes(res.json.clientSecret), 'the secret is never read back');
      const events = await api('POST', '/admin/v1/events/_search', {
        body: { queries: [{ eventTypesQuery: { types: ['project.application.oidc.secret.changed'] } }] },
      });
      assert.ok(events.json.result.some((e: { payload: { appId: string } }) => e.payload.appId === app.json.appId));
      assert.ok(!events.text.includes(res.json.clientSecret), 'the event holds no secret');
    });
  }

  test('an app without a secret (NONE, PRIVATE_KEY_JWT) is 400 naming authMethodType', async () => {
    for (const authMethodType of ['OIDC_AUTH_METHOD_TYPE_NONE', 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT']) {
      const body: Record<string, unknown> = { name: `No secret ${authMethodType}`, redirectUris: [CB], authMethodType };
      if (authMethodType === 'OIDC_AUTH_METHOD_TYPE_NONE') Object.assign(body, { appType: 'OIDC_APP_TYPE_USER_AGENT' });
      const app = await api('POST', `${PROJECTS}/${projectId}/apps/oidc`, { body });
      assert.equal(app.status, 200, app.text);
      assertInvalid(await regenerate(app.json.appId), ['authMethodType'], { what: authMethodType });
    }
  });

  test('a body with fields is 400; unknown app or another org’s app 404; no token 401; no ORG_OWNER 403', async () => {
    const app = await api('POST', `${PROJECTS}/${projectId}/apps/oidc`, { body: { name: 'Guarded', ...REFRESHABLE } });
    const config = await client.discovery(new URL(server.issuer), app.json.clientId, app.json.clientSecret, undefined, insecure);
    assertInvalid(await regenerate(app.json.appId, { body: { clientSecret: 'mine' } }), ['clientSecret']);
    assertError(await regenerate('123456789'), 404);
    assertError(await regenerate(app.json.appId, { orgId: otherOrgId }), 404);
    assertError(await regenerate(app.json.appId, { token: null }), 401);
    assertError(await regenerate(app.json.appId, { token: managerToken }), 403);
    assertError(await regenerate(app.json.appId, { token: managerToken, orgId: otherOrgId }), 403);
    assert.equal(await clientCheck(config), 'invalid_grant', 'the secret still works');
  });
});
