import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  API_SCOPE,
  JWT_BEARER,
  eventually,
  freshJti,
  jwtProfileAssertion,
  noClientAuth,
  now,
  ok,
  refused,
  signJwt,
  startTokenWorld,
  storedGrantOf,
  strangerKey,
  unsecuredJwt,
  type KeyFile,
  type MachineUser,
  type TokenWorld,
} from '../support/tokens.ts';
import { REDIS_URL } from '../support/stores.ts';

// Machine users at the token endpoint (RFC 6749 4.4, RFC 7523;
// docs/oidc.md): client credentials with the machine user's secret, and the
// JWT profile grant with its JSON key — the token sets, what the tokens are
// good for (admin API, userinfo, introspection), every refused assertion,
// and tokens that stop working when their machine user is removed.

let world: TokenWorld;

interface SecretMachine extends MachineUser {
  clientId: string;
  clientSecret: string;
}

/** BEARER machine user with a client secret. */
let bearer: SecretMachine;
/** JWT machine user with a client secret. */
let jwtMachine: SecretMachine;
/** A machine user with JSON keys, for the JWT profile refusals. */
let keyed: MachineUser;
let keyedKey: KeyFile;
/** A second key of `keyed` that expires a few seconds after the start. */
let expiringKey: KeyFile;
let expiringAt: number;
/** A machine user removed before the tests run (its key and secret were issued first). */
let removed: SecretMachine & { key: KeyFile };

async function secretMachine(userName: string, type: 'BEARER' | 'JWT' = 'BEARER'): Promise<SecretMachine> {
  const user = await world.createMachine(userName, type);
  return { ...user, ...(await world.machineSecret(user.userId)) };
}

before(async () => {
  world = await startTokenWorld();
  [bearer, jwtMachine, keyed] = await Promise.all([secretMachine('robot-bearer'), secretMachine('robot-jwt', 'JWT'), world.createMachine('robot-keyed')]);
  expiringAt = Date.now() + 4000;
  [keyedKey, expiringKey] = await Promise.all([world.machineKey(keyed.userId), world.machineKey(keyed.userId, new Date(expiringAt).toISOString())]);
  // The expiring key works while it is valid, so its later refusal is down to expiry alone.
  const early = await jwtProfile({ assertion: await jwtProfileAssertion(expiringKey, world.issuer), scope: 'openid' }, keyed.userId);
  assert.equal(typeof early.access_token, 'string', 'the expiring key works before it expires');
  const doomed = await secretMachine('robot-removed');
  removed = { ...doomed, key: await world.machineKey(doomed.userId) };
  await jwtProfile({ assertion: await jwtProfileAssertion(removed.key, world.issuer), scope: 'openid' }, removed.userId);
  await ok(world.api('DELETE', `/management/v1/users/${removed.userId}`), 'remove a machine user');
});

after(async () => {
  await world?.stop();
});

const basicConfig = (m: SecretMachine) => world.clients.config(m.clientId, client.ClientSecretBasic(m.clientSecret));
const postConfig = (m: SecretMachine) => world.clients.config(m.clientId, client.ClientSecretPost(m.clientSecret));

/** The JWT profile grant as openid-client sends it (no client authentication, the assertion alone). */
function jwtProfile(params: Record<string, string> | URLSearchParams, userId = 'unused'): ReturnType<typeof client.genericGrantRequest> {
  return client.genericGrantRequest(world.clients.config(`machine:${userId}`, noClientAuth), JWT_BEARER, params);
}

async function adminApi(token: string, path: string, orgId = world.defaultOrgId): Promise<number> {
  const response = await fetch(`${world.server.url}${path}`, { headers: { authorization: `Bearer ${token}`, 'x-service-orgid': orgId } });
  await response.arrayBuffer();
  return response.status;
}

async function userinfo(token: string): Promise<Response> {
  return fetch(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
}

function isJwt(value: string): boolean {
  try {
    decodeJwt(value);
    return true;
  } catch {
    return false;
  }
}

describe('client_credentials (machine user with a client secret)', () => {
  for (const [how, config] of [
    ['client_secret_basic', basicConfig],
    ['client_secret_post', postConfig],
  ] as const) {
    test(`${how}: a BEARER machine user gets an opaque access token, token_type Bearer, expires_in and scope, and no ID token even with openid`, async () => {
      const tokens = await client.clientCredentialsGrant(config(bearer), { scope: `openid ${API_SCOPE}` });
      assert.equal(typeof tokens.access_token, 'string');
      assert.ok(tokens.access_token.length >= 20);
      assert.equal(isJwt(tokens.access_token), false, 'the access token is opaque');
      assert.equal(tokens.token_type, 'bearer');
      assert.equal(typeof tokens.expires_in, 'number');
      assert.ok(tokens.expires_in! > 0);
      assert.deepEqual(tokens.scope?.split(' ').sort(), [API_SCOPE, 'openid'].sort());
      assert.equal(tokens.id_token, undefined, 'no id_token for client_credentials');
      assert.equal(tokens.refresh_token, undefined);
    });
  }

  test('a JWT machine user gets an at+jwt access token that verifies against /oauth/v2/keys', async () => {
    const tokens = await client.clientCredentialsGrant(basicConfig(jwtMachine), { scope: `openid ${API_SCOPE}` });
    assert.equal(tokens.id_token, undefined);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(world.clients.metadata.jwks_uri, `${world.issuer}/oauth/v2/keys`);
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, world.clients.jwks, { issuer: world.issuer, typ: 'at+jwt' });
    assert.equal(protectedHeader.typ, 'at+jwt');
    assert.ok(protectedHeader.kid);
    assert.equal(payload.sub, jwtMachine.userId);
    assert.equal(payload.client_id, jwtMachine.clientId);
    assert.ok([payload.aud].flat().includes(jwtMachine.clientId), `aud ${JSON.stringify(payload.aud)}`);
    assert.equal(payload.scope, tokens.scope);
    assert.equal(typeof payload.jti, 'string');
    assert.ok(Math.abs(payload.exp! - now() - tokens.expires_in!) <= 5, 'exp matches expires_in');
  });

  test('the raw token response says token_type "Bearer"', async () => {
    const response = await fetch(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${bearer.clientId}:${bearer.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: API_SCOPE }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(body.token_type, 'Bearer');
  });

  test('an unknown scope is invalid_scope (RFC 6749 5.2), not silently dropped', async () => {
    await refused(client.clientCredentialsGrant(basicConfig(bearer), { scope: 'urn:example:nope' }), 'invalid_scope', 400, 'only an unknown scope');
    await refused(
      client.clientCredentialsGrant(basicConfig(bearer), { scope: `${API_SCOPE} urn:example:nope` }),
      'invalid_scope',
      400,
      'a known and an unknown scope',
    );
  });

  test('a missing scope is invalid_request (docs/oidc.md: scope is required)', async () => {
    await refused(client.clientCredentialsGrant(basicConfig(bearer)), 'invalid_request', 400);
  });

  test('a regenerated secret replaces the old one: the old secret is 401 invalid_client, the new one works', async () => {
    const machine = await secretMachine('robot-rotating');
    await client.clientCredentialsGrant(basicConfig(machine), { scope: API_SCOPE });
    const renewed = { ...machine, ...(await world.machineSecret(machine.userId)) };
    assert.notEqual(renewed.clientSecret, machine.clientSecret);
    await refused(client.clientCredentialsGrant(basicConfig(machine), { scope: API_SCOPE }), 'invalid_client', 401, 'old secret');
    const tokens = await client.clientCredentialsGrant(basicConfig(renewed), { scope: API_SCOPE });
    assert.equal(typeof tokens.access_token, 'string');
  });

  test('the secret of a removed machine user is 401 invalid_client', async () => {
    await refused(client.clientCredentialsGrant(basicConfig(removed), { scope: API_SCOPE }), 'invalid_client', 401);
    await refused(client.clientCredentialsGrant(postConfig(removed), { scope: API_SCOPE }), 'invalid_client', 401);
  });

  test('the client credentials token with urn:service:iam:api is accepted by the admin API; without it, 401', async () => {
    const withApi = await client.clientCredentialsGrant(basicConfig(bearer), { scope: API_SCOPE });
    assert.equal(await adminApi(withApi.access_token, `/management/v1/users/${bearer.userId}`), 200);
    const withoutApi = await client.clientCredentialsGrant(basicConfig(bearer), { scope: 'openid' });
    assert.equal(await adminApi(withoutApi.access_token, `/management/v1/users/${bearer.userId}`), 401);
  });
});

describe('JWT profile grant (urn:ietf:params:oauth:grant-type:jwt-bearer)', () => {
  test('the first-start admin-key.json obtains access_token, id_token (sub = the machine user), expires_in, scope and token_type', async () => {
    const key = world.adminKey;
    assert.equal(key.type, 'serviceaccount');
    assert.match(key.key, /^-----BEGIN RSA PRIVATE KEY-----/);
    const tokens = await jwtProfile({ assertion: await jwtProfileAssertion(key, world.issuer), scope: `openid ${API_SCOPE}` }, key.userId!);
    assert.equal(typeof tokens.access_token, 'string');
    assert.equal(tokens.token_type, 'bearer');
    assert.ok(tokens.expires_in! > 0);
    assert.deepEqual(tokens.scope?.split(' ').sort(), [API_SCOPE, 'openid'].sort());
    assert.ok(tokens.id_token, 'an id_token of the machine user');
    const { payload } = await jwtVerify(tokens.id_token, world.clients.jwks, { issuer: world.issuer });
    assert.equal(payload.sub, key.userId);
    assert.equal(tokens.claims()?.sub, key.userId);

    assert.equal(await adminApi(tokens.access_token, `/management/v1/users/${key.userId}`), 200, 'the admin API accepts the token');
    const info = await userinfo(tokens.access_token);
    assert.equal(info.status, 200);
    assert.equal(((await info.json()) as { sub: string }).sub, key.userId);
  });

  test('a JWT profile token without urn:service:iam:api is refused by the admin API (401), but works at userinfo', async () => {
    const tokens = await jwtProfile({ assertion: await jwtProfileAssertion(world.adminKey, world.issuer), scope: 'openid' }, world.adminKey.userId!);
    assert.equal(await adminApi(tokens.access_token, `/management/v1/users/${world.adminKey.userId}`), 401);
    assert.equal((await userinfo(tokens.access_token)).status, 200);
  });

  test("a machine user's own key works too, and its JWT machine setting gives an at+jwt access token", async () => {
    const key = await world.machineKey(jwtMachine.userId);
    const tokens = await jwtProfile({ assertion: await jwtProfileAssertion(key, world.issuer), scope: 'openid' }, jwtMachine.userId);
    const { payload } = await jwtVerify(tokens.access_token, world.clients.jwks, { issuer: world.issuer, typ: 'at+jwt' });
    assert.equal(payload.sub, jwtMachine.userId);
    assert.equal((await userinfo(tokens.access_token)).status, 200);
  });

  test('the grant of a JWT profile token expires with the token and is stored beside it (Redis when set)', async () => {
    const tokens = await jwtProfile({ assertion: await jwtProfileAssertion(keyedKey, world.issuer), scope: 'openid' }, keyed.userId);
    const grant = await storedGrantOf(world.server, tokens.access_token);
    assert.ok(grant.ttl > tokens.expires_in! - 5 && grant.ttl <= tokens.expires_in! + 1, `grant lives ${grant.ttl} s, the token ${tokens.expires_in} s`);
    assert.equal(grant.inRedis, Boolean(REDIS_URL));
    assert.equal(grant.inPostgres, !REDIS_URL);
    assert.equal((await userinfo(tokens.access_token)).status, 200, 'userinfo finds the grant');
  });

  test('aud may also be the token endpoint URL', async () => {
    const tokens = await jwtProfile(
      { assertion: await jwtProfileAssertion(keyedKey, world.issuer, { aud: `${world.issuer}/oauth/v2/token` }), scope: 'openid' },
      keyed.userId,
    );
    assert.equal(typeof tokens.access_token, 'string');
  });
});

describe('JWT profile refusals: each is 400 invalid_grant, never a 500', () => {
  const grant = async (assertion: string, userId = keyed.userId) => jwtProfile({ assertion, scope: 'openid' }, userId);
  const t = now;

  test('wrong aud', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, 'https://elsewhere.example.com')), 'invalid_grant', 400);
  });
  test('iss is not sub (sub names another user)', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, { sub: bearer.userId })), 'invalid_grant', 400);
  });
  test("iss names another machine user than the key's owner", async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, { iss: bearer.userId, sub: bearer.userId })), 'invalid_grant', 400);
  });
  test('iss is not a user at all', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, { iss: '123456789012345678', sub: '123456789012345678' })), 'invalid_grant', 400);
  });
  test('unknown kid', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, {}, { kid: '999999999999999999' })), 'invalid_grant', 400);
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, {}, { kid: null })), 'invalid_grant', 400, 'no kid');
  });
  test('expired assertion', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, { iat: t() - 900, exp: t() - 300 })), 'invalid_grant', 400);
  });
  test('exp more than one hour ahead', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, { exp: t() + 3600 + 600 })), 'invalid_grant', 400);
  });
  test('iat missing, or exp missing', async () => {
    const base = { iss: keyed.userId, sub: keyed.userId, aud: world.issuer };
    await refused(grant(await signJwt(keyedKey, { ...base, exp: t() + 300, jti: freshJti() })), 'invalid_grant', 400, 'no iat');
    await refused(grant(await signJwt(keyedKey, { ...base, iat: t(), jti: freshJti() })), 'invalid_grant', 400, 'no exp');
  });
  test('iat in the future (beyond clock skew)', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, { iat: t() + 900, exp: t() + 1200 })), 'invalid_grant', 400);
  });
  test('signed with another key (same kid)', async () => {
    await refused(grant(await jwtProfileAssertion(keyedKey, world.issuer, {}, { key: strangerKey() })), 'invalid_grant', 400);
  });
  test('a replayed assertion (same jti) is refused the second time', async () => {
    const assertion = await jwtProfileAssertion(keyedKey, world.issuer);
    const first = await grant(assertion);
    assert.equal(typeof first.access_token, 'string');
    await refused(grant(assertion), 'invalid_grant', 400, 'replay');
  });
  test('a deleted key', async () => {
    const key = await world.machineKey(keyed.userId);
    await grant(await jwtProfileAssertion(key, world.issuer));
    await ok(world.api('DELETE', `/management/v1/users/${keyed.userId}/keys/${key.keyId}`), 'delete the key');
    await refused(grant(await jwtProfileAssertion(key, world.issuer)), 'invalid_grant', 400);
  });
  test('an expired key', async () => {
    const wait = expiringAt + 1000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await refused(grant(await jwtProfileAssertion(expiringKey, world.issuer)), 'invalid_grant', 400);
  });
  test('a key that expires right after a grant is refused at once (its look-up is cached, its expiry is not)', async () => {
    const expiresAt = Date.now() + 2000;
    const key = await world.machineKey(keyed.userId, new Date(expiresAt).toISOString());
    await grant(await jwtProfileAssertion(key, world.issuer));
    await new Promise((resolve) => setTimeout(resolve, expiresAt + 200 - Date.now()));
    await refused(grant(await jwtProfileAssertion(key, world.issuer)), 'invalid_grant', 400);
  });
  test('a key of a removed machine user', async () => {
    await refused(grant(await jwtProfileAssertion(removed.key, world.issuer), removed.userId), 'invalid_grant', 400);
  });
  test('garbage assertion strings', async () => {
    for (const garbage of ['garbage', 'a.b.c', '..', 'eyJhbGciOiJSUzI1NiJ9.e30.', '%00%ff', 'x'.repeat(10_000), `${unsecuredJwt({ iss: keyed.userId })}x.y`]) {
      await refused(grant(garbage), 'invalid_grant', 400, `assertion ${JSON.stringify(garbage.slice(0, 40))}`);
    }
  });
  test('alg none', async () => {
    await refused(
      grant(unsecuredJwt({ iss: keyed.userId, sub: keyed.userId, aud: world.issuer, iat: t(), exp: t() + 300, jti: freshJti() })),
      'invalid_grant',
      400,
    );
  });
  test('HS256 (a symmetric algorithm)', async () => {
    const hs = await new SignJWT({ iss: keyed.userId, sub: keyed.userId, aud: world.issuer, iat: t(), exp: t() + 300, jti: freshJti() })
      .setProtectedHeader({ alg: 'HS256', kid: keyedKey.keyId })
      .sign(new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!'));
    assert.equal(decodeProtectedHeader(hs).alg, 'HS256');
    await refused(grant(hs), 'invalid_grant', 400);
  });
});

describe('JWT profile request errors', () => {
  test('a missing assertion is invalid_request', async () => {
    await refused(jwtProfile({ scope: 'openid' }), 'invalid_request', 400);
  });
  test('a missing scope is invalid_request', async () => {
    await refused(jwtProfile({ assertion: await jwtProfileAssertion(keyedKey, world.issuer) }, keyed.userId), 'invalid_request', 400);
  });
  test('an unknown scope is invalid_scope', async () => {
    await refused(
      jwtProfile({ assertion: await jwtProfileAssertion(keyedKey, world.issuer), scope: 'openid urn:example:unknown' }, keyed.userId),
      'invalid_scope',
      400,
    );
  });
  test('a repeated assertion parameter is invalid_request', async () => {
    const one = await jwtProfileAssertion(keyedKey, world.issuer);
    const params = new URLSearchParams([
      ['assertion', one],
      ['assertion', one],
      ['scope', 'openid'],
    ]);
    await refused(jwtProfile(params, keyed.userId), 'invalid_request', 400);
  });
  test('a repeated scope parameter is invalid_request', async () => {
    const params = new URLSearchParams([
      ['assertion', await jwtProfileAssertion(keyedKey, world.issuer)],
      ['scope', 'openid'],
      ['scope', 'openid'],
    ]);
    await refused(jwtProfile(params, keyed.userId), 'invalid_request', 400);
  });
});

describe('removing a machine user ends its tokens', () => {
  test('after DELETE /management/v1/users/{id}: its client credentials token is no longer active at introspection, and its tokens fail at userinfo and the admin API', async () => {
    const doomed = await secretMachine('robot-doomed');
    const key = await world.machineKey(doomed.userId);
    const cc = await client.clientCredentialsGrant(basicConfig(doomed), { scope: API_SCOPE });
    const profile = await jwtProfile({ assertion: await jwtProfileAssertion(key, world.issuer), scope: `openid ${API_SCOPE}` }, doomed.userId);
    const self = `/management/v1/users/${doomed.userId}`;

    assert.equal((await client.tokenIntrospection(basicConfig(doomed), cc.access_token)).active, true, 'active before');
    assert.equal(await adminApi(cc.access_token, self), 200, 'client credentials token at the admin API before');
    assert.equal(await adminApi(profile.access_token, self), 200, 'JWT profile token at the admin API before');
    assert.equal((await userinfo(profile.access_token)).status, 200, 'JWT profile token at userinfo before');

    await ok(world.api('DELETE', self), 'remove the machine user');

    // The machine user is the token's audience; once it is gone its
    // introspection request is refused (invalid_client) or answers inactive.
    const inactive = await eventually(async () => {
      try {
        return (await client.tokenIntrospection(basicConfig(doomed), cc.access_token)).active === false;
      } catch (err) {
        return err instanceof client.ResponseBodyError || err instanceof client.WWWAuthenticateChallengeError ? err.status === 401 : Promise.reject(err);
      }
    });
    assert.ok(inactive, 'the client credentials token is not active within 5 s');
    assert.ok(await eventually(async () => (await userinfo(profile.access_token)).status === 401), 'JWT profile token at userinfo: 401 within 5 s');
    assert.ok(await eventually(async () => (await adminApi(profile.access_token, self)) === 401), 'JWT profile token at the admin API: 401 within 5 s');
    assert.ok(await eventually(async () => (await adminApi(cc.access_token, self)) === 401), 'client credentials token at the admin API: 401 within 5 s');
  });

  test('deleting the key that obtained a JWT profile token ends that token', async () => {
    const key = await world.machineKey(keyed.userId);
    const profile = await jwtProfile({ assertion: await jwtProfileAssertion(key, world.issuer), scope: 'openid' }, keyed.userId);
    assert.equal((await userinfo(profile.access_token)).status, 200, 'works before');
    await ok(world.api('DELETE', `/management/v1/users/${keyed.userId}/keys/${key.keyId}`), 'delete the key');
    assert.ok(await eventually(async () => (await userinfo(profile.access_token)).status === 401), 'userinfo: 401 within 5 s after the key was deleted');
  });
});
