import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT, jwtVerify } from 'jose';
import { apiClient, request, type ApiResponse } from '../support/api.ts';
import { basicAuth } from '../support/code-flow.ts';
import { passwordForm } from '../support/login-form.ts';
import { JWT_BEARER, TYPE, expectError, expectTokens, startExchangeWorld, type App, type ExchangeWorld, type SignInUser } from '../support/exchange.ts';

// What a token is worth (docs/security.md, "What ends a token"), each hole
// tried exactly as the second review found it, beside the legitimate path:
// tokens of a locked or removed user, an ID token of another org's app as
// exchange subject or as actor, exchanged tokens outliving the end of the
// user's sessions, and a JWT profile assertion without jti replayed in
// another spelling.

const API_SCOPE = 'urn:service:iam:api';
const REDIRECT_URI = 'https://rp.example.com/cb';

let world: ExchangeWorld;
/** An app of the first org opted in to the API, and a second app of its project. */
let apiApp: App;
let sameProjectApp: App;
/** An app of another org. */
let foreignApp: App;
let secondOrg: string;

before(async () => {
  world = await startExchangeWorld();
  await world.setTokenExchange(true);
  const setup = await world.admin('POST', '/admin/v1/orgs/_setup', {
    org: { name: 'Org Y', domain: 'org-y.example.test' },
    human: { userName: 'yvonne', profile: { firstName: 'Yvonne', lastName: 'Y' }, email: { email: 'yvonne@org-y.example.test', isEmailVerified: true } },
  });
  secondOrg = setup.orgId;
  const [firstProject, foreignProject] = await Promise.all([world.createProject('Org X project'), world.createProject('Org Y project', secondOrg)]);
  [apiApp, sameProjectApp, foreignApp] = await Promise.all([
    world.createApp(firstProject, 'X console', { iamApiAccess: true }),
    world.createApp(firstProject, 'X shop'),
    world.createApp(foreignProject, 'Y exchanger', { orgId: secondOrg }),
  ]);
  // One wrong password locks (until an admin unlocks).
  await world.admin('PUT', '/admin/v1/policies/lockout', { maxPasswordAttempts: 1, lockoutDurationSeconds: 0 });
});

after(async () => {
  await world?.stop();
});

const userinfo = (token: string) => request(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
const adminApi = (token: string, path: string) => apiClient(world.server.url, token)('GET', path);

/** Introspection by `app` as it answers on the wire. */
async function introspect(app: App, token: string): Promise<Record<string, unknown>> {
  const answer = await request(`${world.server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(app.clientId, app.clientSecret!) },
    body: new URLSearchParams({ token }),
  });
  assert.equal(answer.status, 200, answer.text);
  return answer.body;
}

/** A user of the first org who is ORG_OWNER there, signed in at the API app: an access token the admin API takes. */
async function ownerSignedIn(): Promise<{ user: SignInUser; accessToken: string }> {
  const user = await world.createSignInUser(`owner-${randomUUID().slice(0, 8)}`);
  await world.admin('POST', '/management/v1/orgs/me/members', { userId: user.userId, roles: ['ORG_OWNER'] }, world.defaultOrgId);
  const tokens = await world.codeFlow(apiApp, user, `openid profile ${API_SCOPE}`);
  return { user, accessToken: tokens.access_token };
}

/** One wrong password at the login page locks the user (the policy above). */
async function lockByWrongPassword(user: SignInUser): Promise<void> {
  const form = await passwordForm(world.server.url, apiApp.clientId, {}, REDIRECT_URI);
  const wrong = await form(user.loginName, 'not-the-password');
  assert.ok(wrong.status < 500, wrong.text);
  const { rows } = await world.server.running.db.query<{ state: string }>('SELECT state FROM users WHERE id = $1', [user.userId]);
  assert.equal(rows[0]?.state, 'locked');
}

function assertInactive(answer: Record<string, unknown>, what: string): void {
  assert.deepEqual(answer, { active: false }, `${what}: introspection answers {"active": false} and nothing else`);
}

describe('tokens end with their user', () => {
  test('a locked user: introspection active false, userinfo 401, admin API 401 — for opaque and JWT access tokens; after the unlock they count again', async () => {
    const { user, accessToken } = await ownerSignedIn();
    const jwtApp = await world.createApp(apiApp.projectId, `X jwt ${randomUUID().slice(0, 4)}`, { accessTokenType: 'OIDC_TOKEN_TYPE_JWT', iamApiAccess: true });
    const jwtToken = (await world.codeFlow(jwtApp, user, `openid profile ${API_SCOPE}`)).access_token;
    assert.equal(jwtToken.split('.').length, 3, 'a JWT access token');
    const self = `/management/v1/users/${user.userId}`;
    for (const token of [accessToken, jwtToken]) {
      assert.equal((await introspect(apiApp, token)).active, true);
      assert.equal((await userinfo(token)).status, 200);
      const before = await adminApi(token, self);
      assert.equal(before.status, 200, before.text);
    }

    await lockByWrongPassword(user);
    for (const [what, token] of [
      ['opaque', accessToken],
      ['JWT', jwtToken],
    ] as const) {
      assertInactive(await introspect(apiApp, token), `${what} token of a locked user`);
      assert.equal((await userinfo(token)).status, 401, `${what}: userinfo`);
      const refused = await adminApi(token, self);
      assert.equal(refused.status, 401, `${what}: admin API ${refused.text}`);
      assert.equal(refused.body.code, 16);
    }

    await world.admin('POST', `/management/v1/users/${user.userId}/_unlock`, {});
    assert.equal((await introspect(apiApp, accessToken)).active, true, 'the lock ended, the token was never revoked');
    assert.equal((await adminApi(accessToken, self)).status, 200);
  });

  test('a removed user: its tokens are inactive at introspection and refused at userinfo', async () => {
    const user = await world.createSignInUser(`gone-${randomUUID().slice(0, 8)}`);
    const tokens = await world.codeFlow(apiApp, user, 'openid profile offline_access');
    assert.equal((await introspect(apiApp, tokens.access_token)).active, true);
    assert.equal((await introspect(apiApp, tokens.refresh_token!)).active, true);
    await world.admin('DELETE', `/management/v1/users/${user.userId}`);
    assertInactive(await introspect(apiApp, tokens.access_token), 'access token of a removed user');
    assertInactive(await introspect(apiApp, tokens.refresh_token!), 'refresh token of a removed user');
    assert.equal((await userinfo(tokens.access_token)).status, 401);
  });

  test("a machine user's PAT and client credentials token stop at the admin API once it is removed", async () => {
    const { userId } = await world.admin('POST', '/management/v1/users/machine', { userName: `robot-${randomUUID().slice(0, 6)}`, name: 'robot' });
    await world.admin('POST', '/management/v1/orgs/me/members', { userId, roles: ['ORG_OWNER'] }, world.defaultOrgId);
    const pat = (await world.admin('POST', `/management/v1/users/${userId}/pats`, {})).token as string;
    const secret = await world.admin('PUT', `/management/v1/users/${userId}/secret`, {});
    const issued = await request(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(secret.clientId, secret.clientSecret) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: `openid ${API_SCOPE}` }),
    });
    assert.equal(issued.status, 200, issued.text);
    const self = `/management/v1/users/${userId}`;
    for (const token of [pat, issued.body.access_token]) assert.equal((await adminApi(token, self)).status, 200);
    await world.admin('DELETE', self);
    for (const token of [pat, issued.body.access_token]) assert.equal((await adminApi(token, self)).status, 401);
  });
});

describe('token exchange: an ID token is worth what its audience makes it', () => {
  test('the reproduction: an ID token issued to an app of org X, exchanged by an app of org Y: invalid_grant', async () => {
    const user = await world.createSignInUser(`xavier-${randomUUID().slice(0, 6)}`);
    const signedIn = await world.codeFlow(apiApp, user, 'openid profile');
    assert.ok(signedIn.id_token);
    expectError(
      await world.exchange(foreignApp, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken }),
      400,
      'invalid_grant',
      /not issued to this client/,
    );
    // Strictly its aud: another app of the same project is not the audience either.
    expectError(await world.exchange(sameProjectApp, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken }), 400, 'invalid_grant');
    // Legitimate: the app it was issued to.
    const own = expectTokens(await world.exchange(apiApp, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken }));
    assert.equal((await introspect(apiApp, own.access_token)).sub, user.userId);
  });

  test('an ID token is never an actor_token: not for another user, not for its own user (invalid_request)', async () => {
    const impersonator = await world.createMachine(`imp-${randomUUID().slice(0, 6)}`);
    await world.admin('POST', '/admin/v1/members', { userId: impersonator.userId, roles: ['IAM_END_USER_IMPERSONATOR'] });
    const endUser = await world.createSignInUser(`erin-${randomUUID().slice(0, 6)}`);
    const machineIdToken = (await world.machineTokens(impersonator, 'openid')).id_token;
    // Another org's app held the end user's ID token: as actor it impersonated.
    const endUserIdToken = (await world.codeFlow(apiApp, endUser, 'openid')).id_token!;
    for (const [subject, actor] of [
      [endUser.userId, machineIdToken],
      [endUser.userId, endUserIdToken],
      [impersonator.userId, machineIdToken],
    ] as const) {
      const outcome = await world.exchange(foreignApp, {
        subject_token: subject,
        subject_token_type: TYPE.userId,
        actor_token: actor,
        actor_token_type: TYPE.idToken,
      });
      expectError(outcome, 400, 'invalid_request', /ID token is no actor_token/);
    }
    // Legitimate: the impersonator's access token as actor.
    const actorToken = (await world.machineTokens(impersonator, 'openid')).access_token;
    const body = expectTokens(
      await world.exchange(foreignApp, {
        subject_token: endUser.userId,
        subject_token_type: TYPE.userId,
        actor_token: actorToken,
        actor_token_type: TYPE.accessToken,
      }),
    );
    assert.deepEqual((await introspect(foreignApp, body.access_token)).act, { sub: impersonator.userId });
  });
});

describe('token exchange: exchanged tokens end with the session of the token they came from', () => {
  test('the reproduction: after DELETE /management/v1/users/{id}/sessions the original and the exchanged tokens are both 401 at userinfo and inactive', async () => {
    const user = await world.createSignInUser(`sam-${randomUUID().slice(0, 6)}`);
    const original = await world.codeFlow(apiApp, user, 'openid profile offline_access');
    const exchanged = expectTokens(await world.exchange(apiApp, { subject_token: original.access_token, subject_token_type: TYPE.accessToken }));
    assert.ok(exchanged.refresh_token, 'offline_access passed on: a refresh token too');
    const viaIdToken = expectTokens(
      await world.exchange(apiApp, { subject_token: original.access_token, subject_token_type: TYPE.accessToken, scope: 'openid' }),
    );
    for (const token of [original.access_token, exchanged.access_token, viaIdToken.access_token]) {
      assert.equal((await userinfo(token)).status, 200);
      assert.equal((await introspect(apiApp, token)).active, true);
    }

    await world.admin('DELETE', `/management/v1/users/${user.userId}/sessions`);

    for (const [what, token] of [
      ['original', original.access_token],
      ['exchanged', exchanged.access_token],
      ['exchanged (narrower)', viaIdToken.access_token],
    ] as const) {
      assert.equal((await userinfo(token)).status, 401, `${what}: userinfo`);
      assertInactive(await introspect(apiApp, token), what);
    }
    assertInactive(await introspect(apiApp, exchanged.refresh_token), 'exchanged refresh token');
    const refreshed = await request(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(apiApp.clientId, apiApp.clientSecret!) },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: exchanged.refresh_token }),
    });
    assert.equal(refreshed.status, 400, refreshed.text);
    assert.equal(refreshed.body.error, 'invalid_grant');
  });

  test('legitimate: exchanged tokens of another session of the user, and tokens exchanged from a machine token (no session), live on', async () => {
    const user = await world.createSignInUser(`tess-${randomUUID().slice(0, 6)}`);
    const first = await world.codeFlow(apiApp, user, 'openid profile');
    const exchanged = expectTokens(await world.exchange(apiApp, { subject_token: first.access_token, subject_token_type: TYPE.accessToken }));
    const refreshedSubject = await world.codeFlow(apiApp, user, 'openid profile offline_access');
    const stillGood = expectTokens(await world.exchange(apiApp, { subject_token: refreshedSubject.access_token, subject_token_type: TYPE.accessToken }));
    // A machine user's own token: it comes from no session, so nothing ends it but its own expiry.
    const machine = await world.createMachine(`m-${randomUUID().slice(0, 6)}`);
    const machineSubject = await world.tokenIssuedTo(apiApp, machine.userId, 'openid profile');
    const machineExchanged = expectTokens(await world.exchange(apiApp, { subject_token: machineSubject, subject_token_type: TYPE.accessToken }));
    for (const token of [exchanged.access_token, stillGood.access_token, machineExchanged.access_token]) {
      assert.equal((await introspect(apiApp, token)).active, true);
    }
  });
});

describe('JWT profile assertions without jti: another spelling is the same assertion', () => {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  /** The signature's last character with its lowest bit flipped: one of the unused low bits for a 256-byte RSA signature (342 characters, 4 bits spare). */
  const flipLastBit = (jwt: string) => jwt.slice(0, -1) + ALPHABET[ALPHABET.indexOf(jwt.at(-1)!) ^ 1];
  const padded = (jwt: string) => `${jwt}==`;

  const send = (assertion: string): Promise<ApiResponse> =>
    request(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: JWT_BEARER, assertion, scope: 'openid' }),
    });

  /** A jti-less assertion; `lifetime` (seconds) tells apart assertions signed within the same second. */
  function assertion(userId: string, key: KeyObject, kid: string, alg: 'RS256' | 'ES256' = 'RS256', lifetime = 300): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg, kid })
      .setIssuer(userId)
      .setSubject(userId)
      .setAudience(world.issuer)
      .setIssuedAt()
      .setExpirationTime(`${lifetime}s`)
      .sign(key);
  }

  function assertReplayRefused(answer: ApiResponse, what: string): void {
    assert.equal(answer.status, 400, `${what}: ${answer.text}`);
    assert.equal(answer.body.error, 'invalid_grant', what);
    assert.match(String(answer.body.error_description), /already used/, what);
  }

  test('the reproduction: the unused low bits of the signature flipped, or == appended, are refused as replays — both ways round, three times each', async () => {
    const machine = await world.createMachine(`nojti-${randomUUID().slice(0, 6)}`);
    const publicKey = createPublicKey(machine.privateKey);
    let signed = 0;
    for (const [name, respell] of [
      ['flipped low bits', flipLastBit],
      ['appended ==', padded],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        const original = await assertion(machine.userId, machine.privateKey, machine.keyId, 'RS256', 300 + signed++);
        const variant = respell(original);
        assert.notEqual(variant, original);
        // The verifier takes the other spelling for a valid JWT: it decodes to the same signature bytes.
        await jwtVerify(variant, publicKey, { issuer: machine.userId });
        const [first, second] = i % 2 === 0 ? [original, variant] : [variant, original];
        assert.equal((await send(first)).status, 200, `${name} #${i}: the first presentation is accepted`);
        assertReplayRefused(await send(second), `${name} #${i}`);
      }
    }
  });

  test('an ECDSA signature has a twin (r, n − s) that verifies too: it is the same assertion, refused', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const { userId } = await world.admin('POST', '/management/v1/users/machine', { userName: `ec-${randomUUID().slice(0, 6)}`, name: 'ec robot' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const { keyId } = await world.admin('POST', `/management/v1/users/${userId}/keys`, {
      type: 'KEY_TYPE_JSON',
      publicKey: Buffer.from(pem).toString('base64'),
    });
    const original = await assertion(userId, privateKey, keyId, 'ES256');
    const [head, claims, signature] = original.split('.') as [string, string, string];
    const bytes = Buffer.from(signature, 'base64url');
    const n = BigInt('0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551');
    const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
    const twin = `${head}.${claims}.${Buffer.concat([bytes.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]).toString('base64url')}`;
    await jwtVerify(twin, publicKey, { issuer: userId });
    assert.equal((await send(original)).status, 200);
    assertReplayRefused(await send(twin), 'the (r, n − s) twin');
  });

  test('legitimate: two assertions that differ (another exp) are two assertions', async () => {
    const machine = await world.createMachine(`nojti2-${randomUUID().slice(0, 6)}`);
    const first = await assertion(machine.userId, machine.privateKey, machine.keyId, 'RS256', 300);
    const second = await assertion(machine.userId, machine.privateKey, machine.keyId, 'RS256', 301);
    assert.notEqual(first, second);
    assert.equal((await send(first)).status, 200);
    assert.equal((await send(second)).status, 200);
  });
});
