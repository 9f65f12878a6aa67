import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createHash, randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { SignJWT, calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import type { Browser } from 'playwright-core';
import {
  landedOn,
  launchBrowser,
  needsChromium,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
} from '../support/browser.ts';
import { basicAuth } from '../support/code-flow.ts';
import { sharedStorageEnv, tempDir, testServer, type TestServer } from '../support/server.ts';
import { needsPostgres, needsRedis } from '../support/stores.ts';
import {
  decodeKeyFile,
  discoverClients,
  jwtProfileAssertion,
  noClientAuth,
  oauthFailure,
  type Clients,
  JWT_BEARER,
  TOKEN_EXCHANGE,
  ACCESS_TOKEN_TYPE,
} from '../support/tokens.ts';

// DPoP (RFC 9449) through openid-client: bound access tokens (opaque and
// JWT, cnf.jkt, introspection), userinfo demanding the proof, bound refresh
// tokens of public apps, apps that require DPoP, our own grants (JWT
// profile, token exchange) binding their tokens, proofs that are wrong in
// each way RFC 9449 4.3 names, server nonces, and replay across nodes.

interface KeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
  thumbprint: string;
}

async function dpopKey(alg: 'ES256' | 'EdDSA' | 'RS256' = 'ES256'): Promise<KeyPair> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(pair.publicKey);
  return { ...pair, jwk, thumbprint: await calculateJwkThumbprint(jwk) };
}

/** A DPoP proof by hand (RFC 9449 4.2), to get each part wrong on purpose. */
async function proof(
  key: KeyPair,
  claims: { htm: string; htu: string; iat?: number; jti?: string; nonce?: string; ath?: string },
  alg = 'ES256',
): Promise<string> {
  const { iat = Math.floor(Date.now() / 1000), jti = randomUUID(), ...rest } = claims;
  return new SignJWT({ ...rest, iat, jti }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk: key.jwk }).sign(key.privateKey);
}

/** An `alg: none` proof: never a valid signature. */
function unsignedProof(key: KeyPair, htu: string): string {
  const enc = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${enc({ htm: 'POST', htu, iat: Math.floor(Date.now() / 1000), jti: randomUUID() })}.`;
}

async function tokenRequest(tokenUrl: string, machine: { clientId: string; clientSecret: string }, dpop?: string) {
  const res = await fetch(tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(machine.clientId, machine.clientSecret),
      ...(dpop ? { dpop } : {}),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'openid' }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

async function machineWithSecret(api: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>, userName: string) {
  const created = await api('POST', '/management/v1/users/machine', {
    userName,
    name: userName,
    description: 'dpop test',
    accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER',
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const secret = await api('PUT', `/management/v1/users/${created.body.userId}/secret`, {});
  assert.equal(secret.status, 200, JSON.stringify(secret.body));
  return { userId: created.body.userId as string, clientId: secret.body.clientId as string, clientSecret: secret.body.clientSecret as string };
}

describe('DPoP', () => {
  let world: SignInWorld;
  let clients: Clients;
  let tokenUrl: string;
  let machine: { userId: string; clientId: string; clientSecret: string };

  before(async () => {
    world = await startSignInWorld();
    clients = await discoverClients(world.issuer);
    tokenUrl = `${world.issuer}/oauth/v2/token`;
    machine = await machineWithSecret(world.api, 'dpop-machine');
  });

  after(async () => {
    await world?.stop();
  });

  test('discovery lists the proof algorithms', () => {
    assert.deepEqual([...(clients.metadata.dpop_signing_alg_values_supported as string[])].sort(), ['ES256', 'EdDSA', 'Ed25519', 'RS256'].sort());
  });

  test('client credentials with a proof (ES256, Ed25519, RS256): a DPoP token bound to that key; without one still Bearer', async () => {
    const config = clients.config(machine.clientId, client.ClientSecretBasic(machine.clientSecret));
    for (const alg of ['ES256', 'EdDSA', 'RS256'] as const) {
      const key = await dpopKey(alg);
      const tokens = await client.clientCredentialsGrant(config, { scope: 'openid' }, { DPoP: client.getDPoPHandle(config, key) });
      assert.equal(tokens.token_type, 'dpop', alg);
      const introspected = await introspect(tokens.access_token, machine);
      assert.equal(introspected.active, true);
      assert.equal(introspected.token_type, 'DPoP');
      assert.deepEqual(introspected.cnf, { jkt: key.thumbprint });
    }
    const plain = await client.clientCredentialsGrant(config, { scope: 'openid' });
    assert.equal(plain.token_type, 'bearer');
  });

  async function introspect(token: string, caller: { clientId: string; clientSecret: string }) {
    const res = await fetch(`${world.issuer}/oauth/v2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(caller.clientId, caller.clientSecret) },
      body: new URLSearchParams({ token }),
    });
    assert.equal(res.status, 200);
    return (await res.json()) as Record<string, any>;
  }

  test('the JWT profile binds its token when a proof is sent', async () => {
    const key = await world.api('POST', `/management/v1/users/${machine.userId}/keys`, { type: 'KEY_TYPE_JSON' });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    const file = decodeKeyFile(key.body.keyDetails);
    const config = clients.config(`machine:${machine.userId}`, noClientAuth);
    const dpop = await dpopKey();
    const bound = await client.genericGrantRequest(
      config,
      JWT_BEARER,
      { assertion: await jwtProfileAssertion(file, world.issuer), scope: 'openid' },
      { DPoP: client.getDPoPHandle(config, dpop) },
    );
    assert.equal(bound.token_type, 'dpop');
    assert.equal((await client.fetchUserInfo(config, bound.access_token, machine.userId, { DPoP: client.getDPoPHandle(config, dpop) })).sub, machine.userId);
    const asBearer = await fetch(`${world.issuer}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${bound.access_token}` } });
    assert.equal(asBearer.status, 401, 'the token is bound: no use without the proof');
    const plain = await client.genericGrantRequest(config, JWT_BEARER, { assertion: await jwtProfileAssertion(file, world.issuer), scope: 'openid' });
    assert.equal(plain.token_type, 'bearer');
  });

  describe('proofs that are wrong: the RFC 9449 error, never 5xx', () => {
    test('a proof for another URL (htu): 400 invalid_dpop_proof', async () => {
      const res = await tokenRequest(tokenUrl, machine, await proof(await dpopKey(), { htm: 'POST', htu: `${world.issuer}/oauth/v2/introspect` }));
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_dpop_proof');
    });

    test('a proof for another method (htm): 400 invalid_dpop_proof', async () => {
      const res = await tokenRequest(tokenUrl, machine, await proof(await dpopKey(), { htm: 'GET', htu: tokenUrl }));
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_dpop_proof');
    });

    test('alg none: 400 invalid_dpop_proof', async () => {
      const res = await tokenRequest(tokenUrl, machine, unsignedProof(await dpopKey(), tokenUrl));
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_dpop_proof');
    });

    test('a reused jti: the second use is 400 invalid_dpop_proof', async () => {
      const reused = await proof(await dpopKey(), { htm: 'POST', htu: tokenUrl });
      assert.equal((await tokenRequest(tokenUrl, machine, reused)).status, 200);
      const again = await tokenRequest(tokenUrl, machine, reused);
      assert.equal(again.status, 400);
      assert.equal(again.body.error, 'invalid_dpop_proof');
    });

    test('an old iat: 400 use_dpop_nonce with a DPoP-Nonce, and a proof with that nonce is accepted (RFC 9449 8)', async () => {
      const key = await dpopKey();
      const old = await tokenRequest(tokenUrl, machine, await proof(key, { htm: 'POST', htu: tokenUrl, iat: Math.floor(Date.now() / 1000) - 600 }));
      assert.equal(old.status, 400);
      assert.equal(old.body.error, 'use_dpop_nonce');
      const nonce = old.headers.get('dpop-nonce');
      assert.ok(nonce, 'a nonce to use instead');
      const withNonce = await tokenRequest(
        tokenUrl,
        machine,
        await proof(key, { htm: 'POST', htu: tokenUrl, iat: Math.floor(Date.now() / 1000) - 600, nonce }),
      );
      assert.equal(withNonce.status, 200, JSON.stringify(withNonce.body));
      assert.equal(withNonce.body.token_type, 'DPoP');
    });

    test('garbage in the DPoP header: 400 invalid_dpop_proof', async () => {
      const res = await tokenRequest(tokenUrl, machine, 'not.a.jwt');
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_dpop_proof');
    });
  });

  describe('the admin and management APIs honour DPoP binding (RFC 9449 7.1)', () => {
    /** An IAM_OWNER machine user with a client secret: its client_credentials tokens carry the API scope. */
    let owner: { userId: string; clientId: string; clientSecret: string };
    let signingKeysUrl: string;
    const API_SCOPE = 'openid urn:service:iam:api';
    const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
    /** A proof for GET /admin/v1/signing_keys with `token`, by `key`; `claims` change any part of it. */
    const signingKeysProof = (key: KeyPair, token: string, claims: Partial<Parameters<typeof proof>[1]> = {}) =>
      proof(key, { htm: 'GET', htu: signingKeysUrl, ath: ath(token), ...claims });

    before(async () => {
      owner = await machineWithSecret(world.api, 'dpop-owner');
      const member = await world.api('POST', '/admin/v1/members', { userId: owner.userId, roles: ['IAM_OWNER'] });
      assert.equal(member.status, 200, JSON.stringify(member.body));
      signingKeysUrl = `${world.issuer}/admin/v1/signing_keys`;
    });

    /** A client_credentials token of the owner with the API scope, bound to `key` when given. */
    async function ownerToken(key?: KeyPair): Promise<string> {
      const res = await fetch(tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(owner.clientId, owner.clientSecret),
          ...(key ? { dpop: await proof(key, { htm: 'POST', htu: tokenUrl }) } : {}),
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: API_SCOPE }),
      });
      const body = (await res.json()) as Record<string, any>;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.token_type, key ? 'DPoP' : 'Bearer');
      return body.access_token;
    }

    function callApi(authorization: string, dpop?: string, url = signingKeysUrl, method = 'GET') {
      return fetch(url, { method, headers: { authorization, ...(dpop ? { dpop } : {}) } });
    }

    async function assertRefused(res: Response, what: string, error: string): Promise<void> {
      const body = await res.text();
      assert.equal(res.status, 401, `${what}: ${res.status} ${body}`);
      assert.equal(JSON.parse(body).code, 16, what);
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^DPoP /, `${what}: the challenge names DPoP (${challenge})`);
      assert.match(challenge, new RegExp(`error="${error}"`), `${what}: ${challenge}`);
    }

    test('the reproduction: a DPoP-bound token of an IAM_OWNER machine user sent as Bearer without a proof is 401, naming DPoP', async () => {
      const key = await dpopKey();
      const token = await ownerToken(key);
      await assertRefused(await callApi(`Bearer ${token}`), 'bound token as Bearer', 'invalid_token');
      // Nor does a proof make a Bearer presentation of it acceptable.
      const withProof = await callApi(`Bearer ${token}`, await signingKeysProof(key, token));
      await assertRefused(withProof, 'bound token as Bearer with a proof', 'invalid_token');
    });

    test('the legitimate path: Authorization: DPoP with a proof of the bound key is 200, a fresh proof for every request', async () => {
      const key = await dpopKey();
      const token = await ownerToken(key);
      for (let i = 0; i < 2; i++) {
        const res = await callApi(`DPoP ${token}`, await signingKeysProof(key, token));
        assert.equal(res.status, 200, await res.text());
      }
      const management = `${world.issuer}/management/v1/users/${owner.userId}`;
      const res = await callApi(`DPoP ${token}`, await proof(key, { htm: 'GET', htu: management, ath: ath(token) }), management);
      assert.equal(res.status, 200, await res.text());
    });

    test('an unbound token still works as Bearer, and is refused under the DPoP scheme', async () => {
      const token = await ownerToken();
      assert.equal((await callApi(`Bearer ${token}`)).status, 200);
      const key = await dpopKey();
      await assertRefused(await callApi(`DPoP ${token}`, await signingKeysProof(key, token)), 'unbound as DPoP', 'invalid_token');
    });

    test("bad proofs are 401 naming DPoP: none, wrong htu, wrong htm, no ath, another token's ath, a replayed jti, another key, an old iat", async () => {
      const key = await dpopKey();
      const token = await ownerToken(key);
      const now = Math.floor(Date.now() / 1000);
      const cases: Array<[string, string | undefined]> = [
        ['no proof', undefined],
        ['wrong htu', await signingKeysProof(key, token, { htu: `${world.issuer}/admin/v1/orgs/_search` })],
        ['wrong htm', await signingKeysProof(key, token, { htm: 'POST' })],
        ['missing ath', await proof(key, { htm: 'GET', htu: signingKeysUrl })],
        ["another token's ath", await signingKeysProof(key, token, { ath: ath(`${token}x`) })],
        ['alg none', unsignedProof(key, signingKeysUrl)],
        ['an old iat', await signingKeysProof(key, token, { iat: now - 600 })],
        ['garbage', 'not.a.jwt'],
      ];
      for (const [what, dpop] of cases)
        await assertRefused(await callApi(`DPoP ${token}`, dpop), what, what === 'an old iat' ? 'use_dpop_nonce' : 'invalid_dpop_proof');

      const used = await signingKeysProof(key, token);
      assert.equal((await callApi(`DPoP ${token}`, used)).status, 200);
      await assertRefused(await callApi(`DPoP ${token}`, used), 'a replayed jti', 'invalid_dpop_proof');

      const other = await dpopKey();
      await assertRefused(await callApi(`DPoP ${token}`, await signingKeysProof(other, token)), 'a proof by another key', 'invalid_dpop_proof');
    });

    test('a proof used at userinfo is not taken again at the admin API: one replay store', async () => {
      // A JWT profile token of the owner (an access token of its user, which userinfo takes), bound to the key.
      const keyFile = await world.api('POST', `/management/v1/users/${owner.userId}/keys`, { type: 'KEY_TYPE_JSON' });
      assert.equal(keyFile.status, 200, JSON.stringify(keyFile.body));
      const key = await dpopKey();
      const issued = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof(key, { htm: 'POST', htu: tokenUrl }) },
        body: new URLSearchParams({
          grant_type: JWT_BEARER,
          assertion: await jwtProfileAssertion(decodeKeyFile(keyFile.body.keyDetails), world.issuer),
          scope: API_SCOPE,
        }),
      });
      const answer = (await issued.json()) as Record<string, string>;
      assert.equal(answer.token_type, 'DPoP', JSON.stringify(answer));
      const token = answer.access_token;
      const jti = randomUUID();
      const userinfoUrl = `${world.issuer}/oidc/v1/userinfo`;
      const atUserinfo = await fetch(userinfoUrl, {
        headers: { authorization: `DPoP ${token}`, dpop: await proof(key, { htm: 'GET', htu: userinfoUrl, ath: ath(token!), jti }) },
      });
      assert.equal(atUserinfo.status, 200, await atUserinfo.text());
      await assertRefused(await callApi(`DPoP ${token}`, await signingKeysProof(key, token!, { jti })), 'the same jti at the admin API', 'invalid_dpop_proof');
      const fresh = await callApi(`DPoP ${token}`, await signingKeysProof(key, token!));
      assert.equal(fresh.status, 200, await fresh.text());
    });
  });

  describe('in Chromium', { skip: needsChromium }, () => {
    let rp: RelyingParty;
    let browser: Browser;
    let user: TestUser;
    let pub: { appId: string; clientId: string };
    let jwtApp: { appId: string; clientId: string; clientSecret?: string };
    let strict: { appId: string; clientId: string; clientSecret?: string };

    before(async () => {
      [rp, browser] = await Promise.all([startRelyingParty(), launchBrowser()]);
      const flag = await world.api('PUT', '/v2/features/instance', { oidcTokenExchange: true });
      assert.equal(flag.status, 200, JSON.stringify(flag.body));
      [pub, jwtApp, strict, user] = await Promise.all([
        world.createApp({
          name: 'Public with refresh',
          redirectUris: [rp.callback],
          appType: 'OIDC_APP_TYPE_USER_AGENT',
          authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
          grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
        }),
        world.createApp({
          name: 'JWT web',
          redirectUris: [rp.callback],
          accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
          grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
        }),
        world.createApp({ name: 'DPoP only', redirectUris: [rp.callback], dpopBoundAccessTokens: true } as never),
        world.createUser('dora'),
      ]);
    });

    after(async () => {
      await browser?.close();
      await rp?.close();
    });

    /** Signs the user in through Chromium and redeems the code, with a proof of `key` when given. */
    async function login(config: client.Configuration, scope: string, key?: KeyPair) {
      const pkceCodeVerifier = client.randomPKCECodeVerifier();
      const expectedState = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: rp.callback,
        scope,
        state: expectedState,
        code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
        code_challenge_method: 'S256',
      });
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(url.href);
        await signIn(page, user);
        const landed = await landedOn(page, rp.callback);
        return await client.authorizationCodeGrant(
          config,
          landed,
          { pkceCodeVerifier, expectedState },
          undefined,
          key ? { DPoP: client.getDPoPHandle(config, key) } : {},
        );
      } finally {
        await context.close();
      }
    }

    test('a public app: DPoP token, userinfo only with the proof, refresh token bound to the same key', async () => {
      const config = clients.config(pub.clientId, client.None());
      const key = await dpopKey();
      const DPoP = client.getDPoPHandle(config, key);
      const tokens = await login(config, 'openid profile offline_access', key);
      assert.equal(tokens.token_type, 'dpop');
      assert.ok(tokens.refresh_token);

      const info = await client.fetchUserInfo(config, tokens.access_token, user.userId, { DPoP });
      assert.equal(info.sub, user.userId);
      const asBearer = await fetch(`${world.issuer}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(asBearer.status, 401);
      assert.match(asBearer.headers.get('www-authenticate') ?? '', /invalid_token/);
      const wrongKey = await fetch(`${world.issuer}/oidc/v1/userinfo`, {
        headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await proof(await dpopKey(), { htm: 'GET', htu: `${world.issuer}/oidc/v1/userinfo` }) },
      });
      assert.equal(wrongKey.status, 401);

      const withoutProof = await oauthFailure(client.refreshTokenGrant(config, tokens.refresh_token!));
      assert.equal(withoutProof.error, 'invalid_grant');
      const otherKey = await oauthFailure(
        client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: client.getDPoPHandle(config, await dpopKey()) }),
      );
      assert.equal(otherKey.error, 'invalid_grant');
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
      assert.equal(refreshed.token_type, 'dpop');
      assert.equal((await client.fetchUserInfo(config, refreshed.access_token, user.userId, { DPoP })).sub, user.userId);
    });

    test('a JWT access token carries cnf.jkt; introspection shows it; token exchange binds the new token to its own proof', async () => {
      const config = clients.config(jwtApp.clientId, client.ClientSecretBasic(jwtApp.clientSecret!));
      const key = await dpopKey('EdDSA');
      const tokens = await login(config, 'openid', key);
      assert.equal(tokens.token_type, 'dpop');
      assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt: key.thumbprint });
      const introspected = await introspect(tokens.access_token, { clientId: jwtApp.clientId, clientSecret: jwtApp.clientSecret! });
      assert.equal(introspected.active, true);
      assert.equal(introspected.token_type, 'DPoP');
      assert.deepEqual(introspected.cnf, { jkt: key.thumbprint });

      const exchangeKey = await dpopKey();
      const exchanged = await client.genericGrantRequest(
        config,
        TOKEN_EXCHANGE,
        {
          subject_token: tokens.access_token,
          subject_token_type: ACCESS_TOKEN_TYPE,
          requested_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          scope: 'openid',
        },
        { DPoP: client.getDPoPHandle(config, exchangeKey) },
      );
      assert.equal(exchanged.token_type, 'dpop');
      assert.deepEqual(decodeJwt(exchanged.access_token).cnf, { jkt: exchangeKey.thumbprint });
    });

    test('an app with dpopBoundAccessTokens: a code redeemed without a proof is invalid_grant', async () => {
      const config = clients.config(strict.clientId, client.ClientSecretBasic(strict.clientSecret!));
      const failure = await oauthFailure(login(config, 'openid'));
      assert.equal(failure.error, 'invalid_grant');
      assert.equal(failure.status, 400);
      const shown = await world.api('GET', `/management/v1/projects/${world.projectId}/apps/${strict.appId}`);
      assert.equal(shown.body.app.dpopBoundAccessTokens, true);
    });

    test('dpopBoundAccessTokens must be a boolean', async () => {
      const refused = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, { name: 'bad', dpopBoundAccessTokens: 1 });
      assert.equal(refused.status, 400);
    });
  });
});

/**
 * Two nodes on the same stores, as behind a load balancer: a proof used at
 * one is a replay at the other. With Redis the seen proofs are kept there,
 * without it in PostgreSQL.
 */
for (const redis of [true, false]) {
  describe(`replay across two nodes (${redis ? 'Redis' : 'PostgreSQL without Redis'})`, { skip: needsPostgres || (redis && needsRedis) }, () => {
    const storage = sharedStorageEnv({ redis });
    const dataDir = tempDir();
    let a: TestServer;
    let b: TestServer;

    before(async () => {
      const env = { ...storage.env, DATA_DIR: dataDir };
      a = await testServer({ sharedStores: false, env });
      b = await testServer({ sharedStores: false, env: { ...env, ISSUER: a.issuer } });
    });

    after(async () => {
      await b?.stop();
      await a?.stop();
      await storage.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('a proof accepted by node A is refused by node B', async () => {
      const machine = await machineWithSecret(
        (method, path, body) => a.api(method, path, { body }).then((r) => ({ status: r.status, body: r.json })),
        'replayer',
      );
      const tokenUrl = `${a.issuer}/oauth/v2/token`;
      const used = await proof(await dpopKey(), { htm: 'POST', htu: tokenUrl });
      const first = await tokenRequest(`${a.url}/oauth/v2/token`, machine, used);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const replayed = await tokenRequest(`${b.url}/oauth/v2/token`, machine, used);
      assert.equal(replayed.status, 400);
      assert.equal(replayed.body.error, 'invalid_dpop_proof');
    });

    test('one proof sent many times at once, to both nodes: exactly one token, the rest invalid_dpop_proof', async () => {
      const machine = await machineWithSecret((method, path, body) => a.api(method, path, { body }).then((r) => ({ status: r.status, body: r.json })), 'racer');
      const used = await proof(await dpopKey(), { htm: 'POST', htu: `${a.issuer}/oauth/v2/token` });
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => tokenRequest(`${(i % 2 ? b : a).url}/oauth/v2/token`, machine, used)));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, ...Array(9).fill(400)]);
      for (const refused of answers.filter((answer) => answer.status === 400)) assert.equal(refused.body.error, 'invalid_dpop_proof');
    });
  });
}
