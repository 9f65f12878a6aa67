import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { landedOn, needsChromium, screenshot, signIn, startLoginUi, type LoginUi } from '../support/browser.ts';
import { passwordForm } from '../support/login-form.ts';

// The lockout policy in the browser: once locked, the login page shows the
// same message for the right and a wrong password and never sends a code to
// the app; a session from before the lock no longer signs in silently; after
// an unlock the right password works again.

describe('in Chromium: a locked account', { skip: needsChromium }, () => {
  let ui: LoginUi<'lou'>;

  before(async () => {
    ui = await startLoginUi({ lou: { firstName: 'Lou', lastName: 'Locke' } });
    const policy = await ui.world.api('PUT', '/management/v1/policies/lockout', { maxPasswordAttempts: 3, lockoutDurationSeconds: 0 });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
  });
  after(async () => {
    await ui?.stop();
  });

  function authorizeUrl(extra: Record<string, string> = {}): string {
    return `${ui.world.issuer}/oauth/v2/authorize?${new URLSearchParams({ client_id: ui.app.clientId, redirect_uri: ui.rp.callback, response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', state: 'st', ...extra })}`;
  }

  async function errorShown(page: Page): Promise<string> {
    return (await page.textContent('[role=alert]'))?.trim() ?? '';
  }

  test('the same message for the right and a wrong password, no code; a session from before stops signing in silently; _unlock restores it', async () => {
    const lou = ui.users.lou;
    const { page } = await ui.freshPage();
    // A session from before the lock.
    await page.goto(authorizeUrl());
    await signIn(page, lou);
    assert.ok((await landedOn(page, ui.rp.callback)).searchParams.get('code'));

    // Someone guesses elsewhere until the account locks.
    const guess = await passwordForm(ui.world.server.url, ui.app.clientId, {}, ui.rp.callback);
    for (let i = 0; i < 3; i++) assert.equal((await guess(lou.loginName, `guess-${i}`)).status, 200);
    assert.equal((await ui.world.api('GET', `/management/v1/users/${lou.userId}`)).body.user.state, 'USER_STATE_LOCKED');

    await page.goto(authorizeUrl({ prompt: 'none' }));
    const silent = await landedOn(page, ui.rp.callback).catch(async (err) => assert.fail(`${err} ${page.url()} ${(await page.content()).slice(0, 1500)}`));
    assert.equal(silent.searchParams.get('error'), 'login_required', 'no code from the old session');
    assert.equal(silent.searchParams.get('code'), null);

    const fresh = await ui.freshPage();
    await fresh.page.goto(authorizeUrl({ prompt: 'login' }));
    await signIn(fresh.page, { loginName: lou.loginName, password: 'wrong-password' });
    const afterWrong = await errorShown(fresh.page);
    await fresh.page.fill('#password', lou.password);
    await fresh.page.click('button[type=submit]');
    await fresh.page.waitForLoadState();
    const afterRight = await errorShown(fresh.page);
    await screenshot(fresh.page, 'login-locked');
    assert.match(afterWrong, /This account is locked/);
    assert.equal(afterRight, afterWrong, 'the right password gets the same answer');
    assert.ok(new URL(fresh.page.url()).pathname.startsWith('/ui/login/'), `still on the login page: ${fresh.page.url()}`);

    const unlocked = await ui.world.api('POST', `/management/v1/users/${lou.userId}/_unlock`, {});
    assert.equal(unlocked.status, 200, JSON.stringify(unlocked.body));
    await fresh.page.fill('#password', lou.password);
    await fresh.page.click('button[type=submit]');
    assert.ok((await landedOn(fresh.page, ui.rp.callback)).searchParams.get('code'), 'signed in after the unlock');
  });
});
