import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testServer, type TestServer } from '../support/server.ts';
import { assertError, assertInvalid } from '../support/assertions.ts';

// The search calls of the console: one page of a list in a total order, its
// total, every query form, the acting org's objects only, and bad queries
// answered 400 naming the field.

let server: TestServer;
let defaultOrgId: string;
let otherOrgId: string;
/** PAT of a machine user that is ORG_OWNER of the other org only. */
let otherOwnerPat: string;

const USERS = '/management/v1/users/_search';
const search = (path: string, body: unknown, options: { orgId?: string; token?: string } = {}) => server.api('POST', path, { body, ...options });
const userNames = (response: { body: any }) => response.body.result.map((u: { userName: string }) => u.userName);

async function ok(path: string, body: unknown, options: { orgId?: string; token?: string } = {}) {
  const response = await search(path, body, options);
  assert.equal(response.status, 200, response.text);
  return response;
}

async function addHuman(userName: string, options: { email?: string; displayName?: string; orgId?: string } = {}): Promise<string> {
  const response = await server.api('POST', '/management/v1/users/human', {
    body: {
      userName,
      profile: { firstName: 'Sam', lastName: 'Search', ...(options.displayName ? { displayName: options.displayName } : {}) },
      email: { email: options.email ?? `${userName}@example.org`, isEmailVerified: true },
    },
    orgId: options.orgId,
  });
  assert.equal(response.status, 200, response.text);
  return response.body.userId;
}

async function addMachine(userName: string, orgId?: string): Promise<string> {
  const response = await server.api('POST', '/management/v1/users/machine', { body: { userName, name: `Machine ${userName}` }, orgId });
  assert.equal(response.status, 200, response.text);
  return response.body.userId;
}

before(async () => {
  server = await testServer();
  const { rows } = await server.running.db.query<{ org_id: string }>("SELECT org_id FROM users WHERE user_name = 'portcullis-admin'");
  defaultOrgId = rows[0]!.org_id;
  const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
    body: {
      org: { name: 'Other Search Org', domain: 'other.example.test' },
      human: { userName: 'otherowner', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@other.example.test' } },
    },
  });
  assert.equal(setup.status, 200, setup.text);
  otherOrgId = setup.body.orgId;
  const owner = await addMachine('other-owner', otherOrgId);
  const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: owner, roles: ['ORG_OWNER'] }, orgId: otherOrgId });
  assert.equal(member.status, 200, member.text);
  const pat = await server.api('POST', `/management/v1/users/${owner}/pats`, { body: {}, orgId: otherOrgId });
  assert.equal(pat.status, 200, pat.text);
  otherOwnerPat = pat.body.token;

  await addHuman('Alice', { email: 'alice@wonder.example', displayName: 'Alice Liddell' });
  await addHuman('alicia', { email: 'ALICIA@Wonder.example', displayName: 'Alicia Keys' });
  await addHuman('bob_1', { email: 'bob@builder.example', displayName: 'Bob 100% Builder' });
  await addHuman('bobx1', { email: 'bobx@builder.example', displayName: 'Bobx' });
  await addMachine('carol-bot');
  // 105 machine users with a common prefix: more than the default page of 100.
  for (let i = 0; i < 105; i++) await addMachine(`bulk-${String(i).padStart(3, '0')}`);
});

after(() => server?.stop());

describe('paging', () => {
  it('limit 0 (or none) is the default page of 100, with the total of every match', async () => {
    const query = [{ userNameQuery: { userName: 'bulk-', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }];
    for (const body of [{ query: { limit: 0 }, queries: query }, { queries: query }]) {
      const response = await ok(USERS, body);
      assert.equal(response.body.details.totalResult, '105');
      assert.equal(response.body.result.length, 100);
      assert.equal(response.body.result[0].userName, 'bulk-000');
      assert.ok(!Number.isNaN(Date.parse(response.body.details.viewTimestamp)));
    }
  });

  it('offset and limit select a window; offset as a string or a number; asc false reverses the order', async () => {
    const query = [{ userNameQuery: { userName: 'bulk-', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }];
    assert.deepEqual(userNames(await ok(USERS, { query: { offset: '100', limit: 3 }, queries: query })), ['bulk-100', 'bulk-101', 'bulk-102']);
    assert.deepEqual(userNames(await ok(USERS, { query: { offset: 103, limit: '10' }, queries: query })), ['bulk-103', 'bulk-104']);
    assert.deepEqual(userNames(await ok(USERS, { query: { offset: '0', limit: 2, asc: false }, queries: query })), ['bulk-104', 'bulk-103']);
  });

  it('an offset past the end is an empty page that still counts every match', async () => {
    const response = await ok(USERS, {
      query: { offset: '5000', limit: 10 },
      queries: [{ userNameQuery: { userName: 'bulk-', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }],
    });
    assert.deepEqual(response.body.result, []);
    assert.equal(response.body.details.totalResult, '105');
  });

  it('limit at most 1,000: 1,000 is served, more is 400 naming query.limit', async () => {
    const all = await ok(USERS, { query: { limit: 1000 } });
    assert.equal(all.body.result.length, Number(all.body.details.totalResult));
    assertInvalid(await search(USERS, { query: { limit: 1001 } }), ['query.limit']);
    assertInvalid(await search(USERS, { query: { limit: '1001' } }), ['query.limit']);
    assertInvalid(await search(USERS, { query: { limit: 100000000000 } }), ['query.limit']);
  });

  it('the order is total and stays so under inserts: ties of a name are ordered by id, new rows take their place without reordering the rest', async () => {
    const projects = '/management/v1/projects/_search';
    // Names are unique within an org, so the ties are spellings of one name
    // that differ only in letter case.
    const named = [{ nameQuery: { name: 'twin', method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }];
    let spellings = 0;
    const twin = () => {
      const n = spellings++;
      return [...'twin'].map((c, i) => ((n >> i) & 1 ? c.toUpperCase() : c)).join('');
    };
    const ids: string[] = [];
    const addProject = async (name: string) => {
      const response = await server.api('POST', '/management/v1/projects', { body: { name } });
      assert.equal(response.status, 200, response.text);
      return response.body.id as string;
    };
    for (let i = 0; i < 6; i++) ids.push(await addProject(twin()));
    const before = (await ok(projects, { queries: named })).body.result.map((p: { id: string }) => p.id);
    assert.deepEqual(before, [...ids].sort(), 'equal names in id order');
    // Page by page, with inserts between the pages.
    const seen: string[] = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const page = await ok(projects, { query: { offset: String(offset), limit: 2 }, queries: named });
      seen.push(...page.body.result.map((p: { id: string }) => p.id));
      await addProject(`Twin${offset}`); // sorts after every "twin": earlier pages keep their rows
    }
    assert.deepEqual(seen, before);
    for (let i = 0; i < 3; i++) ids.push(await addProject(twin()));
    const afterInserts = (await ok(projects, { queries: named })).body.result.map((p: { id: string }) => p.id);
    assert.deepEqual(afterInserts, [...ids].sort());
    assert.deepEqual(
      afterInserts.filter((id: string) => before.includes(id)),
      before,
      'the old rows keep their relative order',
    );
  });
});

describe('user queries', () => {
  const names = async (queries: unknown[]) => userNames(await ok(USERS, { queries }));

  it('login name: each method, with and without letter case', async () => {
    const q = (userName: string, method: string) => [{ userNameQuery: { userName, method } }];
    assert.deepEqual(await names(q('alice', 'TEXT_QUERY_METHOD_EQUALS')), []);
    assert.deepEqual(await names(q('Alice', 'TEXT_QUERY_METHOD_EQUALS')), ['Alice']);
    assert.deepEqual(await names([{ userNameQuery: { userName: 'Alice' } }]), ['Alice'], 'EQUALS by default');
    assert.deepEqual(await names(q('ALICE', 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE')), ['Alice']);
    assert.deepEqual(await names(q('ali', 'TEXT_QUERY_METHOD_STARTS_WITH')), ['alicia']);
    assert.deepEqual(await names(q('ali', 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE')), ['Alice', 'alicia']);
    assert.deepEqual(await names(q('LIC', 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE')), ['Alice', 'alicia']);
    assert.deepEqual(await names(q('lic', 'TEXT_QUERY_METHOD_CONTAINS')), ['Alice', 'alicia']);
    assert.deepEqual(await names(q('Lic', 'TEXT_QUERY_METHOD_CONTAINS')), []);
  });

  it('wildcards in a query are plain characters', async () => {
    assert.deepEqual(await names([{ userNameQuery: { userName: 'bob_', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }]), ['bob_1']);
    assert.deepEqual(await names([{ userNameQuery: { userName: '%', method: 'TEXT_QUERY_METHOD_CONTAINS' } }]), []);
    assert.deepEqual(await names([{ displayNameQuery: { displayName: '100%', method: 'TEXT_QUERY_METHOD_CONTAINS' } }]), ['bob_1']);
  });

  it('email and display name', async () => {
    assert.deepEqual(await names([{ emailQuery: { emailAddress: 'alicia@wonder.example', method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }]), ['alicia']);
    assert.deepEqual(await names([{ emailQuery: { emailAddress: 'alicia@wonder.example', method: 'TEXT_QUERY_METHOD_EQUALS' } }]), []);
    assert.deepEqual(await names([{ emailQuery: { emailAddress: '@builder.', method: 'TEXT_QUERY_METHOD_CONTAINS' } }]), ['bob_1', 'bobx1']);
    assert.deepEqual(await names([{ displayNameQuery: { displayName: 'alic', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }]), ['Alice', 'alicia']);
    assert.deepEqual(await names([{ displayNameQuery: { displayName: 'Alicia Keys' } }]), ['alicia']);
  });

  it('type and state; several queries must all hold', async () => {
    const machines = await ok(USERS, { query: { limit: 1000 }, queries: [{ typeQuery: { type: 'TYPE_MACHINE' } }] });
    assert.ok(machines.body.result.every((u: any) => u.machine && !u.human));
    assert.equal(machines.body.details.totalResult, String(105 + 2)); // bulk, carol-bot, portcullis-admin
    assert.deepEqual(await names([{ typeQuery: { type: 'TYPE_HUMAN' } }, { userNameQuery: { userName: 'b', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }]), [
      'bob_1',
      'bobx1',
    ]);
    assert.deepEqual(await names([{ typeQuery: { type: 'TYPE_MACHINE' } }, { userNameQuery: { userName: 'c', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }]), [
      'carol-bot',
    ]);

    await server.running.db.query("UPDATE users SET state = 'locked' WHERE user_name = 'bobx1'");
    assert.deepEqual(await names([{ stateQuery: { state: 'USER_STATE_LOCKED' } }]), ['bobx1']);
    const locked = await ok(USERS, { queries: [{ stateQuery: { state: 'USER_STATE_LOCKED' } }] });
    assert.equal(locked.body.result[0].state, 'USER_STATE_LOCKED');
    assert.deepEqual(
      await names([{ stateQuery: { state: 'USER_STATE_ACTIVE' } }, { userNameQuery: { userName: 'bob', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }]),
      ['bob_1'],
    );
    assert.deepEqual(await names([{ stateQuery: { state: 'USER_STATE_INACTIVE' } }]), []);
  });

  it('a result has the shape of GET /management/v1/users/{id}', async () => {
    const found = (await ok(USERS, { queries: [{ userNameQuery: { userName: 'Alice' } }] })).body.result[0];
    const got = await server.api('GET', `/management/v1/users/${found.id}`);
    assert.deepEqual(found, got.body.user);
  });
});

describe('projects, apps, orgs and events', () => {
  it('projects and apps by name', async () => {
    const project = await server.api('POST', '/management/v1/projects', { body: { name: 'Zeta Shop' } });
    const projectId = project.body.id;
    for (const name of ['Web', 'web admin', 'Mobile']) {
      const app = await server.api('POST', `/management/v1/projects/${projectId}/apps/oidc`, {
        body: { name, redirectUris: ['https://shop.example/cb'], authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE', appType: 'OIDC_APP_TYPE_USER_AGENT' },
      });
      assert.equal(app.status, 200, app.text);
    }
    const apps = `/management/v1/projects/${projectId}/apps/_search`;
    const all = await ok(apps, {});
    assert.deepEqual(
      all.body.result.map((a: any) => a.name),
      ['Mobile', 'Web', 'web admin'],
    );
    assert.equal(all.body.result[0].projectId, projectId);
    assert.ok(all.body.result.every((a: any) => a.clientId && a.redirectUris && !('clientSecret' in a) && !('secretDigest' in a)));
    assert.deepEqual(
      (await ok(apps, { queries: [{ nameQuery: { name: 'WEB', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }] })).body.result.map((a: any) => a.name),
      ['Web', 'web admin'],
    );
    const projects = await ok('/management/v1/projects/_search', {
      queries: [{ nameQuery: { name: 'zeta', method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }],
    });
    assert.deepEqual(
      projects.body.result.map((p: any) => p.id),
      [projectId],
    );
    assert.equal(projects.body.result[0].details.resourceOwner, defaultOrgId);
  });

  it('orgs by name and by domain (IAM_OWNER)', async () => {
    const byName = await ok('/admin/v1/orgs/_search', {
      queries: [{ nameQuery: { name: 'other search', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }],
    });
    assert.deepEqual(
      byName.body.result.map((o: any) => [o.id, o.primaryDomain, o.state]),
      [[otherOrgId, 'other.example.test', 'ORG_STATE_ACTIVE']],
    );
    const byDomain = await ok('/admin/v1/orgs/_search', {
      queries: [{ domainQuery: { domain: 'OTHER.example.test', method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }],
    });
    assert.deepEqual(
      byDomain.body.result.map((o: any) => o.id),
      [otherOrgId],
    );
    const all = await ok('/admin/v1/orgs/_search', {});
    assert.equal(all.body.details.totalResult, '2');
  });

  it('events by type, aggregate and creation date, by position', async () => {
    const events = '/admin/v1/events/_search';
    const added = await ok(events, { query: { limit: 1000 }, queries: [{ eventTypesQuery: { types: ['user.machine.added'] } }] });
    assert.ok(added.body.result.length >= 107);
    assert.ok(added.body.result.every((e: any) => e.type === 'user.machine.added' && e.aggregate.type === 'user' && e.editor.userId !== undefined));
    const positions = added.body.result.map((e: any) => BigInt(e.sequence));
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => (a < b ? -1 : 1)),
    );
    const newest = await ok(events, { query: { limit: 1, asc: false } });
    const all = await ok(events, { query: { limit: 1000 } });
    assert.equal(newest.body.result[0].sequence, all.body.result.at(-1).sequence);

    const ofOrg = await ok(events, { queries: [{ aggregateIdQuery: { id: otherOrgId } }] });
    assert.deepEqual(ofOrg.body.result.map((e: any) => e.type).slice(0, 3), ['org.added', 'org.domain.added', 'org.domain.primary.set']);

    const at = Date.parse(all.body.result[50].creationDate);
    const later = await ok(events, { query: { limit: 1000 }, queries: [{ creationDateQuery: { from: new Date(at).toISOString() } }] });
    assert.ok(later.body.result.every((e: any) => Date.parse(e.creationDate) >= at));
    const earlier = await ok(events, { query: { limit: 1000 }, queries: [{ creationDateQuery: { to: new Date(at).toISOString() } }] });
    assert.ok(earlier.body.result.every((e: any) => Date.parse(e.creationDate) < at));
    assert.equal(Number(later.body.details.totalResult) + Number(earlier.body.details.totalResult), Number(all.body.details.totalResult));
    const none = await ok(events, { queries: [{ creationDateQuery: { from: '2001-01-01T00:00:00Z', to: '2001-01-02T00:00:00Z' } }] });
    assert.equal(none.body.details.totalResult, '0');
  });
});

describe('org isolation', () => {
  it("an org owner lists its own org's users and projects, never another org's", async () => {
    const own = await ok(USERS, { query: { limit: 1000 } }, { token: otherOwnerPat });
    assert.deepEqual(userNames(own).sort(), ['other-owner', 'otherowner']);
    assert.ok(own.body.result.every((u: any) => u.details.resourceOwner === otherOrgId));
    assertError(await search(USERS, {}, { token: otherOwnerPat, orgId: defaultOrgId }), 403);
    assertError(await search('/management/v1/projects/_search', {}, { token: otherOwnerPat, orgId: defaultOrgId }), 403);
    const projects = await ok('/management/v1/projects/_search', {}, { token: otherOwnerPat });
    assert.equal(projects.body.details.totalResult, '0');
  });

  it("another org's project's apps are not found; orgs and events need IAM_OWNER", async () => {
    const foreign = (await ok('/management/v1/projects/_search', { query: { limit: 1 } })).body.result[0].id;
    assertError(await search(`/management/v1/projects/${foreign}/apps/_search`, {}, { token: otherOwnerPat }), 404);
    assertError(await search('/admin/v1/orgs/_search', {}, { token: otherOwnerPat }), 403);
    assertError(await search('/admin/v1/events/_search', {}, { token: otherOwnerPat }), 403);
    assertError(await search(USERS, {}, { token: null as unknown as string }), 401);
  });
});

describe('bad queries', () => {
  it('are 400 naming each bad field', async () => {
    assertInvalid(await search(USERS, { query: { offset: -1 } }), ['query.offset']);
    assertInvalid(await search(USERS, { query: { offset: '1e3', limit: 'ten', asc: 'yes' } }), ['query.offset', 'query.limit', 'query.asc']);
    assertInvalid(await search(USERS, { query: { sort: 'name' } }), ['query.sort']);
    assertInvalid(await search(USERS, { queries: [{ nameQuery: { name: 'x' } }] }), ['queries[0].nameQuery']);
    assertInvalid(await search(USERS, { queries: [{}] }), ['queries[0]']);
    assertInvalid(await search(USERS, { queries: [{ userNameQuery: { userName: 'a' }, emailQuery: { emailAddress: 'b' } }] }), ['queries[0]']);
    assertInvalid(await search(USERS, { queries: [{ userNameQuery: { userName: 'a', method: 'LIKE' } }, { stateQuery: { state: 'USER_STATE_GONE' } }] }), [
      'queries[0].userNameQuery.method',
      'queries[1].stateQuery.state',
    ]);
    assertInvalid(await search(USERS, { queries: [{ userNameQuery: {} }, { typeQuery: { type: 'TYPE_ROBOT' } }] }), [
      'queries[0].userNameQuery.userName',
      'queries[1].typeQuery.type',
    ]);
    assertInvalid(await search(USERS, { queries: [{ userNameQuery: { userName: 'x'.repeat(201) } }] }), ['queries[0].userNameQuery.userName']);
    assertInvalid(await search(USERS, { queries: 'all' }), ['queries']);
    assertInvalid(await search(USERS, { queries: Array.from({ length: 21 }, () => ({ typeQuery: { type: 'TYPE_HUMAN' } })) }), ['queries']);
    assertInvalid(await search('/admin/v1/orgs/_search', { queries: [{ domainQuery: { domain: 1 } }] }), ['queries[0].domainQuery.domain']);
    assertInvalid(
      await search('/admin/v1/events/_search', {
        queries: [
          { eventTypesQuery: { types: [] } },
          { creationDateQuery: { from: 'yesterday' } },
          { creationDateQuery: {} },
          { aggregateIdQuery: { id: '' } },
        ],
      }),
      ['queries[0].eventTypesQuery.types', 'queries[1].creationDateQuery.from', 'queries[2].creationDateQuery', 'queries[3].aggregateIdQuery.id'],
    );
    assertInvalid(await search(USERS, { queries: [{ userNameQuery: { userName: 'a\u0000' } }] }), ['queries[0].userNameQuery.userName']);
  });

  it('a creation date of the year 0000 (valid RFC 3339, no PostgreSQL timestamp) is 400 naming the field, not 500', async () => {
    const events = '/admin/v1/events/_search';
    assertInvalid(await search(events, { queries: [{ creationDateQuery: { from: '0000-01-01T00:00:00Z' } }] }), ['queries[0].creationDateQuery.from']);
    assertInvalid(
      await search(events, {
        queries: [{ eventTypesQuery: { types: ['org.added'] } }, { creationDateQuery: { from: '2001-01-01T00:00:00Z', to: '0000-12-31T23:59:59+01:00' } }],
      }),
      ['queries[1].creationDateQuery.to'],
    );
    const bounds = await search(events, { queries: [{ creationDateQuery: { from: '0001-01-01T00:00:00Z', to: '9999-12-31T23:59:59Z' } }] });
    assert.equal(bounds.status, 200, 'the years 1 and 9999 are fine');
  });

  it('malformed JSON and a body that is no object are 400', async () => {
    const malformed = await server.api('POST', USERS, { raw: '{"query": ' });
    assert.equal(malformed.status, 400);
    assertInvalid(await search(USERS, [1, 2]), ['(body)']);
  });
});
