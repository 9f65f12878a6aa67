import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { insertPat, testServer, type TestServer } from '../support/server.ts';

// docs/api/orgs.md: an org created through the management API (its creator
// becomes ORG_OWNER) and an org's rename.

let server: TestServer;
let api: Api;
let ownedOrgId: string;
let ownerToken: string;
let managerToken: string;
let firstOrgId: string;

async function setupOrg(name: string, userName: string, roles: string[]): Promise<{ orgId: string; token: string }> {
  const res = await api('POST', '/admin/v1/orgs/_setup', {
    body: {
      org: { name },
      human: {
        userName,
        profile: { firstName: 'F', lastName: 'L' },
        email: { email: `${userName}@example.com`, isEmailVerified: true },
        password: 'S3cure-Passw0rd!',
      },
      roles,
    },
  });
  assert.equal(res.status, 200, res.text);
  return { orgId: res.json.orgId, token: await insertPat(server, res.json.userId) };
}

async function orgNamed(name: string): Promise<{ id: string; name: string; primaryDomain: string } | undefined> {
  const res = await api('POST', '/admin/v1/orgs/_search', { body: { queries: [{ nameQuery: { name } }] } });
  assert.equal(res.status, 200, res.text);
  return res.json.result[0];
}

async function orgName(id: string): Promise<string> {
  const res = await api('POST', '/admin/v1/orgs/_search', { body: { query: { limit: 1000 } } });
  return res.json.result.find((o: { id: string }) => o.id === id)?.name;
}

before(async () => {
  server = await testServer();
  api = apiClient(server.url, server.pat);
  ({ orgId: ownedOrgId, token: ownerToken } = await setupOrg('Owned Org', 'owen', ['ORG_OWNER']));
  ({ token: managerToken } = await setupOrg('Managed Org', 'mara', ['ORG_USER_MANAGER']));
  const orgs = await api('POST', '/admin/v1/orgs/_search', { body: {} });
  firstOrgId = orgs.json.result.find((o: { name: string }) => o.name !== 'Owned Org' && o.name !== 'Managed Org').id;
});
after(async () => {
  await server?.stop();
});

describe('POST /management/v1/orgs', () => {
  test('an instance owner creates an org and becomes its ORG_OWNER', async () => {
    const res = await api('POST', '/management/v1/orgs', { body: { name: 'Acme Two' } });
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.id, /^\d+$/);
    assertDetails(res.json.details, res.json.id);
    const org = await orgNamed('Acme Two');
    assert.equal(org?.id, res.json.id);
    assert.equal(org?.primaryDomain, 'acme-two.example.test');
    const members = await api('POST', '/management/v1/orgs/me/members/_search', { body: {}, orgId: res.json.id });
    assert.deepEqual(
      members.json.result.map((m: { roles: string[]; userType: string }) => [m.roles, m.userType]),
      [[['ORG_OWNER'], 'TYPE_MACHINE']],
    );
  });

  test('an ORG_OWNER of another org may too, and owns the new one', async () => {
    const res = await api('POST', '/management/v1/orgs', { token: ownerToken, body: { name: 'Owen Second' } });
    assert.equal(res.status, 200, res.text);
    const project = await api('POST', '/management/v1/projects', { token: ownerToken, body: { name: 'Inside' }, orgId: res.json.id });
    assert.equal(project.status, 200, 'the creator acts as ORG_OWNER there');
  });

  test('a name whose domain exists is 409 and adds nothing', async () => {
    assertError(await api('POST', '/management/v1/orgs', { body: { name: 'Acme Two' } }), 409);
    assertError(await api('POST', '/management/v1/orgs', { body: { name: 'acme two!' } }), 409);
    const all = await api('POST', '/admin/v1/orgs/_search', {
      body: { queries: [{ nameQuery: { name: 'acme two', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }] },
    });
    assert.equal(all.json.details.totalResult, '1');
  });

  test('bad bodies are 400 naming the field; no token 401; no IAM_OWNER or ORG_OWNER 403; nothing added', async () => {
    const post = (body: unknown, token?: string | null) => api('POST', '/management/v1/orgs', { body, ...(token === undefined ? {} : { token }) });
    assertInvalid(await post({}), ['name'], { what: 'missing' });
    assertInvalid(await post({ name: '' }), ['name'], { what: 'empty' });
    assertInvalid(await post({ name: '   ' }), ['name'], { what: 'blank' });
    assertInvalid(await post({ name: 'n'.repeat(201) }), ['name'], { what: 'over-long' });
    assertInvalid(await post({ name: 5 }), ['name'], { what: 'number' });
    assertInvalid(await post({ name: 'X', domain: 'x.example.com' }), ['domain'], { what: 'unknown field' });
    assertError(await post({ name: 'Anonymous' }, null), 401);
    assertError(await post({ name: 'Managed Too' }, managerToken), 403);
    assert.equal(await orgNamed('Managed Too'), undefined);
    assert.equal(await orgNamed('Anonymous'), undefined);
  });
});

describe('PUT /management/v1/orgs/me', () => {
  test('an ORG_OWNER renames its org, with an event', async () => {
    const res = await api('PUT', '/management/v1/orgs/me', { token: ownerToken, body: { name: 'Owned Org Renamed' } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, ownedOrgId);
    assert.equal(await orgName(ownedOrgId), 'Owned Org Renamed');
    const events = await api('POST', '/admin/v1/events/_search', { body: { queries: [{ aggregateIdQuery: { id: ownedOrgId } }] } });
    assert.ok(events.json.result.some((e: { type: string; payload: { name: string } }) => e.type === 'org.changed' && e.payload.name === 'Owned Org Renamed'));
    // An instance owner may rename any org.
    assert.equal((await api('PUT', '/management/v1/orgs/me', { body: { name: 'Owned Org' }, orgId: ownedOrgId })).status, 200);
    assert.equal(await orgName(ownedOrgId), 'Owned Org');
  });

  test('bad bodies 400; no token 401; another org or no ORG_OWNER 403; unknown org 404; nothing changes', async () => {
    const put = (body: unknown, options = {}) => api('PUT', '/management/v1/orgs/me', { token: ownerToken, body, ...options });
    assertInvalid(await put({}), ['name']);
    assertInvalid(await put({ name: '' }), ['name']);
    assertInvalid(await put({ name: 'n'.repeat(201) }), ['name']);
    assertInvalid(await put({ name: ['x'] }), ['name']);
    assertInvalid(await put({ name: 'X', state: 'inactive' }), ['state']);
    assertError(await put({ name: 'X' }, { token: null }), 401);
    assertError(await put({ name: 'X' }, { token: managerToken }), 403);
    assertError(await put({ name: 'X' }, { orgId: firstOrgId }), 403);
    assertError(await put({ name: 'X' }, { token: server.pat, orgId: '999999999999999999' }), 404);
    assert.equal(await orgName(ownedOrgId), 'Owned Org');
    assert.notEqual(await orgName(firstOrgId), 'X');
  });
});
