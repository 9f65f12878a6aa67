import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { jwtVerify } from 'jose';
import type { Browser } from 'playwright-core';
import {
  codeLogin,
  landedOn,
  launchBrowser,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  needsChromium,
  confidentialAppFor,
} from '../support/browser.ts';
import { basicHeader } from '../support/api.ts';
import { discoverClients, postForm, privateKeyJwt, refused, signJwt, strangerKey, type Clients, type KeyFile } from '../support/tokens.ts';

// The whole file drives Chromium: skipped, with its reason, where it is not installed.
describe('in Chromium', { skip: needsChromium }, () => {
  // Introspection (RFC 7662, docs/oidc.md) and revocation (RFC 7009) of a
  // user's tokens, obtained through a real browser login with openid-client
  // (authorization code + PKCE), for opaque and JWT access tokens alike: who
  // sees a token as active, which fields and claims it shows, what a
  // revocation or a logout ends, and bad requests at both endpoints.

  const PROFILE = ['name', 'given_name', 'family_name', 'nickname', 'preferred_username', 'locale', 'gender', 'updated_at'];
  const PHONE = ['phone_number', 'phone_number_verified'];
  const FIELDS = ['active', 'aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'nbf', 'scope', 'token_type', 'username'];
  const SCOPE = 'openid email offline_access';

  interface AppInfo {
    appId: string;
    clientId: string;
    clientSecret?: string;
  }

  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let clients: Clients;
  let user: TestUser;
  /** Confidential apps of the project "Shop": opaque (BEARER) and JWT access tokens. */
  let opaqueApp: AppInfo;
  let jwtApp: AppInfo;
  /** Apps of the same project that never got a token: client_secret_basic and private_key_jwt. */
  let sibling: AppInfo;
  let siblingKeyed: AppInfo;
  let siblingKey: KeyFile;
  /** An app of another project of the same org. */
  let stranger: AppInfo;
  let otherProjectId: string;

  const configs = {} as Record<'opaque' | 'jwt' | 'sibling' | 'siblingKeyed' | 'stranger', client.Configuration>;

  before(async () => {
    [world, rp, browser] = await Promise.all([startSignInWorld(), startRelyingParty(), launchBrowser()]);
    const confidential = confidentialAppFor(rp);
    const project = await world.api('POST', '/management/v1/projects', { name: 'Elsewhere' });
    assert.equal(project.status, 200, JSON.stringify(project.body));
    otherProjectId = project.body.id;
    [opaqueApp, jwtApp, sibling, siblingKeyed, user] = await Promise.all([
      world.createApp({ name: 'Opaque', ...confidential, accessTokenType: 'OIDC_TOKEN_TYPE_BEARER' }),
      world.createApp({ name: 'JWT', ...confidential, accessTokenType: 'OIDC_TOKEN_TYPE_JWT' }),
      world.createApp({ name: 'Sibling', ...confidential }),
      world.createApp({ name: 'Sibling with key', ...confidential, authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' }),
      world.createUser('ivy', { firstName: 'Ivy', lastName: 'Inspector', phone: '+41791234567' }),
    ]);
    const strangerAnswer = await world.api('POST', `/management/v1/projects/${otherProjectId}/apps/oidc`, { name: 'Stranger', ...confidential });
    assert.equal(strangerAnswer.status, 200, JSON.stringify(strangerAnswer.body));
    stranger = strangerAnswer.body;
    const key = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/${siblingKeyed.appId}/keys`, { type: 'KEY_TYPE_JSON' });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    siblingKey = JSON.parse(Buffer.from(key.body.keyDetails, 'base64').toString('utf8')) as KeyFile;

    clients = await discoverClients(world.issuer);
    const basic = (app: AppInfo) => clients.config(app.clientId, client.ClientSecretBasic(app.clientSecret));
    Object.assign(configs, {
      opaque: basic(opaqueApp),
      jwt: basic(jwtApp),
      sibling: basic(sibling),
      siblingKeyed: clients.config(siblingKeyed.clientId, privateKeyJwt(siblingKey)),
      stranger: basic(stranger),
    });
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await world?.stop();
  });

  type Tokens = Awaited<ReturnType<typeof client.authorizationCodeGrant>>;

  /** Signs the user in within a fresh browser context and redeems the code; `logout` ends that session in the same context and closes it. */
  async function login(config: client.Configuration, scope = SCOPE): Promise<{ tokens: Tokens; logout(): Promise<void> }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      const { tokens } = await codeLogin(page, config, rp, user, scope);
      return {
        tokens,
        async logout() {
          try {
            await page.goto(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: rp.loggedOut }).href);
            await landedOn(page, rp.loggedOut);
          } finally {
            await context.close();
          }
        },
      };
    } catch (err) {
      await context.close();
      throw err;
    }
  }

  async function isActive(config: client.Configuration, token: string): Promise<boolean> {
    return (await client.tokenIntrospection(config, token)).active;
  }

  for (const kind of ['opaque', 'jwt'] as const) {
    const label = kind === 'opaque' ? 'opaque' : 'JWT';
    const app = () => (kind === 'opaque' ? opaqueApp : jwtApp);
    const own = () => configs[kind];

    describe(`introspection of a user's ${label} access token (RFC 7662 2.2)`, () => {
      let tokens: Tokens;
      before(async () => {
        ({ tokens } = await login(own()));
      });

      test(`the access token is ${kind === 'jwt' ? 'an at+jwt JWT verifiable against the key set' : 'opaque'}`, async () => {
        const parts = tokens.access_token.split('.');
        if (kind === 'opaque') {
          assert.notEqual(parts.length, 3, 'an opaque token is not a JWT');
        } else {
          const { payload } = await jwtVerify(tokens.access_token, clients.jwks, { issuer: world.issuer, typ: 'at+jwt' });
          assert.equal(payload.sub, user.userId);
          assert.equal(payload.client_id, app().clientId);
        }
      });

      test('the app that got the token: active, with every field of docs/oidc.md, username = userName@primaryDomain, and the claims of the granted scopes only', async () => {
        const result = (await client.tokenIntrospection(own(), tokens.access_token)) as Record<string, unknown>;
        for (const field of FIELDS) assert.ok(field in result, `field ${field} is present: ${JSON.stringify(result)}`);
        assert.equal(result.active, true);
        assert.equal(result.client_id, app().clientId);
        assert.equal(result.iss, world.issuer);
        assert.equal(result.token_type, 'Bearer');
        assert.equal(result.username, 'ivy@acme.example.test');
        assert.equal(result.sub, user.userId);
        assert.deepEqual(String(result.scope).split(' ').sort(), SCOPE.split(' ').sort());
        const aud = [result.aud].flat();
        assert.ok(aud.includes(app().clientId) && aud.includes(world.projectId), `aud names the app and its project: ${JSON.stringify(result.aud)}`);
        for (const field of ['exp', 'iat', 'nbf']) assert.equal(typeof result[field], 'number', field);
        assert.ok((result.exp as number) > Date.now() / 1000);
        assert.ok((result.iat as number) <= Date.now() / 1000 + 5);
        assert.equal(typeof result.jti, 'string');
        if (kind === 'jwt') {
          const { payload } = await jwtVerify(tokens.access_token, clients.jwks, { issuer: world.issuer });
          assert.equal(result.jti, payload.jti, "jti is the JWT's jti");
        }
        assert.equal(result.email, 'ivy@acme.example.test', 'email scope: email');
        assert.equal(result.email_verified, true, 'email scope: email_verified');
        for (const name of [...PROFILE, ...PHONE]) assert.ok(!(name in result), `${name} (scope not granted) is absent`);
      });

      test('another app of the same project (client_secret_basic or private_key_jwt): active', async () => {
        assert.equal(await isActive(configs.sibling, tokens.access_token), true, 'sibling, client_secret_basic');
        assert.equal(await isActive(configs.siblingKeyed, tokens.access_token), true, 'sibling, private_key_jwt');
      });

      test('an app of another project: {active: false} and nothing else', async () => {
        assert.deepEqual(await client.tokenIntrospection(configs.stranger, tokens.access_token), { active: false });
      });

      test('the refresh token is not an access token of another app: an app of another project sees it inactive', async () => {
        assert.deepEqual(await client.tokenIntrospection(configs.stranger, tokens.refresh_token!), { active: false });
      });

      test('revoking it as another client answers 200 and the token stays active', async () => {
        await client.tokenRevocation(configs.sibling, tokens.access_token);
        await client.tokenRevocation(configs.stranger, tokens.access_token);
        await client.tokenRevocation(configs.stranger, tokens.refresh_token!);
        assert.equal(await isActive(own(), tokens.access_token), true);
        const refreshed = await client.refreshTokenGrant(own(), tokens.refresh_token!);
        tokens = refreshed;
        assert.equal(await isActive(own(), refreshed.access_token), true);
      });
    });

    describe(`revocation of a user's ${label} tokens (RFC 7009 2.1, docs/oidc.md)`, () => {
      test('revoking an access token ends only that token: the access token of a later refresh stays active and the refresh token still works', async () => {
        const { tokens } = await login(own());
        const second = await client.refreshTokenGrant(own(), tokens.refresh_token!);
        assert.equal(await isActive(own(), tokens.access_token), true);
        assert.equal(await isActive(own(), second.access_token), true);

        await client.tokenRevocation(own(), tokens.access_token);
        assert.deepEqual(await client.tokenIntrospection(own(), tokens.access_token), { active: false }, 'the revoked token');
        assert.equal(await isActive(own(), second.access_token), true, 'the other access token of the grant');
        const third = await client.refreshTokenGrant(own(), second.refresh_token!);
        assert.equal(await isActive(own(), third.access_token), true, 'the refresh token still works');
        const info = await fetch(new URL('/oidc/v1/userinfo', world.issuer), { headers: { authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(info.status, 401, 'the revoked token fails at userinfo too');
      });

      test('revoking a refresh token ends it and the access tokens of its grant', async () => {
        const { tokens } = await login(own());
        const second = await client.refreshTokenGrant(own(), tokens.refresh_token!);
        await client.tokenRevocation(own(), second.refresh_token!);
        assert.equal(await isActive(own(), second.refresh_token!), false, 'the refresh token');
        assert.equal(await isActive(own(), second.access_token), false, 'the access token from the refresh');
        assert.equal(await isActive(own(), tokens.access_token), false, 'the first access token');
        await refused(client.refreshTokenGrant(own(), second.refresh_token!), 'invalid_grant', 400);
      });

      test('revoking an unknown token, or one already revoked, answers 200', async () => {
        await client.tokenRevocation(own(), 'no-such-token');
        await client.tokenRevocation(own(), 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln');
        const { tokens } = await login(own(), 'openid');
        await client.tokenRevocation(own(), tokens.access_token);
        await client.tokenRevocation(own(), tokens.access_token);
        assert.equal(await isActive(own(), tokens.access_token), false);
      });

      test("logout (end_session with id_token_hint in the browser) makes the session's access token inactive at introspection", async () => {
        const session = await login(own(), 'openid email');
        assert.equal(await isActive(own(), session.tokens.access_token), true);
        await session.logout();
        assert.deepEqual(await client.tokenIntrospection(own(), session.tokens.access_token), { active: false });
        assert.equal(await isActive(configs.sibling, session.tokens.access_token), false, 'for the other app of the project too');
      });
    });
  }

  describe('tokens introspection does not know', () => {
    for (const [name, token] of [
      ['an unknown opaque value', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd'],
      ['garbage', '%%% not a token %%%'],
      ['a three-part garbage JWT', 'a.b.c'],
      ['a JWT with garbage parts', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
    ] as const) {
      test(`${name}: {active: false}`, async () => {
        assert.deepEqual(await client.tokenIntrospection(configs.opaque, token), { active: false });
      });
    }

    test('a JWT access token of another issuer (signed by a key of its own): {active: false}', async () => {
      const t = Math.floor(Date.now() / 1000);
      const key = { type: 'application', keyId: 'foreign-key', key: '' } as KeyFile;
      const foreign = await signJwt(
        key,
        {
          iss: 'https://other-issuer.example.com',
          sub: user.userId,
          aud: [opaqueApp.clientId, world.projectId],
          client_id: opaqueApp.clientId,
          scope: 'openid',
          jti: 'foreign-jti',
          iat: t,
          exp: t + 600,
        },
        { key: strangerKey(), typ: 'at+jwt' },
      );
      assert.deepEqual(await client.tokenIntrospection(configs.opaque, foreign), { active: false });
    });

    test('a JWT claiming this issuer but signed by another key: {active: false}', async () => {
      const t = Math.floor(Date.now() / 1000);
      const key = { type: 'application', keyId: 'forged', key: '' } as KeyFile;
      const forged = await signJwt(
        key,
        {
          iss: world.issuer,
          sub: user.userId,
          aud: [opaqueApp.clientId, world.projectId],
          client_id: opaqueApp.clientId,
          scope: 'openid',
          jti: 'forged-jti',
          iat: t,
          exp: t + 600,
        },
        { key: strangerKey(), typ: 'at+jwt' },
      );
      assert.deepEqual(await client.tokenIntrospection(configs.opaque, forged), { active: false });
    });
  });

  describe('bad requests at introspection and revocation: 400, never 500', () => {
    const endpoints = [
      ['introspection', '/oauth/v2/introspect'],
      ['revocation', '/oauth/v2/revoke'],
    ] as const;
    const auth = () => ({ authorization: basicHeader(opaqueApp.clientId, opaqueApp.clientSecret!) });

    for (const [name, path] of endpoints) {
      test(`${name}: a missing token is 400 invalid_request`, async () => {
        const answer = await postForm(`${world.server.url}${path}`, '', auth());
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.json?.error, 'invalid_request');
      });

      test(`${name}: a repeated token parameter is 400 invalid_request`, async () => {
        const answer = await postForm(`${world.server.url}${path}`, 'token=one&token=two', auth());
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.json?.error, 'invalid_request');
      });

      test(`${name}: an oversized body (100 KB) is 400`, async () => {
        const answer = await postForm(`${world.server.url}${path}`, new URLSearchParams({ token: 'x'.repeat(100 * 1024) }), auth());
        assert.equal(answer.status, 400, answer.text.slice(0, 300));
        assert.equal(answer.json?.error, 'invalid_request');
      });

      test(`${name}: a token of 8 KB is answered without a server error`, async () => {
        const answer = await postForm(`${world.server.url}${path}`, new URLSearchParams({ token: 'x'.repeat(8 * 1024) }), auth());
        assert.equal(answer.status, 200, answer.text.slice(0, 300));
      });
    }
  });
});
