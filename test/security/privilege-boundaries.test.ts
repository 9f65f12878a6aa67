import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import * as client from 'openid-client';
import { apiClient, type Api } from '../support/api.ts';
import { readAdminPat } from '../support/server.ts';
import {
  JWT_BEARER,
  TYPE,
  expectError,
  expectTokens,
  startExchangeWorld,
  type App,
  type ExchangeWorld,
  type Machine,
  type SignInUser,
} from '../support/exchange.ts';

// The holes of docs/security.md, each tried exactly as it was found (an app
// of a second org, an ID token with openid only, an ORG_END_USER_IMPERSONATOR
// machine user), and the legitimate paths beside them.

const API_SCOPE = 'urn:service:iam:api';

let world: ExchangeWorld;
let asAdmin: Api;
let secondOrg: string;
/** An app of the second org: any org may register one. */
let foreignApp: App;
let foreignApp2: App;
/** An app of the first org that an instance owner opted in to the API. */
let consoleLike: App;
/** An app of the first org without the opt-in. */
let plainFirstOrgApp: App;
let admin: SignInUser;

/** A machine user of `orgId` holding `roles` there, with a PAT: the API as that org's owner sees it. */
async function orgOwnerApi(orgId: string, roles: string[] = ['ORG_OWNER']): Promise<{ api: Api; userId: string }> {
  const { userId } = await world.admin('POST', '/management/v1/users/machine', { userName: `owner-bot-${randomUUID().slice(0, 8)}`, name: 'owner bot' }, orgId);
  await world.admin('POST', '/management/v1/orgs/me/members', { userId, roles }, orgId);
  const pat = await world.admin('POST', `/management/v1/users/${userId}/pats`, {}, orgId);
  return { api: apiClient(world.server.url, pat.token, { orgId }), userId };
}

/** GET /admin/v1/signing_keys with a bearer token: the instance owner's own call. */
const signingKeysWith = (token: string) => asAdmin('GET', '/admin/v1/signing_keys', { token });

before(async () => {
  world = await startExchangeWorld();
  asAdmin = apiClient(world.server.url, readAdminPat(world.server.dataDir));
  await world.setTokenExchange(true);
  const setup = await world.admin('POST', '/admin/v1/orgs/_setup', {
    org: { name: 'Outsiders', domain: 'outsiders.example.test' },
    human: { userName: 'mallory', profile: { firstName: 'Mal', lastName: 'Lory' }, email: { email: 'mallory@outsiders.example.test', isEmailVerified: true } },
    roles: ['ORG_OWNER'],
  });
  secondOrg = setup.orgId;
  const [foreignProject, firstProject] = await Promise.all([world.createProject('Outsider project', secondOrg), world.createProject('Console project')]);
  [foreignApp, foreignApp2, consoleLike, plainFirstOrgApp] = await Promise.all([
    world.createApp(foreignProject, 'Outsider app', { orgId: secondOrg }),
    world.createApp(foreignProject, 'Outsider exchanger', { orgId: secondOrg }),
    world.createApp(firstProject, 'Console-like', { iamApiAccess: true }),
    world.createApp(firstProject, 'Shop'),
  ]);
  admin = await world.instanceAdmin();
});

after(async () => {
  await world?.stop();
});

describe('hole 1: an app of another org got admin-API tokens for whoever signed in through it', () => {
  test('the instance admin signing in at an app of a second org with the API scope gets a token without it, refused by the admin API (401)', async () => {
    const tokens = await world.codeFlow(foreignApp, admin, `openid profile ${API_SCOPE}`);
    assert.equal(tokens.scope?.split(' ').includes(API_SCOPE), false, `scope ${tokens.scope}`);
    assert.deepEqual(tokens.scope?.split(' ').sort(), ['openid', 'profile']);
    const answer = await signingKeysWith(tokens.access_token);
    assert.equal(answer.status, 401, answer.text);
    assert.equal(answer.body.code, 16);
    // Userinfo still works: the token is good for what the app may have.
    const info = await fetch(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(info.status, 200);
  });

  test('asking again (a second login, and a refresh of the grant) never brings the scope back', async () => {
    const first = await world.codeFlow(foreignApp, admin, `openid offline_access ${API_SCOPE}`);
    assert.ok(first.refresh_token);
    const refreshed = await client.refreshTokenGrant(world.configOf(foreignApp), first.refresh_token!);
    assert.equal(refreshed.scope?.split(' ').includes(API_SCOPE), false, `refreshed scope ${refreshed.scope}`);
    assert.equal((await signingKeysWith(refreshed.access_token)).status, 401);
    // Asking the refresh grant for the API scope explicitly: the grant never held it.
    const again = await world.codeFlow(foreignApp, admin, `openid offline_access ${API_SCOPE}`);
    const widened = await fetch(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${foreignApp.clientId}:${foreignApp.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: again.refresh_token!, scope: `openid ${API_SCOPE}` }).toString(),
    });
    assert.equal(widened.status, 400);
    assert.equal(((await widened.json()) as { error: string }).error, 'invalid_scope');
  });

  test('an app of the first org without iamApiAccess: no API scope either', async () => {
    const tokens = await world.codeFlow(plainFirstOrgApp, admin, `openid ${API_SCOPE}`);
    assert.equal(tokens.scope, 'openid');
    assert.equal((await signingKeysWith(tokens.access_token)).status, 401);
  });

  test("legitimate: an app of the first org with iamApiAccess gets the scope, and the admin API takes the token with the user's roles", async () => {
    const tokens = await world.codeFlow(consoleLike, admin, `openid ${API_SCOPE}`);
    assert.deepEqual(tokens.scope?.split(' ').sort(), ['openid', API_SCOPE].sort());
    const answer = await signingKeysWith(tokens.access_token);
    assert.equal(answer.status, 200, answer.text);
  });

  test('legitimate: machine users still get the scope through the JWT profile', async () => {
    const machine = await world.createMachine(`api-caller-${randomUUID().slice(0, 6)}`);
    await world.admin('POST', '/admin/v1/members', { userId: machine.userId, roles: ['IAM_OWNER'] });
    const tokens = await world.machineTokens(machine, `openid ${API_SCOPE}`);
    assert.equal((await signingKeysWith(tokens.access_token)).status, 200);
  });

  test('a token issued while an app had iamApiAccess stops working on the admin API once the flag is off', async () => {
    const project = await world.createProject('Short-lived opt-in');
    const app = await world.createApp(project, 'Opted in for a while', { iamApiAccess: true });
    const tokens = await world.codeFlow(app, admin, `openid ${API_SCOPE}`);
    assert.equal((await signingKeysWith(tokens.access_token)).status, 200);
    await world.admin('PUT', `/management/v1/projects/${project}/apps/${app.appId}`, { iamApiAccess: false });
    assert.equal((await signingKeysWith(tokens.access_token)).status, 401);
  });
});

describe('iamApiAccess: only an instance owner sets it, only on apps of the first org', () => {
  let ownerApi: Api;
  let foreignProject: string;
  before(async () => {
    ownerApi = (await orgOwnerApi(secondOrg)).api;
    foreignProject = foreignApp.projectId;
  });

  test('an org owner creating or changing an app with iamApiAccess true: 403, and the app is unchanged', async () => {
    const create = await ownerApi('POST', `/management/v1/projects/${foreignProject}/apps/oidc`, {
      body: { name: 'sneaky', redirectUris: ['https://rp.example.com/cb'], iamApiAccess: true },
    });
    assert.equal(create.status, 403, create.text);
    assert.equal(create.body.code, 7);
    const change = await ownerApi('PUT', `/management/v1/projects/${foreignProject}/apps/${foreignApp.appId}`, { body: { iamApiAccess: true } });
    assert.equal(change.status, 403, change.text);
    const read = await ownerApi('GET', `/management/v1/projects/${foreignProject}/apps/${foreignApp.appId}`);
    assert.equal(read.body.app.iamApiAccess, false);
  });

  test('an org owner may still send the value the app already has, and change other fields', async () => {
    const change = await ownerApi('PUT', `/management/v1/projects/${foreignProject}/apps/${foreignApp.appId}`, {
      body: { iamApiAccess: false, name: 'Outsider app' },
    });
    assert.equal(change.status, 200, change.text);
  });

  test('the instance owner setting it on an app of another org: 400 naming iamApiAccess', async () => {
    const change = await asAdmin('PUT', `/management/v1/projects/${foreignProject}/apps/${foreignApp.appId}`, {
      body: { iamApiAccess: true },
      orgId: secondOrg,
    });
    assert.equal(change.status, 400, change.text);
    assert.deepEqual(
      change.body.details[0].fieldViolations.map((v: { field: string }) => v.field),
      ['iamApiAccess'],
    );
  });

  test('a non-boolean value: 400', async () => {
    const change = await asAdmin('PUT', `/management/v1/projects/${consoleLike.projectId}/apps/${consoleLike.appId}`, { body: { iamApiAccess: 'yes' } });
    assert.equal(change.status, 400, change.text);
  });

  test('the app view shows the field; the default is false', async () => {
    const read = await asAdmin('GET', `/management/v1/projects/${consoleLike.projectId}/apps/${consoleLike.appId}`);
    assert.equal(read.body.app.iamApiAccess, true);
    const other = await asAdmin('GET', `/management/v1/projects/${plainFirstOrgApp.projectId}/apps/${plainFirstOrgApp.appId}`);
    assert.equal(other.body.app.iamApiAccess, false);
  });
});

describe('hole 2: token exchange widened scope', () => {
  test("the admin's ID token (openid only), exchanged by the other org's app it was issued to for openid + API + offline_access: invalid_scope", async () => {
    const signedIn = await world.codeFlow(foreignApp, admin, 'openid');
    assert.ok(signedIn.id_token);
    const outcome = await world.exchange(foreignApp, {
      subject_token: signedIn.id_token!,
      subject_token_type: TYPE.idToken,
      scope: `openid ${API_SCOPE} offline_access`,
    });
    expectError(outcome, 400, 'invalid_scope');
    for (const scope of [API_SCOPE, 'offline_access', 'openid profile']) {
      expectError(await world.exchange(foreignApp, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken, scope }), 400, 'invalid_scope');
    }
  });

  test('without a scope parameter the exchange gives openid only, and that token is refused by the admin API', async () => {
    const signedIn = await world.codeFlow(foreignApp, admin, 'openid');
    const body = expectTokens(await world.exchange(foreignApp, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken }));
    assert.equal(body.scope, 'openid');
    assert.equal(body.refresh_token, undefined);
    assert.equal((await signingKeysWith(body.access_token)).status, 401);
  });

  test('even an opted-in app cannot turn an ID token into an API token: the scope must be held by a token', async () => {
    const signedIn = await world.codeFlow(consoleLike, admin, `openid ${API_SCOPE}`);
    expectError(
      await world.exchange(consoleLike, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken, scope: `openid ${API_SCOPE}` }),
      400,
      'invalid_scope',
    );
  });

  test('an access token is exchanged only by the app it was issued to, or an app of the same project', async () => {
    const signedIn = await world.codeFlow(foreignApp, admin, 'openid profile');
    expectError(await world.exchange(consoleLike, { subject_token: signedIn.access_token, subject_token_type: TYPE.accessToken }), 400, 'invalid_grant');
    const own = expectTokens(await world.exchange(foreignApp, { subject_token: signedIn.access_token, subject_token_type: TYPE.accessToken, scope: 'openid' }));
    assert.equal(own.scope, 'openid');
    expectTokens(await world.exchange(foreignApp2, { subject_token: signedIn.access_token, subject_token_type: TYPE.accessToken, scope: 'openid' }));
  });

  test('legitimate: the API scope is passed on by a token holding it, to an app that may hold it', async () => {
    const signedIn = await world.codeFlow(consoleLike, admin, `openid ${API_SCOPE}`);
    const body = expectTokens(await world.exchange(consoleLike, { subject_token: signedIn.access_token, subject_token_type: TYPE.accessToken }));
    assert.deepEqual(body.scope.split(' ').sort(), ['openid', API_SCOPE].sort());
    assert.equal((await signingKeysWith(body.access_token)).status, 200);
  });
});

describe('hole 3: an end-user impersonator impersonated the admin', () => {
  let orgImpersonator: Machine;
  let iamImpersonator: Machine;
  let endUser: SignInUser;
  let orgManager: SignInUser;
  before(async () => {
    [orgImpersonator, iamImpersonator, endUser, orgManager] = await Promise.all([
      world.createMachine('org-imp'),
      world.createMachine('iam-imp'),
      world.createSignInUser('erin'),
      world.createSignInUser('manny', secondOrg),
    ]);
    await Promise.all([
      world.admin('POST', '/management/v1/orgs/me/members', { userId: orgImpersonator.userId, roles: ['ORG_END_USER_IMPERSONATOR'] }, world.defaultOrgId),
      world.admin('POST', '/admin/v1/members', { userId: iamImpersonator.userId, roles: ['IAM_END_USER_IMPERSONATOR'] }),
      world.admin('POST', '/management/v1/orgs/me/members', { userId: orgManager.userId, roles: ['ORG_USER_MANAGER'] }, secondOrg),
    ]);
  });

  const actorToken = async (machine: Machine) => (await world.machineTokens(machine, `openid ${API_SCOPE}`)).access_token;

  test('ORG_END_USER_IMPERSONATOR exchanging the admin\'s user id for an API token: invalid_request "impersonation not permitted", and no IAM_OWNER was made', async () => {
    const outcome = await world.exchange(consoleLike, {
      subject_token: admin.userId,
      subject_token_type: TYPE.userId,
      actor_token: await actorToken(orgImpersonator),
      actor_token_type: TYPE.accessToken,
      scope: `openid ${API_SCOPE}`,
    });
    expectError(outcome, 400, 'invalid_request', /impersonation not permitted/);
    const members = await world.server.running.db.query("SELECT 1 FROM memberships WHERE user_id = $1 AND scope = 'instance'", [orgImpersonator.userId]);
    assert.equal(members.rows.length, 0);
  });

  test('IAM_END_USER_IMPERSONATOR cannot impersonate an instance member either', async () => {
    const outcome = await world.exchange(consoleLike, {
      subject_token: admin.userId,
      subject_token_type: TYPE.userId,
      actor_token: await actorToken(iamImpersonator),
      actor_token_type: TYPE.accessToken,
    });
    expectError(outcome, 400, 'invalid_request', /impersonation not permitted/);
  });

  test('ORG_END_USER_IMPERSONATOR cannot impersonate a member of its org (any role)', async () => {
    const owner = await world.createSignInUser(`owner-${randomUUID().slice(0, 6)}`);
    await world.admin('POST', '/management/v1/orgs/me/members', { userId: owner.userId, roles: ['ORG_USER_MANAGER'] }, world.defaultOrgId);
    const outcome = await world.exchange(consoleLike, {
      subject_token: owner.userId,
      subject_token_type: TYPE.userId,
      actor_token: await actorToken(orgImpersonator),
      actor_token_type: TYPE.accessToken,
    });
    expectError(outcome, 400, 'invalid_request', /impersonation not permitted/);
  });

  test('an ID token is no actor, so it acts for no other user', async () => {
    const machineIdToken = (await world.machineTokens(iamImpersonator, 'openid')).id_token;
    const outcome = await world.exchange(consoleLike, {
      subject_token: endUser.userId,
      subject_token_type: TYPE.userId,
      actor_token: machineIdToken,
      actor_token_type: TYPE.idToken,
    });
    expectError(outcome, 400, 'invalid_request');
  });

  test('legitimate: impersonating a plain end user works, but a bare user id yields neither the API scope nor offline_access', async () => {
    const body = expectTokens(
      await world.exchange(consoleLike, {
        subject_token: endUser.userId,
        subject_token_type: TYPE.userId,
        actor_token: await actorToken(orgImpersonator),
        actor_token_type: TYPE.accessToken,
      }),
    );
    assert.equal(body.scope, 'openid');
    const info = await world.introspect(consoleLike, body.access_token);
    assert.equal(info.sub, endUser.userId);
    assert.deepEqual(info.act, { sub: orgImpersonator.userId });
    for (const scope of [`openid ${API_SCOPE}`, 'openid offline_access']) {
      const outcome = await world.exchange(consoleLike, {
        subject_token: endUser.userId,
        subject_token_type: TYPE.userId,
        actor_token: await actorToken(orgImpersonator),
        actor_token_type: TYPE.accessToken,
        scope,
      });
      expectError(outcome, 400, 'invalid_scope');
    }
  });

  test('writes made with an impersonation token record the actor (creator) and the user acted for', async () => {
    // manny manages users of the second org; he signed in at the opted-in app, and the IAM impersonator acts for him.
    const own = await world.codeFlow(consoleLike, orgManager, `openid ${API_SCOPE}`);
    const body = expectTokens(
      await world.exchange(consoleLike, {
        subject_token: own.access_token,
        subject_token_type: TYPE.accessToken,
        actor_token: await actorToken(iamImpersonator),
        actor_token_type: TYPE.accessToken,
      }),
    );
    assert.ok(body.scope.split(' ').includes(API_SCOPE), body.scope);
    const created = await asAdmin('POST', '/management/v1/users/human', {
      token: body.access_token,
      orgId: secondOrg,
      body: { userName: `made-by-${randomUUID().slice(0, 6)}`, profile: { firstName: 'New', lastName: 'User' }, email: { email: 'new@example.com' } },
    });
    assert.equal(created.status, 200, created.text);
    const { rows } = await world.server.running.db.query<{ creator: string; impersonated_user_id: string }>(
      'SELECT creator, impersonated_user_id FROM events WHERE position = $1',
      [created.body.details.sequence],
    );
    assert.deepEqual(rows[0], { creator: iamImpersonator.userId, impersonated_user_id: orgManager.userId });
    // The same call with manny's own token: no impersonation recorded.
    const direct = await asAdmin('POST', '/management/v1/users/human', {
      token: own.access_token,
      orgId: secondOrg,
      body: { userName: `made-by-manny-${randomUUID().slice(0, 6)}`, profile: { firstName: 'New', lastName: 'User' }, email: { email: 'new@example.com' } },
    });
    assert.equal(direct.status, 200, direct.text);
    const plain = await world.server.running.db.query('SELECT creator, impersonated_user_id FROM events WHERE position = $1', [direct.body.details.sequence]);
    assert.deepEqual(plain.rows[0], { creator: orgManager.userId, impersonated_user_id: null });
  });

  test('an actor that is no longer active: invalid_grant', async () => {
    const gone = await world.createMachine(`gone-${randomUUID().slice(0, 6)}`);
    await world.admin('POST', '/admin/v1/members', { userId: gone.userId, roles: ['IAM_END_USER_IMPERSONATOR'] });
    const token = await actorToken(gone);
    await world.admin('DELETE', `/management/v1/users/${gone.userId}`);
    const outcome = await world.exchange(consoleLike, {
      subject_token: endUser.userId,
      subject_token_type: TYPE.userId,
      actor_token: token,
      actor_token_type: TYPE.accessToken,
    });
    assert.equal(outcome.answer.status, 400);
    assert.ok(['invalid_grant', 'invalid_request'].includes(outcome.answer.body.error), outcome.answer.text);
  });
});

describe('members of another org', () => {
  test('an org owner adding the instance admin (a user of another org) to their org: 403; the instance owner may', async () => {
    const { api: ownerApi } = await orgOwnerApi(secondOrg);
    const refused = await ownerApi('POST', '/management/v1/orgs/me/members', { body: { userId: admin.userId, roles: ['ORG_OWNER'] } });
    assert.equal(refused.status, 403, refused.text);
    const members = await world.server.running.db.query("SELECT 1 FROM memberships WHERE user_id = $1 AND scope = 'org' AND scope_id = $2", [
      admin.userId,
      secondOrg,
    ]);
    assert.equal(members.rows.length, 0);
    // Users of the owner's own org are fine.
    const local = await world.createSignInUser(`local-${randomUUID().slice(0, 6)}`, secondOrg);
    assert.equal((await ownerApi('POST', '/management/v1/orgs/me/members', { body: { userId: local.userId, roles: ['ORG_USER_MANAGER'] } })).status, 200);
    const byInstanceOwner = await asAdmin('POST', '/management/v1/orgs/me/members', {
      body: { userId: admin.userId, roles: ['ORG_USER_MANAGER'] },
      orgId: secondOrg,
    });
    assert.equal(byInstanceOwner.status, 200, byInstanceOwner.text);
  });

  test('an owner of both orgs may add a user of one org to the other', async () => {
    const { api: bothApi, userId: both } = await orgOwnerApi(secondOrg);
    await world.admin('POST', '/management/v1/orgs/me/members', { userId: both, roles: ['ORG_OWNER'] }, world.defaultOrgId);
    const member = await world.createSignInUser(`member-${randomUUID().slice(0, 6)}`, secondOrg);
    const added = await bothApi('POST', '/management/v1/orgs/me/members', {
      body: { userId: member.userId, roles: ['ORG_USER_MANAGER'] },
      orgId: world.defaultOrgId,
    });
    assert.equal(added.status, 200, added.text);
  });
});

describe('JWT profile assertions without jti', () => {
  test('the same assertion presented twice: the second is refused as a replay (invalid_grant)', async () => {
    const machine = await world.createMachine(`no-jti-${randomUUID().slice(0, 6)}`);
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: machine.keyId })
      .setIssuer(machine.userId)
      .setSubject(machine.userId)
      .setAudience(world.issuer)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(machine.privateKey);
    const send = () =>
      fetch(`${world.server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion, scope: 'openid' }).toString(),
      });
    const first = await send();
    assert.equal(first.status, 200, await first.clone().text());
    const second = await send();
    assert.equal(second.status, 400);
    assert.deepEqual(((await second.json()) as { error: string }).error, 'invalid_grant');
  });
});
