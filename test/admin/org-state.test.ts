import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { apiClient, request, type Api } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { insertPat, type TestServer } from '../support/server.ts';
import { FlowError, type TokenSet } from '../support/code-flow.ts';
import { startExchangeWorld, TYPE, type App, type ExchangeWorld, type Machine, type SignInUser } from '../support/exchange.ts';
import { LOGIN_FORM_REDIRECT, passwordForm, passwordFormApp } from '../support/login-form.ts';

// docs/api/orgs.md: an org deactivated (`org.deactivated`) stops everything
// of its own — its users sign in on no path (password, the machine grants,
// PATs, token exchange, refresh), their tokens end (introspection inactive,
// userinfo and the API 401), its apps start no sign-in — and reactivated
// (`org.reactivated`) it all works again. Each path is replayed before,
// during and after.

let world: ExchangeWorld;
let api: Api;
let dormantOrgId: string;
let outsiderToken: string;
let insiderOwnerToken: string;
let managerToken: string;
let dora: SignInUser;
let firstApp: App;
let dormantApp: App;
let dormantLoginClientId: string;
let firstLoginClientId: string;
let robot: Machine;
let robotSecret: { clientId: string; clientSecret: string };
let robotPat: string;
let before_: { dora: TokenSet; robotCc: string; robotJwt: { access_token: string } };

const ORGS = '/management/v1/orgs/me';
const SCOPE = 'openid offline_access';
const API_SCOPE = 'urn:service:iam:api';

const server = () => world.server as TestServer;

async function setupOrg(name: string, userName: string, roles: string[]): Promise<{ orgId: string; userId: string; token: string }> {
  const body = {
    org: { name },
    human: {
      userName,
      profile: { firstName: 'F', lastName: 'L' },
      email: { email: `${userName}@example.com`, isEmailVerified: true },
      password: 'S3cure-Passw0rd!',
    },
    roles,
  };
  const res = await api('POST', '/admin/v1/orgs/_setup', { body });
  assert.equal(res.status, 200, res.text);
  return { orgId: res.json.orgId, userId: res.json.userId, token: await insertPat(server(), res.json.userId) };
}

async function addMember(orgId: string, userId: string, roles: string[]): Promise<void> {
  const res = await api('POST', `${ORGS}/members`, { body: { userId, roles }, orgId });
  assert.equal(res.status, 200, res.text);
}

async function orgState(orgId: string): Promise<string> {
  const res = await api('POST', '/admin/v1/orgs/_search', { body: { query: { limit: 1000 } } });
  return res.json.result.find((o: { id: string }) => o.id === orgId)?.state;
}

async function eventCount(): Promise<string> {
  const { rows } = await server().running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM events');
  return rows[0]!.n;
}

/** Runs refused calls and proves that the org and the event log stayed as they were. */
async function assertNothingChanged(refused: () => Promise<void>): Promise<void> {
  const row = async () => JSON.stringify((await server().running.db.query('SELECT * FROM orgs ORDER BY id')).rows);
  const [orgs, events] = [await row(), await eventCount()];
  await refused();
  assert.equal(await row(), orgs, 'no org changed');
  assert.equal(await eventCount(), events, 'no event was written');
}

/** The OAuth error of a rejected openid-client call: of the body, or of the WWW-Authenticate challenge (a 401). */
async function oauthError(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    const { error, cause } = err as { error?: string; cause?: Array<{ parameters?: { error?: string } }> };
    return String(error ?? (Array.isArray(cause) ? cause[0]?.parameters?.error : undefined) ?? (err as Error).message);
  }
  return 'no error';
}

async function userinfoStatus(accessToken: string): Promise<number> {
  const res = await request(world.metadata.userinfo_endpoint!, { headers: { authorization: `Bearer ${accessToken}` } });
  return res.status;
}

const jwtBearer = () => world.machineTokens(robot, `openid ${API_SCOPE}`);
const clientCredentials = () =>
  client.clientCredentialsGrant(world.configOf({ clientId: robotSecret.clientId, auth: client.ClientSecretBasic(robotSecret.clientSecret) }), {
    scope: API_SCOPE,
  });
const robotView = (token: string) => api('GET', `/management/v1/users/${robot.userId}`, { token, orgId: dormantOrgId });
const authorizeAt = (clientId: string) =>
  request(
    `${world.server.url}/oauth/v2/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: LOGIN_FORM_REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    })}`,
  );

before(async () => {
  world = await startExchangeWorld();
  api = apiClient(world.server.url, server().pat);
  await world.setTokenExchange(true);
  // The owner of "Outside" founds "Dormant": an ORG_OWNER of Dormant who is no user of it.
  const outside = await setupOrg('Outside', 'oscar', ['ORG_OWNER']);
  outsiderToken = outside.token;
  const created = await api('POST', '/management/v1/orgs', { token: outsiderToken, body: { name: 'Dormant' } });
  assert.equal(created.status, 200, created.text);
  dormantOrgId = created.json.id;
  const insider = await world.createSignInUser('ingrid', dormantOrgId);
  await addMember(dormantOrgId, insider.userId, ['ORG_OWNER']);
  insiderOwnerToken = await insertPat(server(), insider.userId);
  const manager = await world.createSignInUser('manny', dormantOrgId);
  await addMember(dormantOrgId, manager.userId, ['ORG_USER_MANAGER']);
  managerToken = await insertPat(server(), manager.userId);

  dora = await world.createSignInUser('dora', dormantOrgId);
  firstApp = await world.createApp(await world.createProject('First Shop'), 'first shop');
  dormantApp = await world.createApp(await world.createProject('Dormant Shop', dormantOrgId), 'dormant shop', { orgId: dormantOrgId });
  dormantLoginClientId = await passwordFormApp(api, 'Dormant Login', dormantOrgId);
  firstLoginClientId = await passwordFormApp(api, 'First Login');
  robot = await world.createMachine('dormant-robot', 'ACCESS_TOKEN_TYPE_BEARER', dormantOrgId);
  await addMember(dormantOrgId, robot.userId, ['ORG_USER_MANAGER']);
  robotSecret = await world.admin('PUT', `/management/v1/users/${robot.userId}/secret`, {}, dormantOrgId);
  robotPat = (await world.admin('POST', `/management/v1/users/${robot.userId}/pats`, {}, dormantOrgId)).token;

  before_ = { dora: await world.codeFlow(firstApp, dora, SCOPE), robotCc: (await clientCredentials()).access_token, robotJwt: await jwtBearer() };
});

after(async () => {
  await world?.stop();
});

describe('POST /management/v1/orgs/me/_deactivate, _reactivate: refusals', () => {
  test('bad bodies 400; no token 401; unknown org 404; nothing changed', async () => {
    await assertNothingChanged(async () => {
      for (const path of ['_deactivate', '_reactivate']) {
        assertInvalid(await api('POST', `${ORGS}/${path}`, { body: { reason: 'x' }, orgId: dormantOrgId }), ['reason'], { atLeast: true });
        assert.equal((await api('POST', `${ORGS}/${path}`, { body: 'x', orgId: dormantOrgId })).status, 400);
        assert.equal((await api('POST', `${ORGS}/${path}`, { body: [], orgId: dormantOrgId })).status, 400);
        assert.equal((await api('POST', `${ORGS}/${path}`, { raw: '{"a":', orgId: dormantOrgId })).status, 400);
        assert.equal((await api('POST', `${ORGS}/${path}`, { raw: '{}', contentType: 'text/plain', orgId: dormantOrgId })).status, 400);
        assertError(await api('POST', `${ORGS}/${path}`, { token: null, orgId: dormantOrgId }), 401);
        assertError(await api('POST', `${ORGS}/${path}`, { token: 'not-a-token', orgId: dormantOrgId }), 401);
        assertError(await api('POST', `${ORGS}/${path}`, { orgId: '999999999999999999' }), 404);
        assertError(await api('POST', `${ORGS}/${path}`, { orgId: 'x'.repeat(65) }), 404);
      }
    });
  });

  test('an ORG_USER_MANAGER of the org, or the owner of another org, is 403; nothing changed', async () => {
    const bystander = await setupOrg('Bystander', 'bea', ['ORG_OWNER']);
    await assertNothingChanged(async () => {
      assertError(await api('POST', `${ORGS}/_deactivate`, { token: managerToken }), 403);
      assertError(await api('POST', `${ORGS}/_deactivate`, { token: bystander.token, orgId: dormantOrgId }), 403);
      assertError(await api('POST', `${ORGS}/_reactivate`, { token: bystander.token, orgId: dormantOrgId }), 403);
      // Oscar owns Dormant and Outside, not the first org.
      assertError(await api('POST', `${ORGS}/_deactivate`, { token: outsiderToken, orgId: world.defaultOrgId }), 403);
    });
  });

  test("the instance's first org cannot be deactivated, nor an org by its own user (400)", async () => {
    await assertNothingChanged(async () => {
      const first = await api('POST', `${ORGS}/_deactivate`);
      assert.equal(first.status, 400, first.text);
      assert.match(first.json.message, /first organization/);
      const own = await api('POST', `${ORGS}/_deactivate`, { token: insiderOwnerToken });
      assert.equal(own.status, 400, own.text);
      assert.match(own.json.message, /its own users/);
    });
    assert.equal(await orgState(world.defaultOrgId), 'ORG_STATE_ACTIVE');
  });

  test('reactivating an active org is 400, nothing changed', async () => {
    await assertNothingChanged(async () => {
      assert.equal((await api('POST', `${ORGS}/_reactivate`, { orgId: dormantOrgId })).status, 400);
    });
  });
});

describe('an inactive org', () => {
  test('an ORG_OWNER from outside deactivates it (org.deactivated); twice is 400', async () => {
    const res = await api('POST', `${ORGS}/_deactivate`, { token: outsiderToken, orgId: dormantOrgId });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, dormantOrgId);
    assert.equal(await orgState(dormantOrgId), 'ORG_STATE_INACTIVE');
    await assertNothingChanged(async () => {
      assert.equal((await api('POST', `${ORGS}/_deactivate`, { token: outsiderToken, orgId: dormantOrgId })).status, 400);
    });
  });

  test("its users' existing tokens end: introspection inactive, userinfo 401, refresh invalid_grant, the API 401", async () => {
    assert.deepEqual(await world.introspect(firstApp, before_.dora.access_token), { active: false });
    assert.deepEqual(await world.introspect(firstApp, before_.dora.refresh_token!), { active: false });
    assert.equal(await userinfoStatus(before_.dora.access_token), 401);
    assert.equal(await oauthError(client.refreshTokenGrant(world.configOf(firstApp), before_.dora.refresh_token!)), 'invalid_grant');
    assertError(await robotView(before_.robotCc), 401);
    assertError(await robotView(before_.robotJwt.access_token), 401);
    assertError(await robotView(robotPat), 401);
    assert.deepEqual(await world.introspect(firstApp, before_.robotJwt.access_token), { active: false });
  });

  test('its users sign in on no path: password, JWT profile, client_credentials, token exchange', async () => {
    await assert.rejects(world.codeFlow(firstApp, dora, SCOPE), FlowError, 'no password sign-in at an app of another org');
    const form = await passwordForm(world.server.url, firstLoginClientId);
    const answer = await form('dora@dormant.example.test', dora.password);
    assert.notEqual(answer.status, 303, 'the login answers as for a wrong password');
    assert.equal(await oauthError(jwtBearer()), 'invalid_grant');
    assert.equal(await oauthError(clientCredentials()), 'invalid_client');
    const exchanged = await world.exchange(firstApp, { subject_token: before_.dora.access_token, subject_token_type: TYPE.accessToken });
    assert.equal(exchanged.answer.status, 400, exchanged.answer.text);
    assert.equal(exchanged.answer.body.error, 'invalid_grant');
  });

  test('its apps start no sign-in and authenticate no client, even for users of active orgs', async () => {
    const start = await authorizeAt(dormantLoginClientId);
    assert.equal(start.status, 400, 'the engine knows no such client');
    assert.match(start.text, /invalid_client/);
    assert.equal(await oauthError(world.introspect(dormantApp, before_.robotCc)), 'invalid_client');
  });

  test('an IAM_OWNER still manages it: reads and writes through the API', async () => {
    const view = await api('GET', `/management/v1/users/${dora.userId}`, { orgId: dormantOrgId });
    assert.equal(view.status, 200, view.text);
    assert.equal(view.json.user.state, 'USER_STATE_ACTIVE', "the user's own state is kept");
  });
});

describe('reactivated', () => {
  test('an IAM_OWNER reactivates it (org.reactivated); everything works again', async () => {
    const res = await api('POST', `${ORGS}/_reactivate`, { orgId: dormantOrgId });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details, dormantOrgId);
    assert.equal(await orgState(dormantOrgId), 'ORG_STATE_ACTIVE');
    const { rows } = await server().running.db.query<{ event_type: string }>(
      "SELECT event_type FROM events WHERE aggregate_id = $1 AND event_type LIKE 'org.%activated' ORDER BY position",
      [dormantOrgId],
    );
    assert.deepEqual(
      rows.map((r) => r.event_type),
      ['org.deactivated', 'org.reactivated'],
    );

    // Unexpired tokens count again (nothing revoked them), and every path signs in.
    assert.equal((await world.introspect(firstApp, before_.dora.access_token)).active, true);
    assert.equal(await userinfoStatus(before_.dora.access_token), 200);
    assert.ok((await client.refreshTokenGrant(world.configOf(firstApp), before_.dora.refresh_token!)).access_token);
    assert.equal((await robotView(robotPat)).status, 200);
    assert.equal((await robotView(before_.robotCc)).status, 200);
    const fresh = await world.codeFlow(firstApp, dora, SCOPE);
    assert.equal((await world.introspect(firstApp, fresh.access_token)).active, true);
    assert.equal((await robotView((await jwtBearer()).access_token)).status, 200);
    assert.equal((await robotView((await clientCredentials()).access_token)).status, 200);
    const exchanged = await world.exchange(firstApp, { subject_token: fresh.access_token, subject_token_type: TYPE.accessToken });
    assert.equal(exchanged.answer.status, 200, exchanged.answer.text);
    assert.equal((await authorizeAt(dormantLoginClientId)).status, 303);
  });
});
