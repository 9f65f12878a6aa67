import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { landedOn, needsChromium, signIn, startLoginUi, type LoginUi } from '../support/browser.ts';
import { ROOT } from '../support/server.ts';
import { base32Decode, totpCode, totpStep } from '../../src/domain/totp.ts';

// Every login page at 1280 px and 375 px wide, with a login name of 60+
// characters as a new user would have it: nothing sticks out of the card or
// makes the page scroll sideways. Screenshots of each go to
// test-results/login-pages/ (not committed) for a person to look at.

const SHOTS = join(ROOT, 'test-results/login-pages');
const WIDTHS = [1280, 375];

describe('in Chromium: the login pages at 1280 and 375 px with a long login name', { skip: needsChromium }, () => {
  let ui: LoginUi<'maximiliane.alexandra.von-und-zu-liechtenstein'>;
  const shot: string[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ui = await startLoginUi({
      'maximiliane.alexandra.von-und-zu-liechtenstein': { firstName: 'Maximiliane Alexandra Konstanze', lastName: 'von und zu Liechtenstein-Hohenberg' },
    });
  });
  after(async () => {
    await ui?.stop();
  });

  /** Checks the page at both widths (nothing outside the card, no sideways scrolling) and saves a screenshot of each. */
  async function check(page: Page, name: string): Promise<void> {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 720 });
      // A string, as the other browser tests pass theirs: the test code is type-checked without the DOM's types.
      const layout = (await page.evaluate(`(() => {
        const main = document.querySelector('main').getBoundingClientRect();
        const outside = [...document.querySelectorAll('main *')]
          .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && (r.right > main.right + 1 || r.left < main.left - 1);
          })
          .map((el) => '<' + el.tagName.toLowerCase() + ' class="' + el.className + '"> ' + (el.textContent || '').trim().slice(0, 40));
        return { outside, sideways: document.documentElement.scrollWidth > window.innerWidth };
      })()`)) as { outside: string[]; sideways: boolean };
      await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
      assert.deepEqual(layout.outside, [], `${name} at ${width} px: elements outside the card`);
      assert.equal(layout.sideways, false, `${name} at ${width} px scrolls sideways`);
    }
    await page.setViewportSize({ width: 1280, height: 720 });
    shot.push(name);
  }

  function authorizeUrl(extra: Record<string, string> = {}): string {
    return `${ui.world.issuer}/oauth/v2/authorize?${new URLSearchParams({ client_id: ui.app.clientId, redirect_uri: ui.rp.callback, response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...extra })}`;
  }

  test('every page keeps to the card; the second factor works from the keyboard alone', async () => {
    const user = ui.users['maximiliane.alexandra.von-und-zu-liechtenstein'];
    assert.ok(user.loginName.length >= 60);
    const { page } = await ui.freshPage();

    await page.goto(authorizeUrl());
    await check(page, 'login-name');
    await page.fill('#loginName', user.loginName);
    await page.click('button[type=submit]');
    await check(page, 'password');
    await page.fill('#password', user.password);
    await page.click('button[type=submit]');
    await landedOn(page, ui.rp.callback);

    await page.goto(authorizeUrl({ prompt: 'select_account' }));
    await check(page, 'account-picker');
    await page.goto(authorizeUrl({ prompt: 'create' }));
    await check(page, 'registration');

    await page.goto(`${ui.world.issuer}/ui/login/security`);
    await check(page, 'security-sign-in');
    await page.fill('#loginName', user.loginName);
    await page.fill('#password', user.password);
    await page.click('button[type=submit]');
    await check(page, 'security');
    await page.click('text=Set up an authenticator app');
    await check(page, 'otp-setup');
    const secret = base32Decode((await page.textContent('#otpSecret'))!);
    await page.fill('#code', totpCode(secret, totpStep(Date.now())));
    await page.click('button[type=submit]');
    await check(page, 'recovery-codes');

    await page.goto(authorizeUrl({ prompt: 'login' }));
    await signIn(page, user);
    await page.waitForSelector('#code');
    await check(page, 'otp');
    // The code field has the focus: typing and Enter finish the login.
    await page.keyboard.type(totpCode(secret, totpStep(Date.now()) + 1));
    await page.keyboard.press('Enter');
    assert.ok((await landedOn(page, ui.rp.callback)).searchParams.get('code'));

    await page.goto(`${ui.world.issuer}/ui/login/no-such-interaction`);
    await check(page, 'error');
    assert.equal(shot.length, 10);
  });
});
