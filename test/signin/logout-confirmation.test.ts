import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import {
  codeLogin,
  confidentialAppFor,
  landedOn,
  launchBrowser,
  needsChromium,
  screenshot,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  rpConfig,
} from '../support/browser.ts';

// RP-Initiated Logout 1.0 2 and 6 (docs/oidc.md, end session): without a
// valid id_token_hint of the signed-in user, end_session asks the user
// first, so a link from any site cannot sign anyone out; with one, the
// logout goes straight to the app's post_logout_redirect_uri with its state.

describe('in Chromium', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let user: TestUser;
  let claimant: TestUser;
  let config: client.Configuration;

  before(async () => {
    [world, rp, browser] = await Promise.all([startSignInWorld(), startRelyingParty(), launchBrowser()]);
    const app = await world.createApp({ name: 'Shop', ...confidentialAppFor(rp) });
    user = await world.createUser('leaver', { firstName: 'Lea', lastName: 'Ver' });
    claimant = await world.createUser('claimant', { firstName: 'Clara', lastName: 'Claimant' });
    config = await rpConfig(world, app);
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await world?.stop();
  });

  /** An authorization request of the app (PKCE, openid) with `params`, opened in `page`; the verifier is not needed. */
  async function openAuthorization(page: Page, params: Record<string, string>): Promise<void> {
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: rp.callback,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      ...params,
    });
    await page.goto(url.href);
  }

  /** A page in a fresh browser context, closed with the test. */
  async function freshPage(t: TestContext, locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ locale });
    t.after(() => context.close());
    return context.newPage();
  }

  describe('logout confirmation', () => {
    async function signedIn(t: TestContext, locale = 'en-US'): Promise<{ page: Page; idToken: string; accessToken: string }> {
      const page = await freshPage(t, locale);
      const { tokens } = await codeLogin(page, config, rp, user, 'openid profile');
      return { page, idToken: tokens.id_token!, accessToken: tokens.access_token };
    }

    function userinfoStatus(accessToken: string): Promise<number> {
      return fetch(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }).then((r) => r.status);
    }

    /** A silent authorization (prompt=none) in the browser: a code while its session lives, login_required once it ended. */
    async function silentAuthorization(page: Page): Promise<URLSearchParams> {
      await openAuthorization(page, { prompt: 'none', state: 'silent' });
      return (await landedOn(page, rp.callback)).searchParams;
    }

    test('a cross-site link to end_session without a hint shows the confirmation; the session lives until "Sign out" is clicked', async (t) => {
      const { page, accessToken } = await signedIn(t);
      // Another site sends the browser to end_session, as a link or redirect would.
      rp.serve('/evil', `<!doctype html><a id="go" href="${world.issuer}/oidc/v1/end_session">news</a>`);
      await page.goto(`${rp.origin}/evil`);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().startsWith(`${world.issuer}/oidc/v1/end_session`)), page.click('#go')]);
      assert.equal(answer.status(), 200);
      await page.waitForSelector('h1:text("Sign out?")');
      const headers = answer.headers();
      assert.match(headers['content-security-policy'] ?? '', /script-src 'self'/);
      assert.doesNotMatch(headers['content-security-policy'] ?? '', /unsafe-inline/);
      assert.equal(headers['x-frame-options'], 'DENY');
      assert.equal(headers['cache-control'], 'no-store');
      assert.doesNotMatch(await answer.text(), /<script/, 'the confirmation submits nothing by itself');
      await screenshot(page, 'logout-confirmation');

      // Still signed in: the page waited, and so does the session.
      await page.waitForTimeout(500);
      assert.equal(await userinfoStatus(accessToken), 200, 'the access token of the session still works');
      const silent = await silentAuthorization(page);
      assert.ok(silent.get('code'), `prompt=none still gets a code: ${silent}`);

      await page.goto(`${world.issuer}/oidc/v1/end_session`);
      await page.click('button:text("Sign out")');
      await page.waitForSelector('text=You are signed out');
      assert.equal(await userinfoStatus(accessToken), 401, 'the session ended with the click');
      assert.equal((await silentAuthorization(page)).get('error'), 'login_required');
    });

    test("the confirmation is a form with the engine's CSRF field; a cross-site POST to the confirm step without it signs nobody out", async (t) => {
      const { page, accessToken } = await signedIn(t);
      await page.goto(`${world.issuer}/oidc/v1/end_session?client_id=${encodeURIComponent(config.clientMetadata().client_id)}`);
      const form = page.locator('form[method="post"]');
      assert.equal(await form.getAttribute('action'), `${world.issuer}/oidc/v1/end_session/confirm`);
      assert.ok(await form.locator('input[name="xsrf"]').getAttribute('value'), 'the form carries the xsrf secret');

      rp.serve(
        '/forge',
        `<!doctype html><form method="post" action="${world.issuer}/oidc/v1/end_session/confirm"><input name="logout" value="yes"><input name="xsrf" value="guessed"><button id="send">go</button></form>`,
      );
      await page.goto(`${rp.origin}/forge`);
      await Promise.all([page.waitForLoadState('load'), page.click('#send')]);
      await page.waitForLoadState('load');
      assert.equal(await userinfoStatus(accessToken), 200, 'a forged confirmation leaves the session alone');
    });

    test('the confirmation speaks German when the browser asks for it', async (t) => {
      const { page, accessToken } = await signedIn(t, 'de-DE');
      await page.goto(`${world.issuer}/oidc/v1/end_session`);
      await page.waitForSelector('h1:text("Abmelden?")');
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      await page.click('button:text("Abmelden")');
      await page.waitForSelector('text=Sie sind abgemeldet');
      assert.equal(await userinfoStatus(accessToken), 401);
    });

    test('with a valid id_token_hint the logout is straight: redirect to post_logout_redirect_uri with state, the session ended', async (t) => {
      const { page, idToken, accessToken } = await signedIn(t);
      await page.goto(client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: rp.loggedOut, state: 'bye-1' }).href);
      const landed = await landedOn(page, rp.loggedOut);
      assert.equal(landed.searchParams.get('state'), 'bye-1');
      assert.equal(await userinfoStatus(accessToken), 401);
    });

    test('an id_token_hint whose signature does not verify is an error page: no logout, no redirect', async (t) => {
      const { page, idToken, accessToken } = await signedIn(t);
      const [header, payload, signature] = idToken.split('.');
      const forged = `${header}.${payload}.${signature!.slice(0, -4)}${signature!.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      const response = await page.goto(client.buildEndSessionUrl(config, { id_token_hint: forged, post_logout_redirect_uri: rp.loggedOut, state: 'x' }).href);
      assert.equal(response?.status(), 400);
      assert.ok(page.url().startsWith(world.issuer), page.url());
      assert.equal(await userinfoStatus(accessToken), 200);
    });
  });

  // OIDC Core 5.5 (the claims parameter) and 2 / 3.1.2.1 (acr_values): the
  // engine's claimsParameter is on, and every login says the acr it achieved.
  describe('claims parameter and acr', () => {
    async function login(t: TestContext, scope: string, extra: Record<string, string>) {
      return codeLogin(await freshPage(t), config, rp, claimant, scope, extra);
    }

    test('discovery says the claims parameter is supported and which acr values a login achieves', () => {
      const metadata = config.serverMetadata();
      assert.equal(metadata.claims_parameter_supported, true);
      assert.deepEqual(metadata.acr_values_supported, ['pwd', 'mfa']);
    });

    test('a claim named for the ID token in the claims parameter is in the ID token, beside an access token; one for userinfo at userinfo', async (t) => {
      const { tokens } = await login(t, 'openid', { claims: JSON.stringify({ id_token: { email: { essential: true } }, userinfo: { name: null } }) });
      const claims = tokens.claims()!;
      assert.equal(claims.email, 'claimant@acme.example.test');
      assert.equal(claims.name, undefined, 'not asked for in the ID token');
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      assert.equal(info.name, 'Clara Claimant');
      assert.equal(info.email, undefined, 'userinfo gives what its part of the request named (and the scopes), no more');
    });

    test('without the claims parameter the same request keeps the ID token lean (OIDC Core 5.4)', async (t) => {
      const { tokens } = await login(t, 'openid email', {});
      assert.equal(tokens.claims()!.email, undefined);
    });

    test('acr_values is answered: a password login carries acr "pwd"', async (t) => {
      const { tokens } = await login(t, 'openid', { acr_values: 'pwd' });
      assert.equal(tokens.claims()!.acr, 'pwd');
      assert.deepEqual(tokens.claims()!.amr, ['pwd']);
    });

    test('an acr of mfa asked for in the claims parameter is required like acr_values=mfa: the password alone does not finish the login', async (t) => {
      const page = await freshPage(t);
      await openAuthorization(page, { claims: JSON.stringify({ id_token: { acr: { essential: true, values: ['mfa'] } } }), state: 'c2' });
      await signIn(page, claimant);
      await page.waitForSelector('.qr svg');
      assert.ok(page.url().startsWith(world.issuer), `the set-up of a second factor, not the app: ${page.url()}`);
    });

    test('a malformed claims parameter is invalid_request at the redirect URI', async (t) => {
      const page = await freshPage(t);
      await openAuthorization(page, { claims: '{not json', state: 'c1' });
      const landed = await landedOn(page, rp.callback);
      assert.equal(landed.searchParams.get('error'), 'invalid_request');
      assert.equal(landed.searchParams.get('state'), 'c1');
    });
  });
});
