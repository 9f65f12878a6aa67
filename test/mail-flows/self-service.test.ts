import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  codeLogin,
  confidentialAppFor,
  landedOn,
  launchBrowser,
  needsChromium,
  type RelyingParty,
  type SignInWorld,
  signIn,
  startRelyingParty,
  startSignInWorld,
  rpConfig,
} from '../support/browser.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { linkOf, type Mailbox, mailbox, mainText, queuedTypes, shot, typedCode } from './support.ts';

// The self-service flows of docs/self-service.md in Chromium, with a real SMTP
// server (smtp-server) receiving the mails and openid-client as the app:
// every code is read from a mail that arrived.

describe('in Chromium: invitation, email verification and password reset by mail', { skip: needsChromium }, () => {
  let sink: SmtpSink;
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let config: client.Configuration;
  let mails: Mailbox;
  const contexts: BrowserContext[] = [];

  before(async () => {
    sink = await startSmtpSink();
    mails = mailbox(sink);
    [world, rp, browser] = await Promise.all([startSignInWorld({ SMTP_URL: sink.url() }), startRelyingParty(), launchBrowser()]);
    const app = await world.createApp({ ...confidentialAppFor(rp), idTokenUserinfoAssertion: true });
    config = await rpConfig(world, app);
  });
  after(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await rp?.close();
    await world?.stop();
    await sink?.stop();
  });

  async function freshPage(locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ locale });
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    return context.newPage();
  }

  async function invite(userName: string, preferredLanguage?: string): Promise<{ userId: string; email: string; loginName: string }> {
    const email = `${userName}@acme.example.test`;
    const created = await world.api('POST', '/management/v1/users/human', {
      userName,
      profile: { firstName: userName[0]!.toUpperCase() + userName.slice(1), lastName: 'Tester', ...(preferredLanguage ? { preferredLanguage } : {}) },
      email: { email },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return { userId: created.body.userId, email, loginName: email };
  }

  async function setPassword(page: Page, password: string, code?: string): Promise<void> {
    if (code !== undefined) await page.fill('#code', code);
    await page.fill('#password', password);
    await page.fill('#passwordRepeat', password);
    await page.click('button[type=submit]');
    await page.waitForLoadState();
  }

  const errorOf = async (page: Page) => ((await page.textContent('[role=alert]')) ?? '').trim();

  test('an invited user sets its password from the mail, signs in, and its ID token says email_verified: true', async () => {
    const ivy = await invite('ivy');
    const invitation = await mails.nth(ivy.email, 1);
    assert.equal(invitation.subject, 'Set your password for ACME');
    assert.deepEqual(await queuedTypes(world.server.running.db, ivy.userId), ['InitCode'], 'the invitation verifies the email: no VerifyEmail besides');
    const link = linkOf(invitation);
    assert.equal(link.pathname, '/ui/login/user/init');
    assert.equal(link.searchParams.get('userID'), ivy.userId);
    const invited = (await world.api('GET', `/management/v1/users/${ivy.userId}`)).body.user.human;
    assert.equal(invited.email.isEmailVerified, false);
    assert.equal(invited.passwordSet, false, 'invited: no password yet');

    const page = await freshPage();
    await page.goto(link.href);
    assert.equal(await page.inputValue('#code'), link.searchParams.get('code'), 'the link pre-fills the code');
    await shot(page, 'user-init');
    await setPassword(page, 'Ivy-New-Passw0rd');
    assert.match(await mainText(page), /Your password is set/);
    await shot(page, 'user-init-done');
    assert.equal((await world.api('GET', `/management/v1/users/${ivy.userId}`)).body.user.human.passwordSet, true);

    const { tokens } = await codeLogin(page, config, rp, { loginName: ivy.loginName, password: 'Ivy-New-Passw0rd' }, 'openid email');
    const claims = tokens.claims()!;
    assert.equal(claims.sub, ivy.userId);
    assert.equal(claims.email, ivy.email);
    assert.equal(claims.email_verified, true);

    // The link once more: its code is spent.
    const again = await freshPage();
    await again.goto(link.href);
    await setPassword(again, 'Another-Passw0rd');
    assert.equal(await errorOf(again), 'This code has already been used.');
  });

  test('a German user gets the invitation and its page in German', async () => {
    const greta = await invite('greta', 'de');
    const invitation = await mails.nth(greta.email, 1);
    assert.equal(invitation.subject, 'Passwort für ACME festlegen');
    assert.match(invitation.text ?? '', /Hallo Greta,/);
    const page = await freshPage('de-DE');
    await page.goto(linkOf(invitation).href);
    assert.equal((await page.textContent('h1'))?.trim(), 'Passwort festlegen');
    await shot(page, 'user-init-de');
    await setPassword(page, 'kurz');
    assert.match(await errorOf(page), /^Dieses Passwort ist nicht erlaubt/);
    const passwordSet = async () => (await world.api('GET', `/management/v1/users/${greta.userId}`)).body.user.human.passwordSet;
    assert.equal(await passwordSet(), false, 'a refused password is not set');
    await setPassword(page, 'Greta-Passw0rd', typedCode(invitation));
    assert.match(await mainText(page), /Ihr Passwort ist festgelegt/);
    assert.equal(await passwordSet(), true);
  });

  test('with requireEmailVerification the login stops at the verification page until a code from the mail is entered', async () => {
    const policy = await world.api('PUT', '/management/v1/policies/login', { requireEmailVerification: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    try {
      const created = await world.api('POST', '/management/v1/users/human', {
        userName: 'vera',
        profile: { firstName: 'Vera', lastName: 'Tester' },
        email: { email: 'vera@acme.example.test' },
        password: 'Vera-Passw0rd',
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const first = await mails.nth('vera@acme.example.test', 1);
      assert.equal(first.subject, 'Verify your email address');

      const page = await freshPage();
      const url = client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid email', state: 'st', nonce: 'nn' });
      await page.goto(url.href);
      await signIn(page, { loginName: 'vera@acme.example.test', password: 'Vera-Passw0rd' });
      await page.waitForSelector('#code');
      assert.equal((await page.textContent('h1'))?.trim(), 'Verify your email address');
      assert.match(await mainText(page), /We sent a code to vera@acme\.example\.test/);
      await shot(page, 'mail-verification');
      // Stopping at the page sent a second code; either one works.
      const second = await mails.nth('vera@acme.example.test', 2);
      await page.fill('#code', 'WRONG12345');
      await page.click('button[type=submit]');
      await page.waitForLoadState();
      assert.equal(await errorOf(page), 'This code is not valid.');
      assert.ok(new URL(page.url()).pathname.startsWith('/ui/login/'), 'still at the login');
      await page.fill('#code', typedCode(second));
      await page.click('button[type=submit]');
      const landed = await landedOn(page, rp.callback);
      const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: 'st', expectedNonce: 'nn' });
      assert.equal(tokens.claims()!.email_verified, true);
      // The first mail's code is spent with the second's: one verification.
      const link = await freshPage();
      await link.goto(linkOf(first).href);
      await link.click('button[type=submit]');
      await link.waitForLoadState();
      assert.equal(await errorOf(link), 'This code has already been used.');
      await shot(link, 'mail-verification-link');
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });

  test('a self-registered user is sent VerifyEmail and, with requireEmailVerification, signs in once its code is entered', async () => {
    assert.equal((await world.api('PUT', '/management/v1/policies/login', { requireEmailVerification: true })).status, 200);
    try {
      const page = await freshPage();
      const url = client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid email', prompt: 'create', state: 'rg', nonce: 'rn' });
      await page.goto(url.href);
      await page.fill('#givenName', 'Reggie');
      await page.fill('#familyName', 'Tester');
      await page.fill('#email', 'reggie@acme.example.test');
      await page.fill('#password', 'Reggie-Passw0rd');
      await page.fill('#passwordRepeat', 'Reggie-Passw0rd');
      await page.click('button[type=submit]');
      await page.waitForSelector('#code');
      const mail = await mails.nth('reggie@acme.example.test', 1);
      assert.equal(mail.subject, 'Verify your email address');
      await page.fill('#code', typedCode(mail));
      await page.click('button[type=submit]');
      const landed = await landedOn(page, rp.callback);
      const claims = (await client.authorizationCodeGrant(config, landed, { expectedState: 'rg', expectedNonce: 'rn' })).claims()!;
      assert.equal(claims.email, 'reggie@acme.example.test');
      assert.equal(claims.email_verified, true);
      assert.deepEqual(await queuedTypes(world.server.running.db, claims.sub), ['VerifyEmail'], 'the registration sent the one code; the page none besides');
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });

  test('a reset through the mail: the old password is refused, the other sessions end, and a "password changed" mail arrives', async () => {
    const rita = await world.createUser('rita');
    const email = 'rita@acme.example.test';
    // A session elsewhere, from before the reset.
    const elsewhere = await freshPage();
    await codeLogin(elsewhere, config, rp, rita, 'openid');

    const page = await freshPage();
    await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', state: 'st2', nonce: 'n2' }).href);
    await page.fill('#loginName', rita.loginName);
    await page.click('button[type=submit]');
    await shot(page, 'password-forgot-link');
    await page.click('#forgotPassword');
    await page.waitForURL((u) => u.pathname === '/ui/login/password/init');
    await shot(page, 'password-init');
    const reset = await mails.nth(email, 1);
    assert.equal(reset.subject, 'Reset your password');
    await setPassword(page, 'Rita-New-Passw0rd', typedCode(reset));
    assert.match(await mainText(page), /Your password has been changed/);
    await shot(page, 'password-init-done');
    const changed = await mails.nth(email, 2);
    assert.equal(changed.subject, 'Your password was changed');

    // "Continue to sign in" leads back into the login that asked.
    await page.click('#continue');
    await signIn(page, { loginName: rita.loginName, password: rita.password });
    assert.equal(await errorOf(page), 'The login name or password is wrong.', 'the old password is refused');
    await page.fill('#password', 'Rita-New-Passw0rd');
    await page.click('button[type=submit]');
    const landed = await landedOn(page, rp.callback);
    assert.equal((await client.authorizationCodeGrant(config, landed, { expectedState: 'st2', expectedNonce: 'n2' })).claims()!.sub, rita.userId);

    await elsewhere.goto(client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', prompt: 'none', state: 's3' }).href);
    assert.equal((await landedOn(elsewhere, rp.callback)).searchParams.get('error'), 'login_required', 'the session from before ended');
  });

  test('"Forgot password?" reads the same for an unknown login name as for a known one, and a wrong code gets the same answer', async () => {
    const known = await world.createUser('kim');
    const pageFor = async (loginName: string) => {
      const page = await freshPage();
      await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', state: 'x' }).href);
      await page.fill('#loginName', loginName);
      await page.click('button[type=submit]');
      await page.click('#forgotPassword');
      await page.waitForURL((u) => u.pathname === '/ui/login/password/init');
      return page;
    };
    const normalised = async (page: Page, loginName: string) => {
      const html = await page.content();
      return html
        .replaceAll(loginName, 'NAME')
        .replace(/name="csrf" value="[^"]+"/, 'CSRF')
        .replace(/name="authRequestID" value="[^"]+"/, 'UID');
    };
    const knownPage = await pageFor(known.loginName);
    const unknownPage = await pageFor('nobody@acme.example.test');
    assert.equal(await normalised(unknownPage, 'nobody@acme.example.test'), await normalised(knownPage, known.loginName));
    await shot(unknownPage, 'password-init-unknown');
    for (const page of [knownPage, unknownPage]) await setPassword(page, 'Some-New-Passw0rd', 'ABCDE12345');
    assert.equal(await errorOf(unknownPage), 'This code is not valid.');
    assert.equal(await errorOf(knownPage), await errorOf(unknownPage));
    await mails.nth('kim@acme.example.test', 1);
  });

  test('at most 5 code mails per user and purpose in 10 minutes: the sixth request says the same and sends nothing', async () => {
    const max = await world.createUser('max');
    const page = await freshPage();
    const texts: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', state: `r${i}` }).href);
      await page.fill('#loginName', max.loginName);
      await page.click('button[type=submit]');
      await page.click('#forgotPassword');
      await page.waitForURL((u) => u.pathname === '/ui/login/password/init');
      texts.push(await page.textContent('.lead').then((t) => t ?? ''));
    }
    assert.equal(new Set(texts).size, 1, 'the page reads the same every time');
    assert.deepEqual(await queuedTypes(world.server.running.db, max.userId), Array(5).fill('PasswordReset'));
    const refused = await world.api('POST', `/management/v1/users/${max.userId}/password/_reset`, { sendMail: true });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 8);
    assert.equal((await queuedTypes(world.server.running.db, max.userId)).length, 5);
  });

  test('wrong codes count towards the lockout like wrong passwords: once locked, the right code gets the "locked" message', async () => {
    assert.equal((await world.api('PUT', '/management/v1/policies/lockout', { maxPasswordAttempts: 3, lockoutDurationSeconds: 0 })).status, 200);
    try {
      const lou = await world.createUser('lou');
      const issued = await world.api('POST', `/management/v1/users/${lou.userId}/password/_reset`, { returnCode: true });
      const page = await freshPage();
      await page.goto(`${world.issuer}/ui/login/password/init?userID=${lou.userId}`);
      for (let i = 0; i < 3; i++) await setPassword(page, 'Lou-New-Passw0rd', `WRONG0000${i}`);
      assert.equal((await world.api('GET', `/management/v1/users/${lou.userId}`)).body.user.state, 'USER_STATE_LOCKED');
      await setPassword(page, 'Lou-New-Passw0rd', issued.body.verificationCode);
      assert.match(await errorOf(page), /This account is locked/);
      await shot(page, 'password-init-locked');
      assert.deepEqual(await queuedTypes(world.server.running.db, lou.userId), [], 'no password changed');
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/lockout')).status, 200);
    }
  });

  test('malformed, expired and reused codes are refused, each with its own message', async () => {
    const eve = await world.createUser('eve');
    const issued = await world.api('POST', `/management/v1/users/${eve.userId}/password/_reset`, { returnCode: true });
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    const code: string = issued.body.verificationCode;
    assert.match(code, /^[A-Z0-9]{10}$/);
    const page = await freshPage();
    const open = () => page.goto(`${world.issuer}/ui/login/password/init?userID=${eve.userId}`);
    await open();
    await setPassword(page, 'Eve-New-Passw0rd', 'no such code!');
    assert.equal(await errorOf(page), 'This is not a code we send. Check it and try again.');
    await shot(page, 'password-init-malformed');

    await world.server.running.db.query("UPDATE verification_codes SET expires_at = now() - interval '1 second' WHERE user_id = $1", [eve.userId]);
    await setPassword(page, 'Eve-New-Passw0rd', code);
    assert.equal(await errorOf(page), 'This code has expired. Ask for a new one.');

    const fresh = await world.api('POST', `/management/v1/users/${eve.userId}/password/_reset`, { returnCode: true });
    await open();
    // Typed in lower case and grouped: the same code.
    await setPassword(page, 'Eve-New-Passw0rd', `${fresh.body.verificationCode.slice(0, 5).toLowerCase()} ${fresh.body.verificationCode.slice(5)}`);
    assert.match(await mainText(page), /Your password has been changed/);
    await open();
    await setPassword(page, 'Eve-Other-Passw0rd', fresh.body.verificationCode);
    assert.equal(await errorOf(page), 'This code has already been used.');
    assert.deepEqual(await queuedTypes(world.server.running.db, eve.userId), ['PasswordChanged'], 'returnCode mails no code; the change is told');
  });
});
