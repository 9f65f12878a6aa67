import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Browser, Page } from 'playwright-core';
import {
  codeLogin,
  landedOn,
  launchBrowser,
  screenshot,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type CodeLogin,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  needsChromium,
  confidentialAppFor,
} from '../support/browser.ts';

// The whole file drives Chromium: skipped, with its reason, where it is not installed.
describe('in Chromium', { skip: needsChromium }, () => {
  // A relying party (openid-client, in this process) signs a user in through
  // Chromium: authorization code with PKCE, userinfo, refresh tokens, end
  // session and the implicit flow, and the errors of RFC 6749 4.1.2.1 and 5.2.

  const RESOURCE_OWNER = [
    'urn:service:iam:user:resourceowner:id',
    'urn:service:iam:user:resourceowner:name',
    'urn:service:iam:user:resourceowner:primary_domain',
  ];
  const PROFILE = ['name', 'given_name', 'family_name', 'nickname', 'preferred_username', 'locale', 'gender', 'updated_at'];
  const EMAIL = ['email', 'email_verified'];
  const PHONE = ['phone_number', 'phone_number_verified'];
  const SCOPED_CLAIMS = [...PROFILE, ...EMAIL, ...PHONE, 'address'];

  interface App {
    clientId: string;
    clientSecret?: string;
  }

  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let user: TestUser;
  /** Confidential web app: BASIC, code + refresh grants. */
  let web: App;
  /** The same, with idTokenUserinfoAssertion. */
  let webAssert: App;
  /** Public browser app: USER_AGENT, NONE, code grant. */
  let pub: App;
  /** Public browser app with the refresh grant (the engine rotates its refresh tokens). */
  let pubRefresh: App;
  /** Public implicit apps (id_token token and id_token), without and with idTokenUserinfoAssertion. */
  let implicit: App;
  let implicitAssert: App;
  let webConfig: client.Configuration;
  let webAssertConfig: client.Configuration;
  let pubConfig: client.Configuration;
  let pubRefreshConfig: client.Configuration;
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  before(async () => {
    [world, rp, browser] = await Promise.all([startSignInWorld(), startRelyingParty(), launchBrowser()]);
    const confidential = confidentialAppFor(rp);
    const implicitApp = {
      redirectUris: [rp.callback],
      responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN', 'OIDC_RESPONSE_TYPE_ID_TOKEN'],
      grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT'],
      appType: 'OIDC_APP_TYPE_USER_AGENT',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      devMode: true,
    };
    const publicApp = {
      redirectUris: [rp.callback],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      appType: 'OIDC_APP_TYPE_USER_AGENT',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      devMode: true,
    };
    [web, webAssert, pub, pubRefresh, implicit, implicitAssert, user] = await Promise.all([
      world.createApp({ name: 'Web', ...confidential }),
      world.createApp({ name: 'Web with claims', ...confidential, idTokenUserinfoAssertion: true }),
      world.createApp({ name: 'Public', ...publicApp, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'] }),
      world.createApp({ name: 'Public with refresh', ...publicApp, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] }),
      world.createApp({ name: 'Implicit', ...implicitApp }),
      world.createApp({ name: 'Implicit with claims', ...implicitApp, idTokenUserinfoAssertion: true }),
      world.createUser('user', { firstName: 'Ursula', lastName: 'User', phone: '+41791234567', preferredLanguage: 'de' }),
    ]);
    assert.ok(web.clientSecret && webAssert.clientSecret, 'BASIC apps come with a client secret');
    [webConfig, webAssertConfig, pubConfig, pubRefreshConfig] = await Promise.all([discover(web), discover(webAssert), discover(pub), discover(pubRefresh)]);
    jwks = createRemoteJWKSet(new URL(webConfig.serverMetadata().jwks_uri!));
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await world?.stop();
  });

  function discover(app: App): Promise<client.Configuration> {
    const auth = app.clientSecret ? client.ClientSecretBasic(app.clientSecret) : client.None();
    return client.discovery(new URL(world.issuer), app.clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
  }

  /** A fresh browser context (no cookies) for one test, closed when it ends. */
  async function freshPage(t: TestContext): Promise<{ page: Page; visited: string[] }> {
    const context = await browser.newContext();
    t.after(() => context.close());
    const visited: string[] = [];
    context.on('request', (request) => visited.push(request.url()));
    return { page: await context.newPage(), visited };
  }

  /** Signs the test user in through the browser and redeems the code. */
  function userLogin(page: Page, config: client.Configuration, scope: string, extra: Record<string, string> = {}): Promise<CodeLogin> {
    return codeLogin(page, config, rp, user, scope, extra);
  }

  /** Opens an authorization request and returns what the relying party received (query and fragment). */
  async function authorizeExpectingRedirect(page: Page, params: Array<[string, string]>): Promise<URLSearchParams> {
    const url = new URL('/oauth/v2/authorize', world.issuer);
    for (const [name, value] of params) url.searchParams.append(name, value);
    await page.goto(url.href);
    assert.ok(page.url().startsWith(rp.callback), `the browser should be redirected to the relying party, but it is on ${page.url()}`);
    return redirectParams(new URL(page.url()));
  }

  function redirectParams(url: URL): URLSearchParams {
    const merged = new URLSearchParams(url.search);
    for (const [name, value] of new URLSearchParams(url.hash.slice(1))) merged.append(name, value);
    return merged;
  }

  async function verifyIdToken(idToken: string, clientId: string): Promise<JWTPayload> {
    const { payload } = await jwtVerify(idToken, jwks, { issuer: world.issuer, audience: clientId });
    return payload;
  }

  async function userinfo(accessToken?: string): Promise<Response> {
    return fetch(new URL('/oidc/v1/userinfo', world.issuer), { headers: accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` } });
  }

  function assertInvalidToken(response: Response, why: string): void {
    assert.equal(response.status, 401, why);
    const challenge = response.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer\b/, `${why}: WWW-Authenticate is "${challenge}"`);
    assert.match(challenge, /error="invalid_token"/, `${why}: WWW-Authenticate is "${challenge}"`);
  }

  function sorted(names: Iterable<string>): string[] {
    return [...names].sort();
  }

  /** Rejects with an OAuth error response whose `error` is `code`. */
  async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof client.ResponseBodyError, `expected an OAuth error response, got ${String(err)}`);
      assert.equal(err.error, code, `${err.error}: ${err.error_description ?? ''}`);
      return true;
    });
  }

  describe('a confidential web app signs a user in with openid-client (authorization code + PKCE)', () => {
    test('the code flow ends with tokens whose ID token verifies against the key set, and iss is in the authorization response (RFC 9207)', async (t) => {
      const { page } = await freshPage(t);
      const pkceCodeVerifier = client.randomPKCECodeVerifier();
      const expectedState = client.randomState();
      const expectedNonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(webConfig, {
        redirect_uri: rp.callback,
        scope: 'openid profile email',
        code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
        code_challenge_method: 'S256',
        state: expectedState,
        nonce: expectedNonce,
      });
      await page.goto(url.href);
      await page.waitForSelector('#loginName');
      await screenshot(page, 'rp-code-login-name');
      await page.fill('#loginName', user.loginName);
      await page.click('button[type=submit]');
      await page.waitForSelector('#password');
      await screenshot(page, 'rp-code-password');
      await page.fill('#password', user.password);
      await page.click('button[type=submit]');
      const landed = await landedOn(page, rp.callback);

      assert.equal(webConfig.serverMetadata().authorization_response_iss_parameter_supported, true);
      assert.equal(landed.searchParams.get('iss'), world.issuer);
      assert.equal(landed.searchParams.get('state'), expectedState);
      // openid-client refuses an authorization response from another issuer (before redeeming the code).
      const forged = new URL(landed);
      forged.searchParams.set('iss', 'https://attacker.example');
      await assert.rejects(client.authorizationCodeGrant(webConfig, forged, { pkceCodeVerifier, expectedState, expectedNonce }));

      const tokens = await client.authorizationCodeGrant(webConfig, landed, { pkceCodeVerifier, expectedState, expectedNonce });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.ok(tokens.access_token);
      assert.ok(typeof tokens.expires_in === 'number' && tokens.expires_in > 0);
      assert.deepEqual(sorted(tokens.scope!.split(' ')), ['email', 'openid', 'profile']);
      const idToken = await verifyIdToken(tokens.id_token!, web.clientId);
      assert.equal(idToken.sub, user.userId);
      assert.equal(idToken.nonce, expectedNonce);
      assert.equal(tokens.claims()!.sub, user.userId);
    });

    test('userinfo with only openid returns sub and the three resource owner claims, nothing else', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid');
      const info = await client.fetchUserInfo(webConfig, tokens.access_token, user.userId);
      assert.deepEqual(sorted(Object.keys(info)), sorted(['sub', ...RESOURCE_OWNER]));
      assert.equal(info['urn:service:iam:user:resourceowner:id'], world.orgId);
      assert.equal(info['urn:service:iam:user:resourceowner:name'], 'ACME');
      assert.equal(info['urn:service:iam:user:resourceowner:primary_domain'], 'acme.example.test');
    });

    test('userinfo with openid profile email phone returns exactly the claims of those scopes', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid profile email phone');
      const info = await client.fetchUserInfo(webConfig, tokens.access_token, user.userId);
      assert.deepEqual(
        sorted(Object.keys(info)),
        sorted(['sub', ...RESOURCE_OWNER, 'name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'locale', ...EMAIL, ...PHONE]),
      );
      assert.equal(info.name, 'Ursula User');
      assert.equal(info.given_name, 'Ursula');
      assert.equal(info.family_name, 'User');
      assert.equal(info.preferred_username, 'user@acme.example.test');
      assert.equal(info.locale, 'de');
      assert.equal(typeof info.updated_at, 'number');
      assert.equal(info.email, 'user@acme.example.test');
      assert.equal(info.email_verified, true);
      assert.equal(info.phone_number, '+41791234567');
      assert.equal(info.phone_number_verified, false);
    });

    test('userinfo never returns a claim of a scope that was not granted (openid email)', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid email');
      const info = await client.fetchUserInfo(webConfig, tokens.access_token, user.userId);
      assert.deepEqual(sorted(Object.keys(info)), sorted(['sub', ...RESOURCE_OWNER, ...EMAIL]));
    });

    test('the ID token from the token endpoint has no profile or email claims without idTokenUserinfoAssertion (OIDC Core 5.4)', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid profile email phone');
      const idToken = await verifyIdToken(tokens.id_token!, web.clientId);
      assert.equal(idToken.sub, user.userId);
      assert.equal(idToken['urn:service:iam:user:resourceowner:id'], world.orgId);
      for (const claim of SCOPED_CLAIMS) assert.equal(idToken[claim], undefined, `the ID token should not carry ${claim}`);
    });

    test('the ID token from the token endpoint carries the profile and email claims with idTokenUserinfoAssertion', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webAssertConfig, 'openid profile email');
      const idToken = await verifyIdToken(tokens.id_token!, webAssert.clientId);
      assert.equal(idToken.sub, user.userId);
      assert.equal(idToken.name, 'Ursula User');
      assert.equal(idToken.given_name, 'Ursula');
      assert.equal(idToken.family_name, 'User');
      assert.equal(idToken.preferred_username, 'user@acme.example.test');
      assert.equal(idToken.email, 'user@acme.example.test');
      assert.equal(idToken.email_verified, true);
      assert.equal(idToken.phone_number, undefined, 'phone was not requested');
    });
  });

  describe('refresh tokens', () => {
    test('offline_access gives a refresh token; without it there is none', async (t) => {
      const { page } = await freshPage(t);
      const offline = await userLogin(page, webConfig, 'openid offline_access');
      assert.ok(offline.tokens.refresh_token, 'a refresh token with offline_access');
      assert.ok(offline.tokens.scope!.split(' ').includes('offline_access'));
      const { page: other } = await freshPage(t);
      const online = await userLogin(other, webConfig, 'openid profile');
      assert.equal(online.tokens.refresh_token, undefined, 'no refresh token without offline_access');
    });

    test('using a refresh token returns a new, different refresh token (rotation on every use, docs/oidc.md)', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid profile offline_access');
      const first = tokens.refresh_token!;
      const refreshed = await client.refreshTokenGrant(webConfig, first);
      assert.ok(refreshed.access_token);
      assert.ok(refreshed.refresh_token, 'the refresh grant returns a refresh token');
      assert.notEqual(refreshed.refresh_token, first, 'the refresh token is rotated');
      const again = await client.refreshTokenGrant(webConfig, refreshed.refresh_token!);
      assert.notEqual(again.refresh_token, refreshed.refresh_token, 'and rotated again on the next use');
    });

    test('a public app: reusing an old refresh token is invalid_grant and revokes the whole grant, even its newest refresh token', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, pubRefreshConfig, 'openid offline_access');
      const first = tokens.refresh_token!;
      const second = await client.refreshTokenGrant(pubRefreshConfig, first);
      assert.notEqual(second.refresh_token, first, 'the refresh token was rotated');
      await rejectsWith(client.refreshTokenGrant(pubRefreshConfig, first), 'invalid_grant');
      await rejectsWith(client.refreshTokenGrant(pubRefreshConfig, second.refresh_token!), 'invalid_grant');
      assertInvalidToken(await userinfo(second.access_token), 'the access token of the revoked grant');
    });

    test('a confidential app: reusing an old refresh token is invalid_grant and revokes the whole grant, even its newest refresh token', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid offline_access');
      const first = tokens.refresh_token!;
      const second = await client.refreshTokenGrant(webConfig, first);
      assert.notEqual(second.refresh_token, first, 'precondition: the refresh token was rotated');
      await rejectsWith(client.refreshTokenGrant(webConfig, first), 'invalid_grant');
      await rejectsWith(client.refreshTokenGrant(webConfig, second.refresh_token!), 'invalid_grant');
      assertInvalidToken(await userinfo(second.access_token), 'the access token of the revoked grant');
    });

    test('the same refresh token presented many times at once: exactly one request gets a successor, the others invalid_grant', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid offline_access');
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => client.refreshTokenGrant(webConfig, tokens.refresh_token!)));
      const won = results.filter((result) => result.status === 'fulfilled');
      assert.equal(won.length, 1, 'one rotation wins');
      for (const lost of results.filter((result) => result.status === 'rejected')) {
        assert.equal((lost.reason as { error?: string }).error, 'invalid_grant');
      }
      // A request that finds the token already consumed is a reuse, which
      // also revokes the grant (the winner's successor with it).
    });

    test('a narrower scope on refresh is granted and reflected in the response; omitting scope keeps the original scopes', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid profile email offline_access');
      const narrow = await client.refreshTokenGrant(webConfig, tokens.refresh_token!, { scope: 'openid email' });
      assert.deepEqual(sorted(narrow.scope!.split(' ')), ['email', 'openid']);
      const narrowInfo = await client.fetchUserInfo(webConfig, narrow.access_token, user.userId);
      assert.equal(narrowInfo.name, undefined, 'the narrower access token releases no profile claims');
      assert.equal(narrowInfo.email, 'user@acme.example.test');

      const whole = await client.refreshTokenGrant(webConfig, narrow.refresh_token ?? tokens.refresh_token!);
      assert.deepEqual(sorted(whole.scope!.split(' ')), ['email', 'offline_access', 'openid', 'profile']);
    });

    test('a wider scope on refresh is invalid_scope', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid offline_access');
      await rejectsWith(client.refreshTokenGrant(webConfig, tokens.refresh_token!, { scope: 'openid offline_access phone' }), 'invalid_scope');
    });
  });

  describe('PKCE', () => {
    test('a public app without code_challenge gets error=invalid_request at its redirect URI', async (t) => {
      const { page } = await freshPage(t);
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', pub.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'code'],
        ['scope', 'openid'],
        ['state', 'pk1'],
      ]);
      assert.equal(received.get('error'), 'invalid_request', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'pk1');
    });

    test('code_challenge_method=plain is invalid_request', async (t) => {
      const { page } = await freshPage(t);
      const verifier = client.randomPKCECodeVerifier();
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', pub.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'code'],
        ['scope', 'openid'],
        ['state', 'pk2'],
        ['code_challenge', verifier],
        ['code_challenge_method', 'plain'],
      ]);
      assert.equal(received.get('error'), 'invalid_request', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'pk2');
    });

    test('a wrong code_verifier at the token endpoint is invalid_grant', async (t) => {
      const { page } = await freshPage(t);
      const verifier = client.randomPKCECodeVerifier();
      const url = client.buildAuthorizationUrl(pubConfig, {
        redirect_uri: rp.callback,
        scope: 'openid',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'pk3',
      });
      await page.goto(url.href);
      await signIn(page, user);
      const landed = await landedOn(page, rp.callback);
      await rejectsWith(
        client.authorizationCodeGrant(pubConfig, landed, { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: 'pk3' }),
        'invalid_grant',
      );
    });
  });

  describe('authorization errors (RFC 6749 4.1.2.1, OIDC Core 3.1.2.6)', () => {
    test('an unregistered redirect_uri shows an error page on the server (400, HTML) and never reaches the relying party', async (t) => {
      const { page, visited } = await freshPage(t);
      const url = new URL('/oauth/v2/authorize', world.issuer);
      url.search = new URLSearchParams({
        client_id: web.clientId,
        redirect_uri: `${rp.origin}/evil`,
        response_type: 'code',
        scope: 'openid',
        state: 'e1',
      }).toString();
      const response = await page.goto(url.href);
      assert.equal(response?.status(), 400);
      assert.match(response?.headers()['content-type'] ?? '', /text\/html/);
      assert.ok(page.url().startsWith(world.issuer), page.url());
      assert.match((await page.textContent('body')) ?? '', /redirect_uri/);
      await screenshot(page, 'rp-error-page');
      assert.deepEqual(
        visited.filter((u) => u.startsWith(rp.origin)),
        [],
        'no request reached the relying party',
      );
    });

    test('a missing redirect_uri shows an error page on the server', async (t) => {
      const { page, visited } = await freshPage(t);
      const url = new URL('/oauth/v2/authorize', world.issuer);
      url.search = new URLSearchParams({ client_id: web.clientId, response_type: 'code', scope: 'openid', state: 'e2' }).toString();
      const response = await page.goto(url.href);
      assert.equal(response?.status(), 400);
      assert.match(response?.headers()['content-type'] ?? '', /text\/html/);
      assert.deepEqual(
        visited.filter((u) => u.startsWith(rp.origin)),
        [],
      );
    });

    test('missing openid is invalid_scope at the redirect', async (t) => {
      // OIDC Core 3.1.2.1: scope must contain openid; docs/oidc.md: without it the app receives invalid_scope.
      const { page } = await freshPage(t);
      const verifier = client.randomPKCECodeVerifier();
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', web.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'code'],
        ['scope', 'profile email'],
        ['state', 'e3'],
        ['code_challenge', await client.calculatePKCECodeChallenge(verifier)],
        ['code_challenge_method', 'S256'],
      ]);
      assert.equal(received.get('error'), 'invalid_scope', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'e3');
    });

    test('missing openid with response_type id_token token is invalid_scope at the redirect', async (t) => {
      const { page } = await freshPage(t);
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', implicit.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'id_token token'],
        ['scope', 'profile'],
        ['state', 'e4'],
        ['nonce', 'n4'],
      ]);
      assert.equal(received.get('error'), 'invalid_scope', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'e4');
    });

    test('an unknown response_type is unsupported_response_type at the redirect', async (t) => {
      const { page } = await freshPage(t);
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', web.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'token'],
        ['scope', 'openid'],
        ['state', 'e5'],
      ]);
      assert.equal(received.get('error'), 'unsupported_response_type', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'e5');
    });

    test('a response type the app is not allowed is unauthorized_client at the redirect', async (t) => {
      const { page } = await freshPage(t);
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', web.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'id_token token'],
        ['scope', 'openid'],
        ['state', 'e6'],
        ['nonce', 'n6'],
      ]);
      assert.equal(received.get('error'), 'unauthorized_client', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'e6');
    });

    test('a repeated parameter (scope twice) is invalid_request at the redirect', async (t) => {
      const { page } = await freshPage(t);
      const verifier = client.randomPKCECodeVerifier();
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', web.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'code'],
        ['scope', 'openid'],
        ['scope', 'openid profile'],
        ['state', 'e7'],
        ['code_challenge', await client.calculatePKCECodeChallenge(verifier)],
        ['code_challenge_method', 'S256'],
      ]);
      assert.equal(received.get('error'), 'invalid_request', received.get('error_description') ?? '');
      assert.equal(received.get('state'), 'e7');
    });
  });

  describe('userinfo refuses bad tokens (RFC 6750 3.1, docs/oidc.md)', () => {
    test('a request without an access token is 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
      const response = await userinfo();
      assert.equal(((await response.json()) as { error?: string }).error, 'invalid_token');
      assertInvalidToken(response, 'no token');
    });

    test('a garbage access token is 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
      assertInvalidToken(await userinfo('garbage.token.value'), 'a garbage token');
    });

    test('a revoked access token is 401 with WWW-Authenticate: Bearer error="invalid_token"', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid');
      assert.equal((await userinfo(tokens.access_token)).status, 200, 'the fresh token works');
      await client.tokenRevocation(webConfig, tokens.access_token);
      assertInvalidToken(await userinfo(tokens.access_token), 'a revoked token');
    });
  });

  describe('end session (OIDC RP-Initiated Logout 1.0, docs/oidc.md)', () => {
    function endSessionUrl(params: Record<string, string>): string {
      return client.buildEndSessionUrl(webConfig, params).href;
    }

    test('logout redirects to the registered post-logout URI with state, without a confirmation page, and the session access token stops working', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid profile');
      assert.equal((await userinfo(tokens.access_token)).status, 200);
      await page.goto(endSessionUrl({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: rp.loggedOut, state: 's1' }));
      const landed = await landedOn(page, rp.loggedOut);
      assert.equal(landed.searchParams.get('state'), 's1');
      assertInvalidToken(await userinfo(tokens.access_token), 'the access token of the ended session');
    });

    test('with offline_access the session access token stops working at logout, but the refresh token outlives the browser session', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid profile offline_access');
      assert.ok(tokens.refresh_token);
      await page.goto(endSessionUrl({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: rp.loggedOut, state: 's2' }));
      assert.equal((await landedOn(page, rp.loggedOut)).searchParams.get('state'), 's2');
      assertInvalidToken(await userinfo(tokens.access_token), 'the access token of the ended session');
      // Intended: offline access is access without the user present (OIDC Core 11).
      const refreshed = await client.refreshTokenGrant(webConfig, tokens.refresh_token!);
      assert.equal((await userinfo(refreshed.access_token)).status, 200, 'an access token from the refresh token works');
    });

    test('without a post-logout URI the service shows its own signed-out page', async (t) => {
      const { page } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid');
      await page.goto(endSessionUrl({ id_token_hint: tokens.id_token! }));
      await page.waitForSelector('text=You are signed out');
      assert.ok(page.url().startsWith(world.issuer), page.url());
      await screenshot(page, 'rp-logged-out');
      assertInvalidToken(await userinfo(tokens.access_token), 'the access token of the ended session');
    });

    test('an unregistered post_logout_redirect_uri is never redirected to', async (t) => {
      const { page, visited } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid');
      const elsewhere = `${rp.origin}/elsewhere`;
      const response = await page.goto(endSessionUrl({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: elsewhere, state: 's3' }));
      await page.waitForLoadState('load');
      assert.ok(page.url().startsWith(world.issuer), `stays on the service, but is on ${page.url()}`);
      assert.ok(response && response.status() === 400, `an error page (400), got ${response?.status()}`);
      await screenshot(page, 'rp-logout-error');
      assert.deepEqual(
        visited.filter((u) => u.startsWith(elsewhere)),
        [],
        'the unregistered URI was never requested',
      );
    });

    test('a client_id that does not match the id_token_hint is an error (400), without redirect', async (t) => {
      const { page, visited } = await freshPage(t);
      const { tokens } = await userLogin(page, webConfig, 'openid');
      const visitedBefore = visited.length;
      const response = await page.goto(
        endSessionUrl({ id_token_hint: tokens.id_token!, client_id: webAssert.clientId, post_logout_redirect_uri: rp.loggedOut, state: 's4' }),
      );
      assert.equal(response?.status(), 400);
      assert.ok(page.url().startsWith(world.issuer), page.url());
      assert.deepEqual(
        visited.slice(visitedBefore).filter((u) => u.startsWith(rp.origin)),
        [],
        'no redirect to the relying party',
      );
      assert.equal((await userinfo(tokens.access_token)).status, 200, 'the session was not ended');
    });
  });

  describe('implicit flow', () => {
    async function implicitLogin(t: TestContext, app: App, responseType: string, scope = 'openid profile email'): Promise<URLSearchParams> {
      const { page } = await freshPage(t);
      const url = new URL('/oauth/v2/authorize', world.issuer);
      url.search = new URLSearchParams({
        client_id: app.clientId,
        redirect_uri: rp.callback,
        response_type: responseType,
        scope,
        state: 'i1',
        nonce: 'n-implicit',
      }).toString();
      await page.goto(url.href);
      await signIn(page, user);
      const landed = await landedOn(page, rp.callback);
      assert.equal(landed.search, '', 'implicit responses travel in the fragment');
      return new URLSearchParams(landed.hash.slice(1));
    }

    test('id_token token returns access_token, id_token, token_type, expires_in and state in the fragment; the ID token has at_hash and no profile or email claims', async (t) => {
      const fragment = await implicitLogin(t, implicit, 'id_token token');
      for (const name of ['access_token', 'id_token', 'token_type', 'expires_in', 'state']) assert.ok(fragment.get(name), `${name} in the fragment`);
      assert.equal(fragment.get('token_type')!.toLowerCase(), 'bearer');
      assert.equal(fragment.get('state'), 'i1');
      const idToken = await verifyIdToken(fragment.get('id_token')!, implicit.clientId);
      assert.equal(idToken.sub, user.userId);
      assert.equal(idToken.nonce, 'n-implicit');
      assert.ok(idToken.at_hash, 'at_hash binds the access token');
      for (const claim of SCOPED_CLAIMS) assert.equal(idToken[claim], undefined, `the ID token should not carry ${claim}`);
      const info = await userinfo(fragment.get('access_token')!);
      assert.equal(info.status, 200);
      assert.equal(((await info.json()) as { email?: string }).email, 'user@acme.example.test');
    });

    test('id_token token with idTokenUserinfoAssertion puts name and email into the ID token', async (t) => {
      const fragment = await implicitLogin(t, implicitAssert, 'id_token token');
      const idToken = await verifyIdToken(fragment.get('id_token')!, implicitAssert.clientId);
      assert.equal(idToken.name, 'Ursula User');
      assert.equal(idToken.preferred_username, 'user@acme.example.test');
      assert.equal(idToken.email, 'user@acme.example.test');
      assert.ok(idToken.at_hash);
    });

    test('id_token alone carries the profile and email claims, and no access token is issued', async (t) => {
      const fragment = await implicitLogin(t, implicit, 'id_token');
      assert.equal(fragment.get('access_token'), null);
      assert.equal(fragment.get('token_type'), null);
      const idToken = await verifyIdToken(fragment.get('id_token')!, implicit.clientId);
      assert.equal(idToken.name, 'Ursula User');
      assert.equal(idToken.given_name, 'Ursula');
      assert.equal(idToken.email, 'user@acme.example.test');
      assert.equal(idToken.at_hash, undefined);
    });

    test('implicit without nonce is an error at the redirect, in the fragment', async (t) => {
      const { page } = await freshPage(t);
      const received = await authorizeExpectingRedirect(page, [
        ['client_id', implicit.clientId],
        ['redirect_uri', rp.callback],
        ['response_type', 'id_token token'],
        ['scope', 'openid'],
        ['state', 'i2'],
      ]);
      const fragment = new URLSearchParams(new URL(page.url()).hash.slice(1));
      assert.equal(fragment.get('error'), 'invalid_request', received.get('error_description') ?? '');
      assert.equal(fragment.get('state'), 'i2');
    });
  });
});
