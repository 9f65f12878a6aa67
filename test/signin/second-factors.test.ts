import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { confidentialAppFor, landedOn, needsChromium, screenshot, signIn, startLoginUi, type LoginUi } from '../support/browser.ts';
import { base32Decode, totpCode, totpStep } from '../../src/domain/totp.ts';

// An authenticator app (RFC 6238) set up by the user on /ui/login/security,
// then asked for after the password; recovery codes; amr in the ID token
// (RFC 8176) as a relying party (openid-client) reads it; wrong codes count
// towards the lockout policy; an admin removes a lost device's app.

describe('in Chromium: second factors with an authenticator app', { skip: needsChromium }, () => {
  let ui: LoginUi<'tess' | 'nora'>;
  let config: client.Configuration;
  let secret: Buffer;
  let recovery: string[];
  const cspViolations: string[] = [];

  before(async () => {
    ui = await startLoginUi({ tess: { firstName: 'Tess', lastName: 'Totp' }, nora: { firstName: 'Nora', lastName: 'Nofactor' } });
    const app = await ui.world.createApp(confidentialAppFor(ui.rp));
    config = await client.discovery(new URL(ui.world.issuer), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await ui?.stop();
  });

  async function page(): Promise<Page> {
    const { page } = await ui.freshPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    return page;
  }

  async function alert(p: Page): Promise<string> {
    return ((await p.textContent('[role=alert]')) ?? '').trim();
  }

  async function submitCode(p: Page, code: string): Promise<void> {
    await p.fill('#code', code);
    await p.click('button[type=submit]');
    await p.waitForLoadState();
  }

  /** Starts a code flow and signs in with the password; the caller goes on from the page it stops at. */
  async function startLogin(p: Page, user: { loginName: string; password: string }) {
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const expectedNonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: ui.rp.callback,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
      nonce: expectedNonce,
    });
    await p.goto(url.href);
    await signIn(p, user);
    await p.waitForLoadState();
    return async () => {
      const landed = await landedOn(p, ui.rp.callback);
      const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier, expectedNonce });
      return tokens.claims()!;
    };
  }

  test('set-up on the security page: a fresh sign-in, QR code as inline SVG, confirmed by a code; bad codes are refused; ten recovery codes', async () => {
    const tess = ui.users.tess;
    const p = await page();
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    await p.fill('#loginName', tess.loginName);
    await p.fill('#password', 'not-the-password');
    await p.click('button[type=submit]');
    assert.match(await alert(p), /login name or password is wrong/);
    await p.fill('#password', tess.password);
    await p.click('button[type=submit]');
    assert.equal((await p.textContent('#otpState'))?.trim(), 'Not set up');
    await p.click('text=Set up an authenticator app');
    assert.equal((await p.locator('.qr svg path').count()) > 0, true, 'the QR code is inline SVG');
    await screenshot(p, 'security-otp-setup');
    secret = base32Decode((await p.textContent('#otpSecret'))!);
    assert.equal(secret.length, 20);

    for (const [code, message] of [
      ['', /Enter the 6 digits/],
      ['1234567', /Enter the 6 digits/],
      [totpCode(secret, totpStep(Date.now()) - 5), /wrong or was already used/],
    ] as const) {
      await submitCode(p, code);
      assert.match(await alert(p), message, `code ${JSON.stringify(code)}`);
    }
    let factors = await ui.world.api('GET', `/management/v1/users/${tess.userId}/auth_factors`);
    assert.deepEqual(factors.body, { result: [{ otp: {}, state: 'AUTH_FACTOR_STATE_NOT_READY' }] }, 'bad codes confirm nothing');

    await submitCode(p, totpCode(secret, totpStep(Date.now())));
    recovery = (await p.locator('#recoveryCodes code').allTextContents()).map((c) => c.trim());
    assert.equal(recovery.length, 10);
    assert.equal(new Set(recovery).size, 10);
    factors = await ui.world.api('GET', `/management/v1/users/${tess.userId}/auth_factors`);
    assert.deepEqual(factors.body, { result: [{ otp: {}, state: 'AUTH_FACTOR_STATE_READY' }] });
    const { rows } = await ui.world.server.running.db.query<{ secret: Uint8Array }>('SELECT secret FROM user_otp WHERE user_id = $1', [tess.userId]);
    assert.ok(!Buffer.from(rows[0]!.secret).includes(secret), 'the secret is sealed at rest');
    const digests = await ui.world.server.running.db.query<{ digest: Uint8Array }>('SELECT digest FROM user_recovery_codes WHERE user_id = $1', [tess.userId]);
    assert.equal(digests.rows.length, 10);
    assert.ok(
      digests.rows.every((r) => !recovery.some((code) => Buffer.from(r.digest).includes(Buffer.from(code)))),
      'recovery codes are stored as digests only',
    );

    // The security page asks for a code too, now.
    await p.click('text=Done');
    await p.click('text=Sign out');
    await p.fill('#loginName', tess.loginName);
    await p.fill('#password', tess.password);
    await p.click('button[type=submit]');
    assert.equal(await p.locator('#code').count(), 1, 'a code is asked for');
  });

  test('login asks for the code after the password; amr is pwd otp mfa; a code is accepted once; a recovery code works once', async () => {
    const tess = ui.users.tess;
    const first = await page();
    const finishFirst = await startLogin(first, tess);
    await screenshot(first, 'login-otp');
    for (const code of ['', '1234567', 'abc']) {
      await submitCode(first, code);
      assert.match(await alert(first), /Enter the 6 digits/, `code ${JSON.stringify(code)}`);
    }
    const code = totpCode(secret, totpStep(Date.now()) + 1);
    await submitCode(first, code);
    const claims = await finishFirst();
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.sub, tess.userId);

    const replay = await page();
    const finishReplay = await startLogin(replay, tess);
    await submitCode(replay, code);
    assert.match(await alert(replay), /wrong or was already used/, 'the same code again is refused');
    await submitCode(replay, totpCode(secret, totpStep(Date.now()) - 1));
    assert.match(await alert(replay), /wrong or was already used/, 'an earlier step is refused');
    await submitCode(replay, recovery[0]!.toUpperCase());
    assert.deepEqual((await finishReplay()).amr, ['pwd', 'otp', 'mfa'], 'a recovery code counts as otp');

    const again = await page();
    await startLogin(again, tess);
    await submitCode(again, recovery[0]!);
    assert.match(await alert(again), /wrong or was already used/, 'a recovery code works once');
  });

  test('a user without a factor signs in with the password alone: amr is pwd', async () => {
    const p = await page();
    const finish = await startLogin(p, ui.users.nora);
    assert.deepEqual((await finish()).amr, ['pwd']);
  });

  test('wrong codes count towards maxOtpAttempts: the user is locked; an unlock restores the login', async () => {
    const tess = ui.users.tess;
    const policy = await ui.world.api('PUT', '/management/v1/policies/lockout', { maxPasswordAttempts: 10, maxOtpAttempts: 3, lockoutDurationSeconds: 0 });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    // A right code starts the count again (the last test left one wrong code).
    const before = await page();
    const finishBefore = await startLogin(before, tess);
    await submitCode(before, recovery[1]!);
    await finishBefore();
    const p = await page();
    await startLogin(p, tess);
    const wrong = String((Number(totpCode(secret, totpStep(Date.now()))) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 2; i++) {
      await submitCode(p, wrong);
      assert.match(await alert(p), /wrong or was already used/);
    }
    await submitCode(p, wrong);
    assert.match(await alert(p), /This account is locked/);
    assert.equal((await ui.world.api('GET', `/management/v1/users/${tess.userId}`)).body.user.state, 'USER_STATE_LOCKED');
    await submitCode(p, recovery[2]!);
    assert.match(await alert(p), /This account is locked/, 'locked: a right code does not sign in either');
    assert.equal((await ui.world.api('POST', `/management/v1/users/${tess.userId}/_unlock`, {})).status, 200);
    await ui.world.api('DELETE', '/management/v1/policies/lockout');
  });

  test('an admin removes the app of a lost device: user.otp.removed, then the password alone signs in', async () => {
    const tess = ui.users.tess;
    const missing = await ui.world.api('GET', '/management/v1/users/999999999/auth_factors');
    assert.equal(missing.status, 404);
    const removed = await ui.world.api('DELETE', `/management/v1/users/${tess.userId}/auth_factors/otp`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal((await ui.world.api('DELETE', `/management/v1/users/${tess.userId}/auth_factors/otp`)).status, 404, 'nothing left to remove');
    assert.deepEqual((await ui.world.api('GET', `/management/v1/users/${tess.userId}/auth_factors`)).body, { result: [] });
    const { rows } = await ui.world.server.running.db.query<{ event_type: string }>(
      "SELECT event_type FROM events WHERE aggregate_id = $1 AND event_type LIKE 'user.otp.%' ORDER BY position",
      [tess.userId],
    );
    assert.deepEqual(
      rows.map((r) => r.event_type),
      ['user.otp.added', 'user.otp.removed'],
    );
    const left = await ui.world.server.running.db.query('SELECT 1 FROM user_recovery_codes WHERE user_id = $1', [tess.userId]);
    assert.equal(left.rows.length, 0, 'the recovery codes went with it');
    const p = await page();
    const finish = await startLogin(p, tess);
    assert.deepEqual((await finish()).amr, ['pwd']);
  });

  test('the security page and the code prompt in German', async () => {
    const { page: p } = await ui.freshPage({ locale: 'de-DE' });
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    assert.equal(await p.getAttribute('html', 'lang'), 'de');
    assert.equal((await p.textContent('h1'))?.trim(), 'Sicherheit');
    await p.fill('#loginName', ui.users.nora.loginName);
    await p.fill('#password', ui.users.nora.password);
    await p.click('button[type=submit]');
    assert.equal((await p.textContent('#otpState'))?.trim(), 'Nicht eingerichtet');
    await p.click('text=Authenticator-App einrichten');
    await submitCode(p, '12');
    assert.match(await alert(p), /Geben Sie die 6 Ziffern/);
  });

  test('the pages kept to the content security policy', () => {
    assert.deepEqual(cspViolations, []);
  });
});
