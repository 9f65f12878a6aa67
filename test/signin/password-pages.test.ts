import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { needsChromium, screenshot, startLoginUi, type LoginUi } from '../support/browser.ts';

// The password complexity policy on the login pages, in Chromium: the
// registration form names each broken rule in the page's language.

describe('password pages in Chromium', { skip: needsChromium }, () => {
  let ui: LoginUi<'alice'>;

  before(async () => {
    ui = await startLoginUi({ alice: { firstName: 'Alice', lastName: 'Anderson' } });
    const policy = await ui.world.api('PUT', '/management/v1/policies/password_complexity', { minLength: 10, hasUppercase: true, hasSymbol: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
  });
  after(async () => {
    await ui?.stop();
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
});
