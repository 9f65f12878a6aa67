import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { basicHeader } from '../support/api.ts';
import { runCodeFlow } from '../support/code-flow.ts';
import { LOGIN_FORM_REDIRECT, passwordFormAppWithSecret } from '../support/login-form.ts';
import { testServer, type TestServer } from '../support/server.ts';

// docs/api/users.md, "Metadata": keyed base64 values on a user, and the
// scope urn:service:iam:user:metadata that releases them at userinfo and
// introspection.

let server: TestServer;
let orgId: string;
let domain: string;
let nobodyPat: string;
const USERS = '/management/v1/users';
const PASSWORD = 'Metadata-Passw0rd';
const b64 = (text: string) => Buffer.from(text).toString('base64');

async function addHuman(userName: string): Promise<string> {
  const res = await server.api('POST', `${USERS}/human`, {
    body: { userName, profile: { firstName: 'Ada', lastName: 'Meta' }, email: { email: `${userName}@example.com`, isEmailVerified: true }, password: PASSWORD },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.userId;
}

before(async () => {
  server = await testServer({ captureLog: true });
  const { rows } = await server.running.db.query<{ org_id: string; domain: string }>(
    `SELECT u.org_id, d.domain FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.user_name = 'portcullis-admin'`,
  );
  ({ org_id: orgId, domain } = rows[0]!);
  const machine = await server.api('POST', `${USERS}/machine`, { body: { userName: 'nobody', name: 'nobody' } });
  nobodyPat = (await server.api('POST', `${USERS}/${machine.body.userId}/pats`)).body.token;
});

after(() => server?.stop());

describe('/management/v1/users/{id}/metadata', () => {
  it('sets, reads, lists and removes keys; events name the key, never the value', async () => {
    const userId = await addHuman('meta-crud');
    const path = `${USERS}/${userId}/metadata`;
    const set = await server.api('POST', `${path}/department`, { body: { value: b64('research & development') } });
    assert.equal(set.status, 200, set.text);
    assertDetails(set.body.details, orgId);
    assert.equal((await server.api('POST', `${path}/tenant:id`, { body: { value: b64('t-42') } })).status, 200);
    const got = await server.api('GET', `${path}/department`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.metadata.key, 'department');
    assert.equal(Buffer.from(got.body.metadata.value, 'base64').toString(), 'research & development');
    // Setting again replaces the value.
    assert.equal((await server.api('POST', `${path}/department`, { body: { value: b64('sales') } })).status, 200);
    const listed = await server.api('POST', `${path}/_search`, { body: { query: { asc: true } } });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.details.totalResult, '2');
    assert.deepEqual(
      listed.body.result.map((m: { key: string; value: string }) => [m.key, m.value]),
      [
        ['department', b64('sales')],
        ['tenant:id', b64('t-42')],
      ],
    );
    assert.equal((await server.api('DELETE', `${path}/tenant:id`)).status, 200);
    assertError(await server.api('GET', `${path}/tenant:id`), 404);
    assertError(await server.api('DELETE', `${path}/tenant:id`), 404);
    const events = await server.api('POST', '/admin/v1/events/_search', { body: { queries: [{ aggregateIdQuery: { id: userId } }] } });
    const types = events.body.result.map((e: { type: string }) => e.type);
    assert.deepEqual(
      types.filter((t: string) => t.startsWith('user.metadata')),
      ['user.metadata.set', 'user.metadata.set', 'user.metadata.set', 'user.metadata.removed'],
    );
    assert.ok(!events.text.includes(b64('sales')) && !events.text.includes('research'), 'no value in the event log');
  });

  it('answers bad values and keys with 400 naming the field, and writes nothing', async () => {
    const userId = await addHuman('meta-bad');
    const path = `${USERS}/${userId}/metadata`;
    const values: Array<[unknown, string]> = [
      [{ value: 'not base64!' }, 'value'],
      [{ value: 'YQ' }, 'value'],
      [{ value: '' }, 'value'],
      [{ value: Buffer.alloc(4097).toString('base64') }, 'value'],
      [{ value: 5 }, 'value'],
      [{}, 'value'],
      [{ value: b64('x'), extra: true }, 'extra'],
      [{ value: 'YQ==\u0000' }, 'value'],
      [[], '(body)'],
    ];
    for (const [body, field] of values) {
      assertInvalid(await server.api('POST', `${path}/key`, { body }), [field], { atLeast: true, what: JSON.stringify(body).slice(0, 60) });
    }
    for (const key of ['_search2', '_x', 'a%20b', 'a%00b', 'x'.repeat(201), '%C3%A4']) {
      assertInvalid(await server.api('POST', `${path}/${key}`, { body: { value: b64('x') } }), ['key'], { what: key });
      assertInvalid(await server.api('GET', `${path}/${key}`), ['key'], { what: key });
    }
    assert.equal((await server.api('POST', `${path}/exactly-4096`, { body: { value: Buffer.alloc(4096, 7).toString('base64') } })).status, 200);
    const listed = await server.api('POST', `${path}/_search`, { body: {} });
    assert.deepEqual(
      listed.body.result.map((m: { key: string }) => m.key),
      ['exactly-4096'],
    );
  });

  it('holds at most 100 keys per user', async () => {
    const userId = await addHuman('meta-many');
    const path = `${USERS}/${userId}/metadata`;
    for (let i = 0; i < 100; i++) assert.equal((await server.api('POST', `${path}/k${i}`, { body: { value: b64(String(i)) } })).status, 200);
    assertInvalid(await server.api('POST', `${path}/k100`, { body: { value: b64('one too many') } }), ['key']);
    // An existing key may still change.
    assert.equal((await server.api('POST', `${path}/k0`, { body: { value: b64('changed') } })).status, 200);
  });

  it('follows the users API: 404 for unknown users and other orgs, 403 without a role, 401 without a token', async () => {
    const userId = await addHuman('meta-guarded');
    assertError(await server.api('POST', `${USERS}/123456789012345678/metadata/k`, { body: { value: b64('x') } }), 404);
    const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: { org: { name: 'Meta Other' }, human: { userName: 'other', profile: { firstName: 'O', lastName: 'T' }, email: { email: 'o@example.com' } } },
    });
    assertError(await server.api('GET', `${USERS}/${userId}/metadata/k`, { orgId: setup.body.orgId }), 404);
    assertError(await server.api('POST', `${USERS}/${userId}/metadata/k`, { body: { value: b64('x') }, token: nobodyPat }), 403);
    assertError(await server.api('POST', `${USERS}/${userId}/metadata/_search`, { body: {}, token: nobodyPat }), 403);
    assertError(await server.api('GET', `${USERS}/${userId}/metadata/k`, { token: null }), 401);
  });
});

describe('the scope urn:service:iam:user:metadata', () => {
  it('adds {key: base64 value} to userinfo and introspection, and nothing without the scope', async () => {
    const userId = await addHuman('meta-claims');
    await server.api('POST', `${USERS}/${userId}/metadata/department`, { body: { value: b64('research') } });
    await server.api('POST', `${USERS}/${userId}/metadata/level`, { body: { value: b64('3') } });
    const app = await passwordFormAppWithSecret(server.api, 'Metadata claims');
    const flow = (scope: string) =>
      runCodeFlow({ baseUrl: server.url, ...app, redirectUri: LOGIN_FORM_REDIRECT, scope }, { loginName: `meta-claims@${domain}`, password: PASSWORD });
    const claimsOf = async (token: string): Promise<{ userinfo: any; introspection: any }> => {
      const userinfo = await (await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } })).json();
      const introspection = await (
        await fetch(`${server.url}/oauth/v2/introspect`, {
          method: 'POST',
          headers: { authorization: basicHeader(app.clientId, app.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }),
        })
      ).json();
      return { userinfo, introspection };
    };
    const withScope = await claimsOf((await flow('openid urn:service:iam:user:metadata')).access_token);
    const expected = { department: b64('research'), level: b64('3') };
    assert.equal(withScope.userinfo.sub, userId);
    assert.deepEqual(withScope.userinfo['urn:service:iam:user:metadata'], expected);
    assert.equal(withScope.introspection.active, true);
    assert.deepEqual(withScope.introspection['urn:service:iam:user:metadata'], expected);
    const without = await claimsOf((await flow('openid')).access_token);
    assert.equal(without.userinfo.sub, userId);
    assert.equal(without.userinfo['urn:service:iam:user:metadata'], undefined);
    assert.equal(without.introspection['urn:service:iam:user:metadata'], undefined);
  });
});
