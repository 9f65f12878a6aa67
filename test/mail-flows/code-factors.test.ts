import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  codeLogin,
  confidentialAppFor,
  launchBrowser,
  needsChromium,
  type RelyingParty,
  type SignInWorld,
  startRelyingParty,
  startSignInWorld,
  rpConfig,
} from '../support/browser.ts';
import { apiClient } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { freePort } from '../support/server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { type Mailbox, mailbox, mainText, typedCode } from './support.ts';

// One-time codes by mail and SMS as second factors, and phone verification
// by SMS (docs/self-service.md, docs/security.md): Chromium on the security page
// and the login, a real SMTP server for the mails, an HTTP receiver checking
// the relay's signature for the SMS, openid-client as the app.

interface Sms {
  to: string;
  text: string;
  type: string;
  userId: string;
  valid: boolean;
}

/** An SMS relay on 127.0.0.1 that keeps each SMS with whether its signature (docs/api/sms.md) holds. */
async function smsReceiver(signingKey: () => string): Promise<{ url: string; received: Sms[]; stop(): Promise<void> }> {
  const received: Sms[] = [];
  const port = await freePort();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const [, t = '', v1 = ''] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['portcullis-signature'] ?? '')) ?? [];
      const valid = v1 === createHmac('sha256', signingKey()).update(`${t}.${body}`).digest('hex');
      received.push({ ...JSON.parse(body), valid });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}/sms`, received, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('in Chromium: sign-in codes by mail and SMS, and phone verification', { skip: needsChromium }, () => {
  let sink: SmtpSink;
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let config: client.Configuration;
  let mails: Mailbox;
  let relay: Awaited<ReturnType<typeof smsReceiver>>;
  let signingKey = '';
  const contexts: BrowserContext[] = [];

  before(async () => {
    sink = await startSmtpSink();
    mails = mailbox(sink);
    relay = await smsReceiver(() => signingKey);
    [world, rp, browser] = await Promise.all([startSignInWorld({ SMTP_URL: sink.url() }), startRelyingParty(), launchBrowser()]);
    const app = await world.createApp({ ...confidentialAppFor(rp), idTokenUserinfoAssertion: true });
    config = await rpConfig(world, app);
    const sms = await world.api('PUT', '/admin/v1/sms/http', { endpoint: relay.url });
    assert.equal(sms.status, 200, JSON.stringify(sms.body));
    signingKey = sms.body.signingKey;
    const policy = await world.api('PUT', '/management/v1/policies/login', {
      secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_OTP_EMAIL', 'SECOND_FACTOR_TYPE_OTP_SMS'],
    });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
  });
  after(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await rp?.close();
    await world?.stop();
    await sink?.stop();
    await relay?.stop();
  });

  async function freshPage(): Promise<Page> {
    const context = await browser.newContext({ locale: 'en-US' });
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    return context.newPage();
  }

  /** Waits for the `n`th SMS to `to`. */
  async function nthSms(to: string, n: number): Promise<Sms> {
    const deadline = Date.now() + 30_000;
    const of = () => relay.received.filter((sms) => sms.to === to);
    while (of().length < n) {
      if (Date.now() > deadline) throw new Error(`SMS ${n} to ${to} did not arrive`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return of()[n - 1]!;
  }

  /** The management API in ACME, its answers typed for the assertions. */
  const call = (method: string, path: string, body?: unknown) =>
    apiClient(world.server.url, world.adminPat, { orgId: world.orgId })(method, path, body === undefined ? {} : { body });

  const smsCode = (sms: Sms) => /([A-Z0-9]{10})/.exec(sms.text)![1]!;
  const errorOf = async (page: Page) => ((await page.textContent('[role=alert]')) ?? '').trim();

  async function eventTypes(userId: string): Promise<string[]> {
    const { rows } = await world.server.running.db.query<{ event_type: string }>('SELECT event_type FROM events WHERE aggregate_id = $1 ORDER BY position', [
      userId,
    ]);
    return rows.map((row) => row.event_type);
  }

  async function securitySignIn(page: Page, user: { loginName: string; password: string }): Promise<void> {
    await page.goto(`${world.issuer}/ui/login/security`);
    await page.fill('#loginName', user.loginName);
    await page.fill('#password', user.password);
    await page.click('button[type=submit]');
  }

  test('the new management calls answer bad input with the documented errors', async () => {
    const user = await world.createUser('bad');
    for (const body of [{ phone: 'not a number' }, { phone: '+41 79', isPhoneVerified: 'yes' }, {}, { phone: '+41791234567', extra: 1 }]) {
      const answer = await world.api('PUT', `/management/v1/users/${user.userId}/phone`, body);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.code, 3);
    }
    assertInvalid(await call('PUT', `/management/v1/users/${user.userId}/phone`, { phone: 'abc' }), ['phone'], { atLeast: true });
    const missing = await apiClient(world.server.url, world.adminPat, { orgId: world.orgId })('PUT', `/management/v1/users/${user.userId}/phone`, {});
    assert.equal(missing.status, 400);
    assertError(await call('PUT', '/management/v1/users/nosuchuser/phone', { phone: '+41791234567' }), 404);
    assertError(await call('POST', '/management/v1/users/nosuchuser/phone/_resend_verification', {}), 404);
    const noPhone = await world.api('POST', `/management/v1/users/${user.userId}/phone/_resend_verification`, {});
    assert.equal(noPhone.status, 400, 'a user without a phone gets no code');
    assert.equal((await world.api('POST', `/management/v1/users/${user.userId}/phone/_resend_verification`, { x: 1 })).status, 400);
    for (const path of ['otp_email', 'otp_sms']) assertError(await call('DELETE', `/management/v1/users/${user.userId}/auth_factors/${path}`), 404);
    // Another org's context does not reach ACME's user.
    const other = await world.api('POST', '/admin/v1/orgs/_setup', {
      org: { name: 'Other' },
      human: { userName: 'x', profile: { firstName: 'X', lastName: 'Y' }, email: { email: 'x@other.example.test' } },
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const inOther = apiClient(world.server.url, world.adminPat, { orgId: other.body.orgId });
    assertError(await inOther('PUT', `/management/v1/users/${user.userId}/phone`, { body: { phone: '+41791234567' } }), 404);
    assertError(await inOther('POST', `/management/v1/users/${user.userId}/phone/_resend_verification`, { body: {} }), 404);
    assertError(await inOther('DELETE', `/management/v1/users/${user.userId}/auth_factors/otp_email`), 404);
    const policy = await call('PUT', '/management/v1/policies/login', { secondFactors: ['SECOND_FACTOR_TYPE_OTP_FAX'] });
    assertInvalid(policy, ['secondFactors[0]']);
  });

  test('codes by mail: set up on the security page, asked after the password (amr otp), wrong, reused and expired codes refused, removed by an admin', async () => {
    const emma = await world.createUser('emma');
    const page = await freshPage();
    await securitySignIn(page, emma);
    await page.click('#otpEmail-setup');
    const setupMail = await mails.nth('emma@acme.example.test', 1);
    assert.equal(setupMail.subject, 'Your sign-in code');
    await page.fill('#code-otpEmail', 'WRONGCODE1');
    await page.click('#code-otpEmail-submit');
    assert.equal(await errorOf(page), 'The code is wrong or was already used.');
    await page.fill('#code-otpEmail', typedCode(setupMail));
    await page.click('#code-otpEmail-submit');
    assert.equal((await page.textContent('#otpEmailState'))?.trim(), 'Set up');
    const factors = await world.api('GET', `/management/v1/users/${emma.userId}/auth_factors`);
    assert.deepEqual(factors.body.result, [{ otpEmail: {}, state: 'AUTH_FACTOR_STATE_READY' }]);

    // The login asks for the code after the password; the mail's code finishes it with amr otp.
    const login = await freshPage();
    const signedIn = codeLogin(login, config, rp, emma, 'openid email');
    const signInMail = await mails.nth('emma@acme.example.test', 2);
    await login.waitForSelector('#code-otpEmail');
    await login.fill('#code-otpEmail', typedCode(signInMail));
    await login.click('#code-otpEmail-submit');
    const claims = (await signedIn).tokens.claims()!;
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.acr, 'mfa');

    // The same code again is refused; "send a new code" sends another, which expires after 5 minutes.
    const again = await freshPage();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', state: 's1', nonce: 'n1' });
    await again.goto(url.href);
    await again.fill('#loginName', emma.loginName);
    await again.click('button[type=submit]');
    await again.fill('#password', emma.password);
    await again.click('button[type=submit]');
    const third = await mails.nth('emma@acme.example.test', 3);
    await again.fill('#code-otpEmail', typedCode(signInMail));
    await again.click('#code-otpEmail-submit');
    assert.equal(await errorOf(again), 'This code has expired or was already used. Ask for a new one.');
    await again.click('#code-otpEmail-resend');
    assert.equal((await again.textContent('[role=status]'))?.trim(), 'A new code is on its way.');
    const fourth = await mails.nth('emma@acme.example.test', 4);
    assert.notEqual(typedCode(fourth), typedCode(third));
    await world.server.running.db.query("UPDATE verification_codes SET expires_at = now() - interval '1 second' WHERE user_id = $1", [emma.userId]);
    await again.fill('#code-otpEmail', typedCode(fourth));
    await again.click('#code-otpEmail-submit');
    assert.equal(await errorOf(again), 'This code has expired or was already used. Ask for a new one.');
    const { rows } = await world.server.running.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM verification_codes WHERE user_id = $1 AND typed_digest::text LIKE '%' || $2 || '%'",
      [emma.userId, typedCode(fourth)],
    );
    assert.equal(rows[0]!.n, 0, 'codes are kept as digests only');

    const removed = await world.api('DELETE', `/management/v1/users/${emma.userId}/auth_factors/otp_email`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assertDetails(removed.body.details, world.orgId);
    assert.deepEqual((await world.api('GET', `/management/v1/users/${emma.userId}/auth_factors`)).body.result, []);
    const events = await eventTypes(emma.userId);
    for (const type of ['user.human.otp.email.code.added', 'user.human.otp.email.added', 'user.human.otp.email.removed'])
      assert.ok(events.includes(type), type);
  });

  test('with forceMfa and only codes by mail allowed, the login sets them up with a mailed code; the security page then asks for one', async () => {
    const forced = await world.api('PUT', '/management/v1/policies/login', {
      forceMfa: true,
      passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED',
      secondFactors: ['SECOND_FACTOR_TYPE_OTP_EMAIL'],
    });
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    try {
      const fay = await world.createUser('fay');
      const login = await freshPage();
      const signedIn = codeLogin(login, config, rp, fay, 'openid');
      const first = await mails.nth('fay@acme.example.test', 1);
      await login.waitForSelector('#code-otpEmail');
      assert.equal(await login.locator('#otpSecret').count(), 0, 'no authenticator app offered');
      await login.click('#code-otpEmail-resend');
      const second = await mails.nth('fay@acme.example.test', 2);
      assert.notEqual(typedCode(second), typedCode(first));
      await login.fill('#code-otpEmail', typedCode(second));
      await login.click('#code-otpEmail-submit');
      assert.deepEqual((await signedIn).tokens.claims()!.amr, ['pwd', 'otp', 'mfa']);
      assert.deepEqual((await world.api('GET', `/management/v1/users/${fay.userId}/auth_factors`)).body.result, [
        { otpEmail: {}, state: 'AUTH_FACTOR_STATE_READY' },
      ]);

      const page = await freshPage();
      await securitySignIn(page, fay);
      await page.fill('#code-otpEmail', typedCode(await mails.nth('fay@acme.example.test', 3)));
      await page.click('#code-otpEmail-submit');
      assert.equal((await page.textContent('#otpEmailState'))?.trim(), 'Set up');
    } finally {
      const restored = await world.api('PUT', '/management/v1/policies/login', {
        secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_OTP_EMAIL', 'SECOND_FACTOR_TYPE_OTP_SMS'],
      });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
    }
  });

  test('wrong sign-in codes count towards the lockout policy', async () => {
    const lockout = await world.api('PUT', '/management/v1/policies/lockout', { maxPasswordAttempts: 10, maxOtpAttempts: 2, lockoutDurationSeconds: 0 });
    assert.equal(lockout.status, 200, JSON.stringify(lockout.body));
    try {
      const lars = await world.createUser('lars');
      const page = await freshPage();
      await securitySignIn(page, lars);
      await page.click('#otpEmail-setup');
      await page.fill('#code-otpEmail', typedCode(await mails.nth('lars@acme.example.test', 1)));
      await page.click('#code-otpEmail-submit');
      const login = await freshPage();
      const url = client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', state: 's2', nonce: 'n2' });
      await login.goto(url.href);
      await login.fill('#loginName', lars.loginName);
      await login.click('button[type=submit]');
      await login.fill('#password', lars.password);
      await login.click('button[type=submit]');
      await login.fill('#code-otpEmail', 'AAAAAAAAAA');
      await login.click('#code-otpEmail-submit');
      assert.equal(await errorOf(login), 'The code is wrong or was already used.');
      await login.fill('#code-otpEmail', 'BBBBBBBBBB');
      await login.click('#code-otpEmail-submit');
      assert.match(await errorOf(login), /locked/);
      assert.equal((await world.api('GET', `/management/v1/users/${lars.userId}`)).body.user.state, 'USER_STATE_LOCKED');
    } finally {
      await world.api('DELETE', '/management/v1/policies/lockout');
    }
  });

  test('a new phone number is verified with the SMS code on the security page, then codes by SMS sign in (amr sms)', async () => {
    const sam = await world.createUser('sam');
    const phone = '+41791234567';
    const changed = await world.api('PUT', `/management/v1/users/${sam.userId}/phone`, { phone });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assertDetails(changed.body.details, world.orgId);
    const verify = await nthSms(phone, 1);
    assert.equal(verify.valid, true, 'the relay signed the SMS');
    assert.equal(verify.type, 'VerifyPhone');
    assert.equal(verify.userId, sam.userId);
    const resent = await world.api('POST', `/management/v1/users/${sam.userId}/phone/_resend_verification`, {});
    assert.equal(resent.status, 200, JSON.stringify(resent.body));
    const second = await nthSms(phone, 2);

    const page = await freshPage();
    await securitySignIn(page, sam);
    assert.equal(await page.locator('#otpSms-setup').count(), 0, 'no codes by SMS to a number not verified');
    await page.fill('#phoneCode', 'ZZZZZZZZZZ');
    await page.click('#phoneVerify');
    assert.equal(await errorOf(page), 'The code is wrong or was already used.');
    await page.fill('#phoneCode', smsCode(second));
    await page.click('#phoneVerify');
    assert.equal((await page.textContent('#phoneState'))?.trim(), 'Verified');
    assert.equal((await world.api('GET', `/management/v1/users/${sam.userId}`)).body.user.human.phone.isPhoneVerified, true);

    await page.click('#otpSms-setup');
    const setup = await nthSms(phone, 3);
    assert.equal(setup.type, 'OtpSms');
    await page.fill('#code-otpSms', smsCode(setup));
    await page.click('#code-otpSms-submit');
    assert.equal((await page.textContent('#otpSmsState'))?.trim(), 'Set up');

    const login = await freshPage();
    const signedIn = codeLogin(login, config, rp, sam, 'openid phone');
    const code = smsCode(await nthSms(phone, 4));
    await login.fill('#code-otpSms', code);
    await login.click('#code-otpSms-submit');
    const claims = (await signedIn).tokens.claims()!;
    assert.deepEqual(claims.amr, ['pwd', 'sms', 'mfa']);
    assert.equal(claims.phone_number, phone);
    assert.equal(claims.phone_number_verified, true);
    assert.deepEqual((await world.api('GET', `/management/v1/users/${sam.userId}/auth_factors`)).body.result, [
      { otpSms: {}, state: 'AUTH_FACTOR_STATE_READY' },
    ]);
    const events = await eventTypes(sam.userId);
    for (const type of ['user.human.phone.changed', 'user.human.phone.code.added', 'user.human.phone.verified', 'user.human.otp.sms.added']) {
      assert.ok(events.includes(type), type);
    }

    // A changed number is unverified again: the factor waits for it.
    await world.api('PUT', `/management/v1/users/${sam.userId}/phone`, { phone: '+41791111111' });
    assert.deepEqual((await world.api('GET', `/management/v1/users/${sam.userId}/auth_factors`)).body.result, [
      { otpSms: {}, state: 'AUTH_FACTOR_STATE_NOT_READY' },
    ]);
    const removed = await world.api('DELETE', `/management/v1/users/${sam.userId}/auth_factors/otp_sms`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
  });

  test('"Forgot password?" of a user whose only verified address is a phone: the reset code and "password changed" come by SMS', async () => {
    const pia = await world.createUser('pia');
    const phone = '+41792222222';
    assert.equal((await world.api('PUT', `/management/v1/users/${pia.userId}/phone`, { phone, isPhoneVerified: true })).status, 200);
    const email = await world.api('PUT', `/management/v1/users/${pia.userId}/email`, { email: 'pia@acme.example.test', isEmailVerified: false });
    assert.equal(email.status, 200, JSON.stringify(email.body));

    const page = await freshPage();
    await page.goto(client.buildAuthorizationUrl(config, { redirect_uri: rp.callback, scope: 'openid', state: 'pia', nonce: 'pia' }).href);
    await page.fill('#loginName', pia.loginName);
    await page.click('button[type=submit]');
    await page.click('#forgotPassword');
    await page.waitForURL((u) => u.pathname === '/ui/login/password/init');
    const reset = await nthSms(phone, 1);
    assert.equal(reset.valid, true, 'the relay signed the SMS');
    assert.equal(reset.type, 'PasswordReset');
    assert.match(reset.text, /ignore this message/);
    await page.fill('#code', smsCode(reset));
    await page.fill('#password', 'Pia-New-Passw0rd');
    await page.fill('#passwordRepeat', 'Pia-New-Passw0rd');
    await page.click('button[type=submit]');
    await page.waitForLoadState();
    assert.match(await mainText(page), /Your password has been changed/);
    const changed = await nthSms(phone, 2);
    assert.equal(changed.type, 'PasswordChanged');
    const aboutPassword = mails.of('pia@acme.example.test').filter((mail) => /password/i.test(mail.subject ?? ''));
    assert.deepEqual(aboutPassword, [], 'nothing about the password went to the unverified email');
  });
});
