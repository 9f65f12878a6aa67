import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { confidentialAppFor, landedOn, needsChromium, screenshot, startLoginUi, type LoginUi } from '../support/browser.ts';
import { base32Decode, totpCode, totpStep } from '../../src/domain/totp.ts';
import { POLICY_CACHE_TTL_MS } from '../../src/queries/policy-cache.ts';

// The login policy's forceMfa and an app's acr_values=mfa: a user without a
// second factor sets one up before the login finishes; the ID token then
// says acr "mfa". prompt=login and max_age ask for the second factor again.

describe('in Chromium: a second factor required by the login policy or the app', { skip: needsChromium }, () => {
  let ui: LoginUi<'fay' | 'abe' | 'zed'>;
  let config: client.Configuration;

  before(async () => {
    ui = await startLoginUi({
      fay: { firstName: 'Fay', lastName: 'Forced' },
      abe: { firstName: 'Abe', lastName: 'Acr' },
      zed: { firstName: 'Zed', lastName: 'Zero' },
    });
    const app = await ui.world.createApp(confidentialAppFor(ui.rp));
    config = await client.discovery(new URL(ui.world.issuer), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await ui?.stop();
  });

  async function alert(p: Page): Promise<string> {
    return ((await p.textContent('[role=alert]')) ?? '').trim();
  }

  async function submitCode(p: Page, code: string): Promise<void> {
    await p.fill('#code', code);
    await p.click('button[type=submit]');
    await p.waitForLoadState();
  }

  /** Starts a code flow; `finish` redeems the code the browser lands with and answers the ID token's claims. */
  async function authorize(p: Page, extra: Record<string, string> = {}) {
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const expectedNonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: ui.rp.callback,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
      nonce: expectedNonce,
      ...extra,
    });
    await p.goto(url.href);
    return async () => {
      const landed = await landedOn(p, ui.rp.callback);
      const tokens = await client.authorizationCodeGrant(config, landed, {
        pkceCodeVerifier,
        expectedNonce,
        ...(extra.max_age ? { maxAge: Number(extra.max_age) } : {}),
      });
      return tokens.claims()!;
    };
  }

  async function password(p: Page, user: { loginName: string; password: string }): Promise<void> {
    await p.fill('#loginName', user.loginName);
    await p.click('button[type=submit]');
    await p.fill('#password', user.password);
    await p.click('button[type=submit]');
    await p.waitForLoadState();
  }

  /** Completes the set-up page of a login: bad codes first, then the right one; answers the key and the recovery codes. */
  async function setUp(p: Page): Promise<{ secret: Buffer; recovery: string[] }> {
    assert.match((await p.textContent('main')) ?? '', /needs a second factor/);
    const secret = base32Decode((await p.textContent('#otpSecret'))!);
    await submitCode(p, '1234567');
    assert.match(await alert(p), /Enter the 6 digits/);
    await submitCode(p, '');
    assert.match(await alert(p), /Enter the 6 digits/);
    assert.equal(base32Decode((await p.textContent('#otpSecret'))!).equals(secret), true, 'the same key after a bad code');
    await submitCode(p, totpCode(secret, totpStep(Date.now())));
    const recovery = (await p.locator('#recoveryCodes code').allTextContents()).map((c) => c.trim());
    assert.equal(recovery.length, 10);
    await p.click('button[type=submit]');
    return { secret, recovery };
  }

  test('forceMfa: a user without a factor sets up an app before the login finishes; amr pwd otp mfa, acr mfa; prompt=login and max_age ask for a code again', async () => {
    const policy = await ui.world.api('PUT', '/management/v1/policies/login', { forceMfa: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    const fay = ui.users.fay;
    const { page: p } = await ui.freshPage();
    const finish = await authorize(p);
    await password(p, fay);
    await screenshot(p, 'login-otp-forced-setup');
    const { secret, recovery } = await setUp(p);
    const claims = await finish();
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.acr, 'mfa');
    assert.deepEqual((await ui.world.api('GET', `/management/v1/users/${fay.userId}/auth_factors`)).body, {
      result: [{ otp: {}, state: 'AUTH_FACTOR_STATE_READY' }],
    });

    const again = await authorize(p, { prompt: 'login' });
    await password(p, fay);
    assert.equal(await p.locator('#code').count(), 1, 'prompt=login asks for the code');
    await submitCode(p, totpCode(secret, totpStep(Date.now()) + 1));
    assert.deepEqual((await again()).amr, ['pwd', 'otp', 'mfa']);

    await new Promise((resolve) => setTimeout(resolve, 2100));
    const aged = await authorize(p, { max_age: '1' });
    await password(p, fay);
    assert.equal(await p.locator('#code').count(), 1, 'max_age asks for the code');
    await submitCode(p, recovery[0]!);
    assert.deepEqual((await aged()).amr, ['pwd', 'otp', 'mfa']);
    assert.equal((await ui.world.api('DELETE', '/management/v1/policies/login')).status, 200);
  });

  test('acr_values=mfa: a session without a second factor signs in again and sets one up; acr mfa', async () => {
    const abe = ui.users.abe;
    const { page: p } = await ui.freshPage();
    const plain = await authorize(p);
    await password(p, abe);
    const first = await plain();
    assert.deepEqual(first.amr, ['pwd']);
    assert.equal(first.acr, 'pwd', 'every login says the acr it achieved (src/engine/acr.ts)');

    const strong = await authorize(p, { acr_values: 'mfa' });
    assert.equal(await p.locator('#loginName').count(), 1, 'the password session is not enough');
    await password(p, abe);
    await setUp(p);
    const claims = await strong();
    assert.equal(claims.acr, 'mfa');
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
  });

  test('forceMfa with no factor allowed at all (a policy stored before the API refused it): a clear page, no code for the app', async () => {
    // The policy API refuses forceMfa with nothing to set up; a policy stored before that is met with a page, never with a login that lacks the factor.
    const settings = { forceMfa: true, secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED', allowRegister: true };
    await ui.world.server.running.db.query(
      `INSERT INTO policies (kind, org_id, settings, sequence, creation_date, change_date) VALUES ('login', $1, $2, 0, now(), now())`,
      [ui.world.orgId, JSON.stringify(settings)],
    );
    await new Promise((resolve) => setTimeout(resolve, POLICY_CACHE_TTL_MS + 200));
    const { page: p } = await ui.freshPage();
    await authorize(p);
    await password(p, ui.users.zed);
    assert.match((await p.textContent('main')) ?? '', /none is allowed for your organization/);
    assert.ok(new URL(p.url()).pathname.startsWith('/ui/login/'));
    assert.deepEqual((await ui.world.api('GET', `/management/v1/users/${ui.users.zed.userId}/auth_factors`)).body, { result: [] }, 'nothing stored');
    assert.equal((await ui.world.api('DELETE', '/management/v1/policies/login')).status, 200);
  });
});
