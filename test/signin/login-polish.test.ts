import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import {
  addPasskeyAuthenticator,
  confidentialAppFor,
  launchBrowser,
  needsChromium,
  type RelyingParty,
  type SignInWorld,
  startCodeFlow,
  startRelyingParty,
  startSignInWorld,
} from '../support/browser.ts';
import { assertAccessible, assertNoSideScroll } from '../support/console.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { type Mailbox, mailbox, shot, typedCode } from '../mail-flows/support.ts';

// The login pages in Chromium, with openid-client as the app and a real
// SMTP server receiving the mails: a passkey sign-in held for the email
// verification like a password one (docs/self-service.md), the broken
// password rule named in German on the code pages, and the external
// providers' buttons in their brands (docs/idps.md, "The login page").

describe('in Chromium: the login pages', { skip: needsChromium }, () => {
  let sink: SmtpSink;
  let mails: Mailbox;
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let config: client.Configuration;
  const contexts: BrowserContext[] = [];

  before(async () => {
    sink = await startSmtpSink();
    mails = mailbox(sink);
    [world, rp, browser] = await Promise.all([startSignInWorld({ SMTP_URL: sink.url() }), startRelyingParty(), launchBrowser()]);
    const app = await world.createApp({ ...confidentialAppFor(rp), idTokenUserinfoAssertion: true });
    config = await client.discovery(new URL(world.issuer), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await rp?.close();
    await world?.stop();
    await sink?.stop();
  });

  async function freshPage(options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale: 'en-US', ...options });
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    return { context, page: await context.newPage() };
  }

  const alertOf = async (page: Page) => ((await page.textContent('[role=alert]')) ?? '').trim();

  async function human(userName: string, extra: Record<string, unknown>): Promise<{ userId: string; email: string }> {
    const email = `${userName}@acme.example.test`;
    const created = await world.api('POST', '/management/v1/users/human', {
      userName,
      profile: { firstName: userName, lastName: 'Tester' },
      email: { email },
      ...extra,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return { userId: created.body.userId, email };
  }

  test('with requireEmailVerification a passkey sign-in stops at the verification page, then ends with the passkey’s amr', async () => {
    const paula = await human('paula', { password: 'Paula-Passw0rd' });
    await mails.nth(paula.email, 1);
    const { context, page } = await freshPage();
    await addPasskeyAuthenticator(context, page);
    await page.goto(`${world.issuer}/ui/login/security`);
    await page.fill('#loginName', `paula@acme.example.test`);
    await page.fill('#password', 'Paula-Passw0rd');
    await page.click('button[type=submit]');
    await page.fill('#passkeyName', 'Laptop');
    await page.click('#passkey-register');
    await page.waitForSelector('ul#passkeys');

    assert.equal((await world.api('PUT', '/management/v1/policies/login', { requireEmailVerification: true })).status, 200);
    try {
      const finish = await startCodeFlow(page, config, rp, { prompt: 'login', scope: 'openid email' });
      await page.click('#passkey-authenticate');
      await page.waitForSelector('#code');
      assert.equal((await page.textContent('h1'))?.trim(), 'Verify your email address');
      assert.ok(new URL(page.url()).pathname.startsWith('/ui/login/'), 'no code for the app yet');
      const code = typedCode(await mails.nth(paula.email, 2));
      await page.fill('#code', code);
      await page.click('button[type=submit]');
      const claims = (await finish()).claims()!;
      assert.equal(claims.sub, paula.userId);
      assert.equal(claims.email_verified, true);
      assert.deepEqual(claims.amr, ['hwk', 'user'], 'the passkey is both factors: no second factor was asked');
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });

  test('the code pages name the broken password rule in German for a German browser', async () => {
    const policy = await world.api('PUT', '/management/v1/policies/password_complexity', { minLength: 10, hasUppercase: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    try {
      const { page } = await freshPage({ locale: 'de-DE' });
      const setPassword = async (password: string) => {
        await page.fill('#password', password);
        await page.fill('#passwordRepeat', password);
        await page.click('button[type=submit]');
        await page.waitForLoadState();
      };
      // An invitation: /ui/login/user/init.
      const gerd = await human('gerd', {});
      const invitation = await mails.nth(gerd.email, 1);
      await page.goto(`${world.issuer}/ui/login/user/init?userID=${gerd.userId}&code=${typedCode(invitation)}`);
      await setPassword('kurz');
      assert.equal(
        await alertOf(page),
        'Dieses Passwort ist nicht erlaubt. Verwenden Sie mindestens 10 Zeichen. Verwenden Sie mindestens einen Großbuchstaben.',
      );
      await shot(page, 'user-init-rule-de');

      // A reset: /ui/login/password/init.
      const reset = await world.api('POST', `/management/v1/users/${gerd.userId}/password/_reset`, { returnCode: true });
      assert.equal(reset.status, 200, JSON.stringify(reset.body));
      await page.goto(`${world.issuer}/ui/login/password/init?userID=${gerd.userId}&code=${reset.body.verificationCode}`);
      await setPassword('kleinbuchstaben');
      assert.equal(await alertOf(page), 'Dieses Passwort ist nicht erlaubt. Verwenden Sie mindestens einen Großbuchstaben.');
      assert.doesNotMatch(await page.locator('main').innerText(), /must|contain/);
      await assertAccessible(page, 'password init (de)');

      // The API keeps its English.
      const api = await world.api('POST', '/management/v1/users/human', {
        userName: 'hans',
        profile: { firstName: 'Hans', lastName: 'Tester' },
        email: { email: 'hans@acme.example.test' },
        password: 'kleinbuchstaben',
      });
      assert.equal(api.status, 400);
      assert.match(JSON.stringify(api.body), /must contain an uppercase letter/);
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/password_complexity')).status, 200);
    }
  });

  test('external providers’ buttons: brand marks for Google, GitHub, GitLab and Microsoft, neutral for others; keyboard focus visible; 375 px and dark mode', async () => {
    const kinds: Array<[string, string, Record<string, unknown>]> = [
      ['google', 'Google', {}],
      ['github', 'GitHub', {}],
      ['gitlab', 'GitLab', {}],
      ['azure_ad', 'Microsoft', { tenant: 'common' }],
      [
        'oauth',
        'Acme SSO',
        {
          authorizationEndpoint: 'https://sso.acme.example.test/authorize',
          tokenEndpoint: 'https://sso.acme.example.test/token',
          userEndpoint: 'https://sso.acme.example.test/user',
          idAttribute: 'sub',
        },
      ],
    ];
    for (const [kind, name, extra] of kinds) {
      const created = await world.api('POST', `/management/v1/idps/${kind}`, { name, clientId: 'client', clientSecret: 'secret', ...extra });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal((await world.api('POST', '/management/v1/policies/login/idps', { idpId: created.body.id })).status, 200);
    }
    try {
      for (const [scheme, width] of [
        ['light', 1280],
        ['dark', 375],
      ] as const) {
        const { page } = await freshPage({ colorScheme: scheme, viewport: { width, height: 900 } });
        await startCodeFlow(page, config, rp);
        await page.waitForSelector('.idps');
        const buttons = page.locator('.idps button');
        assert.deepEqual(
          await buttons.evaluateAll((all) => all.map((b) => [b.className, b.textContent?.trim(), b.querySelectorAll('svg[aria-hidden=true]').length])),
          [
            ['idp idp-google', 'Sign in with Google', 1],
            ['idp idp-github', 'Sign in with GitHub', 1],
            ['idp idp-gitlab', 'Sign in with GitLab', 1],
            ['idp idp-microsoft', 'Sign in with Microsoft', 1],
            ['idp idp-neutral', 'Sign in with Acme SSO', 0],
          ],
        );
        const github = page.getByRole('button', { name: 'Sign in with GitHub' });
        const colours = await github.evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]);
        assert.deepEqual(colours, scheme === 'light' ? ['rgb(36, 41, 47)', 'rgb(255, 255, 255)'] : ['rgb(246, 248, 250)', 'rgb(36, 41, 47)']);

        // From the last control before them, Tab reaches the first button, with a visible outline.
        await page.getByRole('button', { name: 'Sign in with Google' }).focus();
        await page.keyboard.press('Shift+Tab');
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const active = document.activeElement as HTMLElement;
          const style = getComputedStyle(active);
          return [active.textContent?.trim(), style.outlineStyle, style.outlineWidth];
        });
        assert.deepEqual(focused, ['Sign in with Google', 'solid', '3px']);
        await assertNoSideScroll(page, `login page (${scheme}, ${width} px)`);
        await assertAccessible(page, `login page (${scheme})`);
        await shot(page, `login-idps-${scheme}-${width}`);
      }
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });
});
