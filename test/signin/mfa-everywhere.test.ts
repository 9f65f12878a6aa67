import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import {
  addPasskeyAuthenticator,
  confidentialAppFor,
  landedOn,
  needsChromium,
  startCodeFlow,
  startLoginUi,
  type LoginUi,
  type TestUser,
} from '../support/browser.ts';
import { discoverClients, refused } from '../support/tokens.ts';
import { base32Decode, totpCode, totpStep } from '../../src/domain/totp.ts';

// forceMfa (the org's login policy) holds on every path that yields tokens
// for a user, not only on a fresh browser's login: a browser session signed
// in with the password alone before the org turned it on gets the
// second-factor step (or the set-up) at a plain authorize,
// interaction_required with prompt=none, no device sign-in, and its earlier
// refresh token is invalid_grant; a fresh self-registration sets a factor
// up before the flow finishes. Sessions and refresh tokens with a second
// factor go on working, and a policy that allows passkeys only is set up
// with a passkey. The relying party is openid-client, the device a
// device-flow client of openid-client, the browser Chromium with its
// virtual authenticator.

describe('in Chromium: forceMfa on every path that yields tokens', { skip: needsChromium }, () => {
  let ui: LoginUi<'sam' | 'tia' | 'uma' | 'pat'>;
  let web: client.Configuration;
  let tv: client.Configuration;

  before(async () => {
    ui = await startLoginUi({
      sam: { firstName: 'Sam', lastName: 'Session' },
      tia: { firstName: 'Tia', lastName: 'Totp' },
      uma: { firstName: 'Uma', lastName: 'Later' },
      pat: { firstName: 'Pat', lastName: 'Passkey' },
    });
    const [app, device, clients] = await Promise.all([
      ui.world.createApp(confidentialAppFor(ui.rp)),
      ui.world.createApp({
        name: 'Living-room TV',
        appType: 'OIDC_APP_TYPE_NATIVE',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
        grantTypes: ['OIDC_GRANT_TYPE_DEVICE_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
      }),
      discoverClients(ui.world.issuer),
    ]);
    web = clients.config(app.clientId, client.ClientSecretBasic(app.clientSecret!));
    tv = clients.config(device.clientId, client.None());
  });
  after(async () => {
    await ui?.stop();
  });

  async function forceMfa(settings: Record<string, unknown> = {}): Promise<void> {
    const policy = await ui.world.api('PUT', '/management/v1/policies/login', { forceMfa: true, ...settings });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
  }

  async function resetPolicy(): Promise<void> {
    assert.equal((await ui.world.api('DELETE', '/management/v1/policies/login')).status, 200);
  }

  /** Starts a code flow of the web app in `p`; `finish` redeems the code the browser lands with. */
  function authorize(p: Page, extra: Record<string, string> = {}) {
    return startCodeFlow(p, web, ui.rp, extra);
  }

  /** The login name (already there when prefilled) and the password. */
  async function password(p: Page, user: TestUser): Promise<void> {
    await p.fill('#loginName', user.loginName);
    await p.click('button[type=submit]');
    await p.fill('#password', user.password);
    await p.click('button[type=submit]');
    await p.waitForLoadState();
  }

  async function submitCode(p: Page, code: string): Promise<void> {
    await p.fill('#code', code);
    await p.click('button[type=submit]');
    await p.waitForLoadState();
  }

  /** The forced set-up page offers an authenticator app: set it up; the recovery codes page goes on with the login. */
  async function setUpApp(p: Page): Promise<void> {
    assert.match((await p.textContent('main')) ?? '', /needs a second factor/);
    const secret = base32Decode((await p.textContent('#otpSecret'))!);
    await submitCode(p, totpCode(secret, totpStep(Date.now())));
    assert.equal((await p.locator('#recoveryCodes code').allTextContents()).length, 10);
    await p.click('button[type=submit]');
  }

  /** Sets up an authenticator app on the security page (its own fresh sign-in); answers its key. */
  async function appOnSecurityPage(p: Page, user: TestUser): Promise<Buffer> {
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    await p.fill('#loginName', user.loginName);
    await p.fill('#password', user.password);
    await p.click('button[type=submit]');
    await p.click('text=Set up an authenticator app');
    const secret = base32Decode((await p.textContent('#otpSecret'))!);
    await submitCode(p, totpCode(secret, totpStep(Date.now())));
    assert.equal((await p.locator('#recoveryCodes code').allTextContents()).length, 10);
    return secret;
  }

  /** The person's half of the device flow: the link with the code, then "confirm"; answers the page that follows. */
  async function confirmDevice(p: Page, started: client.DeviceAuthorizationResponse): Promise<void> {
    await p.goto(started.verification_uri_complete!);
    await p.click('button[name=confirm]');
    await p.waitForLoadState();
  }

  async function devicePoll(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${ui.world.issuer}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: deviceCode,
        client_id: tv.clientMetadata().client_id,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  describe('a password-only session and its refresh token from before the org turned forceMfa on', { concurrency: false }, () => {
    let p: Page;
    let earlier: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;

    before(async () => {
      ({ page: p } = await ui.freshPage());
      const signedIn = await authorize(p, { scope: 'openid offline_access' });
      await password(p, ui.users.sam);
      earlier = await signedIn();
      assert.deepEqual(earlier.claims()?.amr, ['pwd']);
      assert.ok(earlier.refresh_token);
      await forceMfa();
    });
    after(resetPolicy);

    test('prompt=none: interaction_required, no code', async () => {
      await authorize(p, { prompt: 'none', state: 'silent' });
      const silent = (await landedOn(p, ui.rp.callback)).searchParams;
      assert.equal(silent.get('error'), 'interaction_required', silent.toString());
      assert.equal(silent.get('state'), 'silent');
      assert.equal(silent.get('code'), null);
    });

    test('a refresh of the earlier refresh token: invalid_grant', async () => {
      const refresh = await refused(client.refreshTokenGrant(web, earlier.refresh_token!), 'invalid_grant', 400, 'refresh of the earlier refresh token');
      assert.match(refresh.description ?? '', /second factor/);
    });

    test('the device flow in that browser: the sign-in is asked for, the device is not connected', async () => {
      const started = await client.initiateDeviceAuthorization(tv, { scope: 'openid' });
      await confirmDevice(p, started);
      assert.equal(await p.locator('#loginName').count(), 1, 'the login page, not "Device connected"');
      assert.equal((await devicePoll(started.device_code)).body.error, 'authorization_pending');
    });

    test('a plain authorize: the password again, then the set-up; only then a code, with the second factor', async () => {
      const finish = await authorize(p);
      await p.waitForSelector('#loginName');
      assert.equal(await p.inputValue('#loginName'), ui.users.sam.loginName, 'the login page, not the app');
      await password(p, ui.users.sam);
      await setUpApp(p);
      const tokens = await finish();
      assert.deepEqual(tokens.claims()?.amr, ['pwd', 'otp', 'mfa']);
      assert.equal(tokens.claims()?.acr, 'mfa');
    });
  });

  test('a session with a second factor: under forceMfa its refresh token refreshes and the device flow signs in without a page', async () => {
    const tia = ui.users.tia;
    const { page: p } = await ui.freshPage();
    const secret = await appOnSecurityPage(p, tia);
    const signedIn = await authorize(p, { scope: 'openid offline_access' });
    await password(p, tia);
    await submitCode(p, totpCode(secret, totpStep(Date.now()) + 1));
    const first = await signedIn();
    assert.equal(first.claims()?.acr, 'mfa');
    await forceMfa();
    try {
      const refreshed = await client.refreshTokenGrant(web, first.refresh_token!);
      assert.ok(refreshed.access_token);
      assert.equal(refreshed.claims()?.acr, 'mfa');
      assert.deepEqual(refreshed.claims()?.amr, ['pwd', 'otp', 'mfa']);

      const started = await client.initiateDeviceAuthorization(tv, { scope: 'openid' });
      const polled = client.pollDeviceAuthorizationGrant(tv, started);
      await confirmDevice(p, started);
      await p.waitForSelector('text=Device connected');
      const device = await polled;
      assert.equal(device.claims()?.sub, tia.userId);
      assert.deepEqual(device.claims()?.amr, ['pwd', 'otp', 'mfa']);
    } finally {
      await resetPolicy();
    }
  });

  test('a password-only session of a user who has a factor by now: a plain authorize asks for that factor alone', async () => {
    const uma = ui.users.uma;
    const { page: p } = await ui.freshPage();
    const signedIn = await authorize(p);
    await password(p, uma);
    assert.deepEqual((await signedIn()).claims()?.amr, ['pwd']);
    const secret = await appOnSecurityPage(p, uma);
    await forceMfa();
    try {
      const finish = await authorize(p);
      await p.waitForSelector('#code');
      assert.equal(await p.locator('#password').count(), 0, 'the session stands for the password');
      await submitCode(p, totpCode(secret, totpStep(Date.now()) + 1));
      const tokens = await finish();
      assert.equal(tokens.claims()?.sub, uma.userId);
      assert.deepEqual(tokens.claims()?.amr, ['pwd', 'otp', 'mfa']);
      assert.equal(tokens.claims()?.acr, 'mfa');
    } finally {
      await resetPolicy();
    }
  });

  test('self-registration in a forceMfa org sets a factor up before the flow finishes', async () => {
    await forceMfa();
    try {
      const { page: p } = await ui.freshPage();
      const finish = await authorize(p, { prompt: 'create' });
      const email = `reg-${randomUUID().slice(0, 8)}@example.org`;
      const goodPassword = 'Registered-Passw0rd!';
      await p.fill('#givenName', 'Regina');
      await p.fill('#familyName', 'Register');
      await p.fill('#email', email);
      await p.fill('#password', goodPassword);
      await p.fill('#passwordRepeat', goodPassword);
      await p.click('button[type=submit]');
      await p.waitForLoadState();
      assert.ok(new URL(p.url()).pathname.startsWith('/ui/login/'), `no code before the set-up: ${p.url()}`);
      await setUpApp(p);
      const tokens = await finish();
      assert.deepEqual(tokens.claims()?.amr, ['pwd', 'otp', 'mfa']);
      const user = await ui.world.api('GET', `/management/v1/users/${tokens.claims()?.sub}`);
      assert.equal(user.body.user.userName, email, 'the registered user');
    } finally {
      await resetPolicy();
    }
  });

  test('forceMfa with passkeys the only allowed factor: the set-up offers a passkey and the login finishes with it', async () => {
    await forceMfa({ secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' });
    try {
      const { context, page: p } = await ui.freshPage();
      await addPasskeyAuthenticator(context, p);
      const finish = await authorize(p);
      await password(p, ui.users.pat);
      assert.match((await p.textContent('main')) ?? '', /needs a second factor/);
      assert.equal(await p.locator('#otpSecret').count(), 0, 'no authenticator app: the policy allows none');
      await p.click('#passkey-register');
      const tokens = await finish();
      assert.deepEqual(tokens.claims()?.amr, ['pwd', 'hwk', 'mfa']);
      assert.equal(tokens.claims()?.acr, 'mfa');
      const factors = await ui.world.api('GET', `/management/v1/users/${ui.users.pat.userId}/auth_factors`);
      assert.equal(factors.body.result.length, 1);
      assert.ok(factors.body.result[0].u2f, JSON.stringify(factors.body));
    } finally {
      await resetPolicy();
    }
  });
});
