import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser, BrowserContext } from 'playwright-core';
import { ConfigError, loadConfig } from '../../config/load.ts';
import {
  confidentialAppFor,
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
import { testServer, type TestServer } from '../support/server.ts';
import { startTlsProxy, type TlsProxy } from '../support/tls-proxy.ts';

// OIDC Core 3.1.2.1 asks for GET and POST at the authorization endpoint
// (RP-Initiated Logout 1.0 2 likewise at end_session). The engine serves
// POST only with enableHttpPostMethods, which needs SameSite=None session
// cookies: the setting ENABLE_HTTP_POST_METHODS, refused with an http
// issuer, and while off a POST there is 405 with Allow, never 404.

describe('ENABLE_HTTP_POST_METHODS at start', () => {
  test('is refused with an http issuer, naming the setting', () => {
    assert.throws(
      () => loadConfig({ ENABLE_HTTP_POST_METHODS: 'true', ISSUER: 'http://id.example.com' }),
      (err: unknown) => err instanceof ConfigError && /ENABLE_HTTP_POST_METHODS/.test(err.message) && /https/.test(err.message),
    );
  });

  test('is accepted with an https issuer, and off by default', () => {
    assert.equal(loadConfig({ ENABLE_HTTP_POST_METHODS: 'true', ISSUER: 'https://id.example.com' }).enableHttpPostMethods, true);
    assert.equal(loadConfig({ ISSUER: 'http://id.example.com' }).enableHttpPostMethods, false);
    assert.throws(() => loadConfig({ ENABLE_HTTP_POST_METHODS: 'maybe' }), /ENABLE_HTTP_POST_METHODS/);
  });
});

describe('POST at authorize and end_session while the setting is off', () => {
  let server: TestServer;

  before(async () => {
    server = await testServer();
  });
  after(async () => {
    await server?.stop();
  });

  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  for (const path of ['/oauth/v2/authorize', '/oidc/v1/end_session']) {
    test(`POST ${path} is 405 with Allow: GET (not 404); GET still reaches the endpoint`, async () => {
      const answer = await fetch(`${server.url}${path}`, { method: 'POST', headers: form, body: 'client_id=x&scope=openid' });
      assert.equal(answer.status, 405);
      assert.deepEqual(
        answer.headers
          .get('allow')
          ?.split(',')
          .map((m) => m.trim()),
        ['GET', 'HEAD'],
      );
      assert.equal(((await answer.json()) as { error?: string }).error, 'invalid_request');
      const get = await fetch(`${server.url}${path}?client_id=unknown`, { redirect: 'manual' });
      assert.notEqual(get.status, 405);
      assert.notEqual(get.status, 404);
    });
  }
});

describe('POST at authorize and end_session with the setting on, behind TLS, in Chromium', { skip: needsChromium }, () => {
  let proxy: TlsProxy;
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let context: BrowserContext;
  let user: TestUser;
  let config: client.Configuration;
  let clientId: string;

  before(async () => {
    proxy = await startTlsProxy();
    [world, rp, browser] = await Promise.all([
      startSignInWorld({ ISSUER: proxy.origin, ENABLE_HTTP_POST_METHODS: 'true' }),
      startRelyingParty(),
      launchBrowser(),
    ]);
    proxy.forwardTo(Number(new URL(world.server.url).port));
    const app = await world.createApp({ name: 'Posting shop', ...confidentialAppFor(rp) });
    clientId = app.clientId;
    user = await world.createUser('poster', { firstName: 'Post', lastName: 'Er' });
    // openid-client talks to the issuer through the proxy's address as the server's own port (no TLS trust needed here).
    const viaServer: client.CustomFetch = (url, options) => fetch(String(url).replace(proxy.origin, world.server.url), options as RequestInit);
    config = await client.discovery(new URL(world.issuer), clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      [client.customFetch]: viaServer,
      execute: [client.allowInsecureRequests],
    });
    context = await browser.newContext({ ignoreHTTPSErrors: true, locale: 'en-US' });
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await rp?.close();
    await world?.stop();
    await proxy?.close();
  });

  /** The relying party's page with a form posting `fields` to `action`, as an app on another site does. */
  function postFrom(name: string, action: string, fields: Record<string, string>): string {
    const inputs = Object.entries(fields)
      .map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replaceAll('&', '&amp;').replaceAll('"', '&quot;')}">`)
      .join('');
    rp.serve(`/${name}`, `<!doctype html><form method="post" action="${action}">${inputs}<button id="go">Continue</button></form>`);
    return `${rp.origin}/${name}`;
  }

  async function authorizationFields(extra: Record<string, string> = {}) {
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const fields = {
      client_id: clientId,
      redirect_uri: rp.callback,
      response_type: 'code',
      scope: 'openid profile',
      state: client.randomState(),
      nonce: client.randomNonce(),
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
      ...extra,
    };
    return { fields, checks: { pkceCodeVerifier, expectedState: fields.state, expectedNonce: fields.nonce } };
  }

  test('a form POST to the authorization endpoint signs in; the code is redeemed by openid-client; the session cookie is SameSite=None and Secure', async () => {
    const page = await context.newPage();
    const { fields, checks } = await authorizationFields({ scope: 'openid profile offline_access' });
    await page.goto(postFrom('login', `${world.issuer}/oauth/v2/authorize`, fields));
    await page.click('#go');
    await signIn(page, user);
    const landed = await landedOn(page, rp.callback);
    const tokens = await client.authorizationCodeGrant(config, landed, checks);
    assert.equal(tokens.claims()!.sub, user.userId);
    assert.ok(tokens.refresh_token, 'offline_access asked for in the form gives a refresh token, as with GET');

    const session = (await context.cookies(world.issuer)).find((c) => c.name === '_session');
    assert.ok(session, 'the engine session cookie is set');
    assert.equal(session.sameSite, 'None');
    assert.equal(session.secure, true);

    // The same browser, signed in: a cross-site POST with prompt=none carries the session and gets a code.
    const silent = await authorizationFields({ prompt: 'none' });
    await page.goto(postFrom('silent', `${world.issuer}/oauth/v2/authorize`, silent.fields));
    await page.click('#go');
    const again = await landedOn(page, rp.callback);
    assert.ok(again.searchParams.get('code'), `a code, not ${again.search}`);
    const second = await client.authorizationCodeGrant(config, again, silent.checks);

    // A cross-site POST to end_session with the app's ID token: straight logout, back with state.
    await page.goto(
      postFrom('logout', `${world.issuer}/oidc/v1/end_session`, {
        id_token_hint: second.id_token!,
        post_logout_redirect_uri: rp.loggedOut,
        state: 'posted-bye',
      }),
    );
    await page.click('#go');
    assert.equal((await landedOn(page, rp.loggedOut)).searchParams.get('state'), 'posted-bye');
    const userinfo = await fetch(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${second.access_token}` } });
    assert.equal(userinfo.status, 401, 'the session ended');
    await page.close();
  });

  test("a POST to end_session with the hint of the browser's other user signs that user out, and only that user", async () => {
    const browserContext = await browser.newContext({ ignoreHTTPSErrors: true, locale: 'en-US' });
    const page = await browserContext.newPage();
    const other = await world.createUser('other-poster', { firstName: 'Other', lastName: 'Poster' });
    const signInBy = async (name: string, who: TestUser, extra: Record<string, string> = {}) => {
      const { fields, checks } = await authorizationFields(extra);
      await page.goto(postFrom(name, `${world.issuer}/oauth/v2/authorize`, fields));
      await page.click('#go');
      await signIn(page, who);
      return client.authorizationCodeGrant(config, await landedOn(page, rp.callback), checks);
    };
    const first = await signInBy('first', user);
    const current = await signInBy('second', other, { prompt: 'login' });

    await page.goto(
      postFrom('logout-first', `${world.issuer}/oidc/v1/end_session`, {
        id_token_hint: first.id_token!,
        post_logout_redirect_uri: rp.loggedOut,
        state: 'first-bye',
      }),
    );
    await page.click('#go');
    assert.equal((await landedOn(page, rp.loggedOut)).searchParams.get('state'), 'first-bye');
    const userinfoOf = (token: string) => fetch(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await userinfoOf(first.access_token)).status, 401, "the hinted user's session ended");
    assert.equal((await userinfoOf(current.access_token)).status, 200, "the other user's session lives on");
    await browserContext.close();
  });

  test('another method at authorize names POST among the allowed ones', async () => {
    const answer = await fetch(`${world.server.url}/oauth/v2/authorize`, { method: 'PUT' });
    assert.equal(answer.status, 405);
    assert.equal(answer.headers.get('allow'), 'GET, HEAD, POST');
  });
});
