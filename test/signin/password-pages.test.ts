import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { landedOn, needsChromium, screenshot, signIn, startLoginUi, type LoginUi, type TestUser } from '../support/browser.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';

// The password pages in Chromium: the registration form names each broken
// rule of the org's complexity policy in the page's language; the security
// page changes the password (docs/security.md, "Changing the password").

describe('password pages in Chromium', { skip: needsChromium }, () => {
  let ui: LoginUi<'alice' | 'bruno' | 'dora'>;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink();
    ui = await startLoginUi(
      {
        alice: { firstName: 'Alice', lastName: 'Anderson' },
        bruno: { firstName: 'Bruno', lastName: 'Brandt' },
        dora: { firstName: 'Dora', lastName: 'Dietrich' },
      },
      { SMTP_URL: sink.url(), SMTP_FROM: 'Portcullis <id@example.test>' },
    );
    const policy = await ui.world.api('PUT', '/management/v1/policies/password_complexity', { minLength: 10, hasUppercase: true, hasSymbol: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
  });
  after(async () => {
    await ui?.stop();
    await sink?.stop();
  });

  function authorizeUrl(params: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      client_id: ui.app.clientId,
      redirect_uri: ui.rp.callback,
      response_type: 'code',
      scope: 'openid',
      state: randomUUID(),
      ...params,
    });
    return `${ui.world.issuer}/oauth/v2/authorize?${query}`;
  }

  async function register(page: Page, password: string): Promise<string> {
    await page.goto(authorizeUrl({ prompt: 'create' }));
    await page.waitForSelector('#givenName');
    const email = `reg-${randomUUID().slice(0, 8)}@example.org`;
    const values = { givenName: 'Regina', familyName: 'Register', email, password, passwordRepeat: password };
    for (const [field, value] of Object.entries(values)) await page.fill(`#${field}`, value);
    await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/register')), page.click('button[type=submit]')]);
    await page.waitForLoadState();
    return email;
  }

  async function userNamed(email: string): Promise<number> {
    const { rows } = await ui.world.server.running.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE user_name = $1', [email]);
    return rows[0]!.n;
  }

  test("registration: the org's policy, each broken rule named in English and German; nobody is created", async () => {
    const { page } = await ui.freshPage();
    const email = await register(page, 'lowercase');
    assert.equal(
      (await page.textContent('#passwordError'))?.trim(),
      'Use at least 10 characters. Use at least one uppercase letter. Use at least one symbol (a character that is neither a letter nor a digit).',
    );
    assert.equal(await page.getAttribute('#password', 'minlength'), '10', "the form asks for the org's minimum");
    await screenshot(page, 'password-policy-registration');
    assert.equal(await userNamed(email), 0);

    const { page: german } = await ui.freshPage({ locale: 'de-DE' });
    await register(german, 'Kurz-1');
    assert.equal((await german.textContent('#passwordError'))?.trim(), 'Verwenden Sie mindestens 10 Zeichen.');
    const accepted = await register(german, 'Lang-genug-1');
    assert.equal(await userNamed(accepted), 1, 'a password that meets the policy registers');
  });

  // ---------------------------------------------------------------- the security page

  /** Signs `user` in to the app in a new browser: a browser session of the engine. */
  async function appSession(user: TestUser, locale = 'en-US'): Promise<Page> {
    const { page } = await ui.freshPage({ locale });
    await page.goto(authorizeUrl());
    await signIn(page, user);
    await landedOn(page, ui.rp.callback);
    return page;
  }

  /** Whether the browser is still signed in to the engine: prompt=none answers a code, not login_required. */
  async function stillSignedIn(page: Page): Promise<boolean> {
    await page.goto(authorizeUrl({ prompt: 'none' }));
    const landed = await landedOn(page, ui.rp.callback);
    return landed.searchParams.has('code');
  }

  async function openSecurityPage(page: Page, user: TestUser, password = user.password): Promise<void> {
    await page.goto(`${ui.world.issuer}/ui/login/security`);
    await page.fill('#loginName', user.loginName);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
    await page.waitForSelector('#currentPassword');
  }

  async function changePassword(page: Page, current: string, next: string, repeat = next): Promise<number> {
    await page.fill('#currentPassword', current);
    await page.fill('#newPassword', next);
    await page.fill('#newPasswordRepeat', repeat);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/security/password')),
      page.click('#changePassword'),
    ]);
    await page.waitForLoadState();
    return response.status();
  }

  async function failedAttempts(userId: string): Promise<number> {
    const { rows } = await ui.world.server.running.db.query<{ n: number }>('SELECT failed_password_attempts AS n FROM users WHERE id = $1', [userId]);
    return rows[0]!.n;
  }

  const passwordWorks = async (user: TestUser, password: string) => {
    const { rows } = await ui.world.server.running.db.query<{ state: string }>('SELECT state FROM users WHERE id = $1', [user.userId]);
    assert.equal(rows[0]!.state, 'active');
    const { page } = await ui.freshPage();
    await page.goto(authorizeUrl());
    await signIn(page, { loginName: user.loginName, password });
    await page.waitForLoadState();
    return page.url().startsWith(ui.rp.callback);
  };

  test('password change: wrong current refused and counted, policy and repeat checked, then changed; other sessions end, this one stays, a mail arrives', async () => {
    const alice = ui.users.alice;
    const here = await appSession(alice);
    const elsewhere = await appSession(alice);
    await openSecurityPage(here, alice);

    assert.equal(await changePassword(here, 'not-the-password', 'New-Passw0rd!'), 400);
    assert.equal((await here.textContent('#currentPasswordError'))?.trim(), 'The current password is wrong.');
    assert.equal(await failedAttempts(alice.userId), 1, 'a wrong current password counts towards the lockout');

    assert.equal(await changePassword(here, alice.password, 'short'), 400);
    assert.equal(
      (await here.textContent('#newPasswordError'))?.trim(),
      'Use at least 10 characters. Use at least one uppercase letter. Use at least one symbol (a character that is neither a letter nor a digit).',
    );
    assert.equal(await changePassword(here, alice.password, 'New-Passw0rd!', 'New-Passw0rd?'), 400);
    assert.equal((await here.textContent('#newPasswordRepeatError'))?.trim(), 'The passwords do not match.');
    assert.equal(await passwordWorks(alice, alice.password), true, 'nothing changed yet');
    const mailsBefore = sink.received.length;

    assert.equal(await changePassword(here, alice.password, 'New-Passw0rd!'), 200);
    assert.match((await here.textContent('#passwordChanged')) ?? '', /Your password was changed/);
    await screenshot(here, 'security-password-changed');
    assert.equal(await failedAttempts(alice.userId), 0);

    const [mail] = (await sink.waitFor(mailsBefore + 1)).slice(mailsBefore);
    assert.equal(mail!.subject, 'Your password was changed');
    assert.equal((mail!.to as { text: string }).text, 'alice@acme.example.test');
    assert.match(mail!.text ?? '', /The password of alice@acme\.example\.test at ACME was changed/);

    assert.equal(await stillSignedIn(elsewhere), false, 'the other browser session ended');
    assert.equal(await stillSignedIn(here), true, 'the session the change was made from stays');
    assert.equal(await passwordWorks(alice, alice.password), false, 'the old password is refused');
    assert.equal(await passwordWorks(alice, 'New-Passw0rd!'), true, 'the new password signs in');
    const { rows } = await ui.world.server.running.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE aggregate_id = $1 AND event_type = 'user.human.password.changed'",
      [alice.userId],
    );
    assert.equal(rows[0]!.n, 1);
  });

  test('wrong current passwords lock the user under the lockout policy, and sign the page out', async () => {
    const bruno = ui.users.bruno;
    const lockout = await ui.world.api('PUT', '/management/v1/policies/lockout', { maxPasswordAttempts: 2 });
    assert.equal(lockout.status, 200, JSON.stringify(lockout.body));
    try {
      const { page } = await ui.freshPage();
      await openSecurityPage(page, bruno);
      assert.equal(await changePassword(page, 'wrong-1', 'New-Passw0rd!'), 400);
      assert.equal(await changePassword(page, 'wrong-2', 'New-Passw0rd!'), 403);
      assert.match((await page.textContent('[role=alert]')) ?? '', /This account is locked/);
      assert.equal(await page.locator('#currentPassword').count(), 0, 'back at the sign-in of the page');
      const user = await ui.world.api('GET', `/management/v1/users/${bruno.userId}`);
      assert.equal(user.body.user.state, 'USER_STATE_LOCKED');
    } finally {
      await ui.world.api('DELETE', '/management/v1/policies/lockout');
      await ui.world.api('POST', `/management/v1/users/${bruno.userId}/_unlock`, {});
    }
  });

  test('the password form in German', async () => {
    const dora = ui.users.dora;
    const { page } = await ui.freshPage({ locale: 'de-DE' });
    await openSecurityPage(page, dora);
    assert.equal(await changePassword(page, dora.password, 'kurz'), 400);
    assert.equal(
      (await page.textContent('#newPasswordError'))?.trim(),
      'Verwenden Sie mindestens 10 Zeichen. Verwenden Sie mindestens einen Großbuchstaben. Verwenden Sie mindestens ein Sonderzeichen (ein Zeichen, das weder Buchstabe noch Ziffer ist).',
    );
    assert.equal(await changePassword(page, 'falsch', 'Neues-Passw0rt!'), 400);
    assert.equal((await page.textContent('#currentPasswordError'))?.trim(), 'Das aktuelle Passwort ist falsch.');
  });
});
