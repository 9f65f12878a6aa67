import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, needsChromium, signIn, startSignInWorld, type SignInWorld, type TestUser } from '../support/browser.ts';
import { discoverClients, type Clients } from '../support/tokens.ts';
import { basicAuth } from '../support/code-flow.ts';

// Device authorization (RFC 8628) through openid-client: the device asks
// for a code and polls while a person types the code into the user-code
// page in Chromium (English and German, any case, with or without the
// dash), confirms the app, signs in, and sees the success page; slow_down,
// access_denied and expired_token as RFC 8628 3.5 says.

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';

describe('in Chromium', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let clients: Clients;
  let browser: Browser;
  let user: TestUser;
  let tv: { appId: string; clientId: string };
  let web: { appId: string; clientId: string; clientSecret?: string };
  let config: client.Configuration;

  before(async () => {
    [world, browser] = await Promise.all([startSignInWorld(), launchBrowser()]);
    clients = await discoverClients(world.issuer);
    [tv, web, user] = await Promise.all([
      world.createApp({
        name: 'Living-room TV',
        appType: 'OIDC_APP_TYPE_NATIVE',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
        grantTypes: ['OIDC_GRANT_TYPE_DEVICE_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
      }),
      world.createApp({ name: 'Web', redirectUris: ['https://web.example.com/cb'] }),
      world.createUser('telly'),
    ]);
    config = clients.config(tv.clientId, client.None());
  });

  after(async () => {
    await browser?.close();
    await world?.stop();
  });

  async function freshPage(locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ locale });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    return page;
  }

  /** Fetches the token endpoint once for a device code, as a device polls. */
  async function poll(deviceCode: string) {
    const res = await fetch(`${world.issuer}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: DEVICE_CODE, device_code: deviceCode, client_id: tv.clientId }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  /** Types `code` into the user-code page and answers the page that follows. */
  async function enterCode(page: Page, code: string): Promise<void> {
    await page.goto(`${world.issuer}/ui/login/device`);
    await page.fill('#user_code', code);
    await page.click('button[type=submit]');
  }

  test('discovery names the device endpoint and grant', () => {
    assert.equal(clients.metadata.device_authorization_endpoint, `${world.issuer}/oauth/v2/device_authorization`);
    assert.ok((clients.metadata.grant_types_supported as string[]).includes(DEVICE_CODE));
  });

  test('the device polls while the user types the code (lower case, no dash) in German, confirms the app and signs in', async () => {
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile offline_access' });
    assert.equal(started.verification_uri, `${world.issuer}/ui/login/device`);
    assert.equal(started.interval, 5);
    assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const polled = client.pollDeviceAuthorizationGrant(config, started);

    const page = await freshPage('de-DE');
    await page.goto(started.verification_uri);
    assert.equal(await page.textContent('h1'), 'Gerät verbinden');
    await page.fill('#user_code', started.user_code.replace('-', '').toLowerCase());
    await page.click('button[type=submit]');
    // The confirmation names the app and shows the code as the device does.
    assert.equal(await page.textContent('h1'), 'Gerät bestätigen');
    assert.match((await page.textContent('main'))!, /Living-room TV/);
    assert.equal(await page.textContent('#confirmCode'), started.user_code);
    await page.click('button[name=confirm]');
    await signIn(page, user);
    await page.waitForSelector('text=Gerät verbunden');
    assert.match((await page.textContent('main'))!, /Living-room TV/);
    await page.context().close();

    const tokens = await polled;
    assert.equal(tokens.claims()?.sub, user.userId);
    assert.ok(tokens.refresh_token, 'offline_access gives the device a refresh token');
    const info = await client.fetchUserInfo(config, tokens.access_token, user.userId);
    assert.equal(info.preferred_username, user.loginName);
    // The code is used up: the page refuses it now.
    const again = await freshPage();
    await enterCode(again, started.user_code);
    assert.match((await again.textContent('[role=alert]'))!, /not valid/);
    await again.context().close();
  });

  test('polling faster than the interval is slow_down (and stays pending otherwise)', async () => {
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const first = await poll(started.device_code);
    assert.equal(first.status, 400);
    assert.equal(first.body.error, 'authorization_pending');
    const second = await poll(started.device_code);
    assert.equal(second.status, 400);
    assert.equal(second.body.error, 'slow_down');
  });

  test('verification_uri_complete leads straight to the confirmation; cancel there: the device gets access_denied', async () => {
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    assert.ok(started.verification_uri_complete);
    const page = await freshPage();
    await page.goto(started.verification_uri_complete);
    await page.waitForSelector('button[name=abort]');
    assert.equal(await page.textContent('h1'), 'Confirm the device');
    assert.equal(await page.textContent('#confirmCode'), started.user_code);
    await page.click('button[name=abort]');
    assert.match((await page.textContent('[role=status]'))!, /cancelled/);
    await page.context().close();
    const answer = await poll(started.device_code);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'access_denied');
  });

  test('an expired device code is expired_token', async () => {
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    // Ten minutes later, without the wait: the stored code's expiry moved into the past.
    const provider = world.server.running.engine.provider;
    const code = await provider.DeviceCode.find(started.device_code);
    assert.ok(code);
    const { jti } = code as unknown as { jti: string };
    const stored = await provider.DeviceCode.adapter.find(jti);
    await provider.DeviceCode.adapter.upsert(jti, { ...stored!, exp: Math.floor(Date.now() / 1000) - 1 }, 60);
    const answer = await poll(started.device_code);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'expired_token');
  });

  test("a wrong code shows the page again with an error, in the browser's language", async () => {
    const page = await freshPage();
    await enterCode(page, 'BCDF-GHJK');
    assert.equal(await page.textContent('h1'), 'Connect a device');
    assert.match((await page.textContent('[role=alert]'))!, /not valid/);
    await page.fill('#user_code', '');
    await page.click('button[type=submit]');
    assert.match((await page.textContent('[role=alert]'))!, /not valid/);
    await page.context().close();
  });

  describe('bad requests: the RFC error, never 5xx', () => {
    async function authorizeDevice(body: Record<string, string>, headers: Record<string, string> = {}) {
      const res = await fetch(`${world.issuer}/oauth/v2/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    }

    test('no client at all: 401 invalid_client', async () => {
      const res = await authorizeDevice({ scope: 'openid' });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'invalid_client');
    });

    test('an app without the DEVICE_CODE grant: 400 unauthorized_client', async () => {
      const res = await authorizeDevice({ scope: 'openid' }, { authorization: basicAuth(web.clientId, web.clientSecret!) });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'unauthorized_client', JSON.stringify(res.body));
    });

    test('an unknown device code: 400 invalid_grant', async () => {
      const res = await poll('not-a-device-code');
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_grant');
    });

    test('a user-code form posted without its browser session goes back to a fresh form', async () => {
      const res = await fetch(`${world.issuer}/ui/login/device`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'user_code=BCDF-GHJK',
      });
      assert.equal(res.status, 303);
      assert.equal(new URL(res.headers.get('location')!, world.issuer).pathname, '/ui/login/device');
    });

    test('a user-code form with a wrong anti-forgery token: the form again with an error, never 5xx', async () => {
      const form = await fetch(`${world.issuer}/ui/login/device`);
      const cookie = form.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const res = await fetch(`${world.issuer}/ui/login/device`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'xsrf=forged&user_code=BCDF-GHJK',
      });
      assert.equal(res.status, 400);
      assert.match(await res.text(), /role="alert"/);
    });

    test('the device grant on an app needs no redirect URI, and is shown', async () => {
      const shown = await world.api('GET', `/management/v1/projects/${world.projectId}/apps/${tv.appId}`);
      assert.deepEqual(shown.body.app.grantTypes, ['OIDC_GRANT_TYPE_DEVICE_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN']);
      assert.deepEqual(shown.body.app.responseTypes, []);
      const refused = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, {
        name: 'bad',
        grantTypes: ['OIDC_GRANT_TYPE_DEVICE_CODES'],
      });
      assert.equal(refused.status, 400);
    });
  });
});
