import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testServer, type TestServer } from '../support/server.ts';
import { basicHeader, request, type ApiResponse } from '../support/api.ts';
import { LOGIN_FORM_REDIRECT, passwordForm, passwordFormAppWithSecret } from '../support/login-form.ts';
import { runCodeFlow } from '../support/code-flow.ts';

// SCIM 2.0 (RFC 7644) at /scim/v2/{orgId} (docs/scim.md): Users created,
// read, listed with every filter operator, paged and sorted, replaced,
// patched in every form and removed; `active: false` ending sign-in and
// tokens; who may call; and every bad input answered with a SCIM error,
// never a 5xx.

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PASSWORD = 'Secret-Passw0rd!';

let server: TestServer;
let orgId: string;
let domain: string;
let otherOrgId: string;
let scimPat: string;
let otherOrgPat: string;
let nobodyPat: string;
let ownerId: string;
let app: { clientId: string; clientSecret: string };

interface ScimCall {
  body?: unknown;
  raw?: string;
  token?: string | null;
  contentType?: string;
  org?: string;
}

function scim(method: string, path: string, options: ScimCall = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? scimPat : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/scim+json';
  return request(`${server.url}/scim/v2/${options.org ?? orgId}${path}`, { method, headers, ...(body === undefined ? {} : { body }) }, { strictJson: true });
}

function assertScimError(res: ApiResponse, status: number, scimType?: string): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(res.body.schemas, [ERROR]);
  assert.equal(res.body.status, String(status));
  assert.equal(typeof res.body.detail, 'string');
  if (scimType) assert.equal(res.body.scimType, scimType, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/);
}

function userBody(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ value: `${userName}@example.com`, type: 'work', primary: true }],
    ...extra,
  };
}

async function create(userName: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await scim('POST', '/Users', { body: userBody(userName, extra) });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function list(query: Record<string, string>): Promise<any> {
  const res = await scim('GET', `/Users?${new URLSearchParams(query)}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function userNamesOf(filter: string): Promise<string[]> {
  const body = await list({ filter, count: '200' });
  return body.Resources.map((r: { userName: string }) => r.userName).sort();
}

function patch(id: string, ...operations: unknown[]): Promise<ApiResponse> {
  return scim('PATCH', `/Users/${id}`, { body: { schemas: [PATCH_OP], Operations: operations } });
}

async function eventTypesOf(aggregateId: string): Promise<string[]> {
  const { rows } = await server.running.db.query<{ event_type: string }>('SELECT event_type FROM events WHERE aggregate_id = $1 ORDER BY position', [
    aggregateId,
  ]);
  return rows.map((row) => row.event_type);
}

/** Runs refused calls and proves they changed no user and wrote no event. */
async function assertNothingWritten(refused: () => Promise<void>): Promise<void> {
  const state = async () => {
    const users = await server.running.db.query('SELECT * FROM users ORDER BY id');
    const events = await server.running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM events');
    return JSON.stringify([users.rows, events.rows]);
  };
  const before = await state();
  await refused();
  assert.equal(await state(), before, 'nothing was written');
}

async function machineWithPat(userName: string, roles: string[], org?: string): Promise<string> {
  const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId: org });
  assert.equal(machine.status, 200, machine.text);
  if (roles.length) {
    const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles }, orgId: org });
    assert.equal(member.status, 200, member.text);
  }
  const pat = await server.api('POST', `/management/v1/users/${machine.body.userId}/pats`, { body: {}, orgId: org });
  assert.equal(pat.status, 200, pat.text);
  return pat.body.token;
}

async function signsIn(userName: string, password = PASSWORD): Promise<boolean> {
  const form = await passwordForm(server.url, app.clientId);
  return (await form(`${userName}@${domain}`, password)).status === 303;
}

async function introspect(token: string): Promise<any> {
  const res = await request(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { authorization: basicHeader(app.clientId, app.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

before(async () => {
  server = await testServer();
  const { rows } = await server.running.db.query<{ org_id: string; domain: string }>(
    `SELECT u.org_id, d.domain FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.user_name = 'portcullis-admin'`,
  );
  ({ org_id: orgId, domain } = rows[0]!);
  const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
    body: { org: { name: 'Other Org' }, human: { userName: 'other', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@example.com' } } },
  });
  assert.equal(setup.status, 200, setup.text);
  otherOrgId = setup.body.orgId;
  scimPat = await machineWithPat('scim-client', ['ORG_USER_MANAGER']);
  otherOrgPat = await machineWithPat('other-scim-client', ['ORG_OWNER'], otherOrgId);
  nobodyPat = await machineWithPat('nobody', []);
  const owner = await server.api('POST', '/management/v1/users/human', {
    body: { userName: 'the-owner', profile: { firstName: 'O', lastName: 'Wner' }, email: { email: 'owner@example.com' }, password: PASSWORD },
  });
  assert.equal(owner.status, 200, owner.text);
  ownerId = owner.body.userId;
  const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: ownerId, roles: ['ORG_OWNER'] } });
  assert.equal(member.status, 200, member.text);
  app = await passwordFormAppWithSecret(server.api, 'SCIM sign-ins');
});

after(async () => {
  await server?.stop();
});

describe('discovery (RFC 7644 4)', () => {
  it('ServiceProviderConfig: patch, filter with maxResults, sort; no bulk, no ETags', async () => {
    const res = await scim('GET', '/ServiceProviderConfig');
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/);
    assert.equal(res.body.patch.supported, true);
    assert.equal(res.body.bulk.supported, false);
    assert.deepEqual(res.body.filter, { supported: true, maxResults: 200 });
    assert.equal(res.body.sort.supported, true);
    assert.equal(res.body.etag.supported, false);
    assert.equal(res.body.authenticationSchemes[0].type, 'oauthbearertoken');
  });

  it('ResourceTypes offers User only (no Groups); Schemas describes the User attributes kept', async () => {
    const types = await scim('GET', '/ResourceTypes');
    assert.deepEqual(
      types.body.Resources.map((r: { id: string }) => r.id),
      ['User'],
    );
    assert.equal((await scim('GET', '/ResourceTypes/User')).body.endpoint, '/Users');
    const schemas = await scim('GET', '/Schemas');
    assert.equal(schemas.body.totalResults, 1);
    const user = await scim('GET', `/Schemas/${USER}`);
    const names = user.body.attributes.map((a: { name: string }) => a.name);
    for (const name of ['userName', 'name', 'emails', 'active', 'externalId']) assert.ok(names.includes(name), name);
    assertScimError(await scim('GET', '/Groups'), 404);
  });
});

describe('POST and GET /Users', () => {
  it('creates a human user (201, Location, meta), its event, and it signs in with its password', async () => {
    const res = await scim('POST', '/Users', { body: userBody('created', { password: PASSWORD, externalId: 'ext-created', displayName: 'Countess' }) });
    assert.equal(res.status, 201, res.text);
    const user = res.body;
    assert.equal(res.headers.get('location'), `${server.issuer}/scim/v2/${orgId}/Users/${user.id}`);
    assert.deepEqual(user.schemas, [USER]);
    assert.equal(user.userName, 'created');
    assert.equal(user.externalId, 'ext-created');
    assert.equal(user.displayName, 'Countess');
    assert.deepEqual(user.name, { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada Lovelace' });
    assert.deepEqual(user.emails, [{ value: 'created@example.com', type: 'work', primary: true }]);
    assert.equal(user.active, true);
    assert.equal(user.password, undefined, 'a password is never returned');
    assert.equal(user.meta.resourceType, 'User');
    assert.equal(user.meta.location, res.headers.get('location'));
    assert.deepEqual(await eventTypesOf(user.id), ['user.human.added', 'user.external_id.changed']);
    assert.deepEqual((await scim('GET', `/Users/${user.id}`)).body, user);
    const mgmt = await server.api('GET', `/management/v1/users/${user.id}`);
    assert.equal(mgmt.body.user.human.email.isEmailVerified, true);
    assert.ok(await signsIn('created'));
  });

  it('takes application/json too, attribute names in any letter case, attributes under the schema URI, and passes over ones it does not keep', async () => {
    const body = {
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      USERNAME: 'cased',
      Name: { GivenName: 'C', familyName: 'Ased', middleName: 'x' },
      [USER]: { displayName: 'Under the URI' },
      emails: [{ Value: 'cased@example.com', Primary: true }],
      title: 'Engineer',
      phoneNumbers: [{ value: '+41 79 000 00 00', type: 'work' }],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: '7' },
    };
    const res = await scim('POST', '/Users', { body, contentType: 'application/json' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.userName, 'cased');
    assert.equal(res.body.displayName, 'Under the URI');
    assert.equal(res.body.name.givenName, 'C');
    assert.equal(res.body.title, undefined);
  });

  it('creates a user with active false deactivated: it cannot sign in', async () => {
    const user = await create('born-inactive', { active: false, password: PASSWORD });
    assert.equal(user.active, false);
    assert.deepEqual(await eventTypesOf(user.id), ['user.human.added', 'user.deactivated']);
    assert.equal(await signsIn('born-inactive'), false);
  });

  it('keeps the primary of several emails; refuses two primaries and several without one (400 invalidValue)', async () => {
    const emails = [
      { value: 'home@example.com', type: 'home' },
      { value: 'main@example.com', type: 'other', primary: true },
    ];
    assert.deepEqual((await create('two-mails', { emails })).emails, [{ value: 'main@example.com', type: 'work', primary: true }]);
    await assertNothingWritten(async () => {
      const two = emails.map((e) => ({ ...e, primary: true }));
      assertScimError(await scim('POST', '/Users', { body: userBody('x1', { emails: two }) }), 400, 'invalidValue');
      const none = emails.map((e) => ({ value: e.value, type: 'home' }));
      assertScimError(await scim('POST', '/Users', { body: userBody('x2', { emails: none }) }), 400, 'invalidValue');
    });
  });

  it('a userName taken in any letter case, or an externalId taken, is 409 uniqueness; nothing is written', async () => {
    await create('unique-one', { externalId: 'ext-unique' });
    await assertNothingWritten(async () => {
      assertScimError(await scim('POST', '/Users', { body: userBody('UNIQUE-one') }), 409, 'uniqueness');
      assertScimError(await scim('POST', '/Users', { body: userBody('unique-two', { externalId: 'ext-unique' }) }), 409, 'uniqueness');
    });
    // externalId is caseExact (RFC 7643 3.1): another letter case is another id.
    await create('unique-three', { externalId: 'EXT-UNIQUE' });
  });

  it('GET of an unknown user, a machine user or a user of another org is 404', async () => {
    assertScimError(await scim('GET', '/Users/unknown'), 404);
    assertScimError(await scim('GET', '/Users/%00'), 404);
    assertScimError(await scim('GET', `/Users/${'9'.repeat(300)}`), 404);
    const { rows } = await server.running.db.query<{ id: string; org_id: string }>(
      "SELECT id, org_id FROM users WHERE user_name IN ('scim-client', 'other') ORDER BY user_name",
    );
    for (const row of rows) assertScimError(await scim('GET', `/Users/${row.id}`), 404);
  });
});
