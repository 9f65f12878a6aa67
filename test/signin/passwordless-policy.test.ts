import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';
import { apiClient } from '../support/api.ts';
import { addPasskeyAuthenticator, confidentialAppFor, needsChromium, startCodeFlow, startLoginUi, type LoginUi, type TestUser } from '../support/browser.ts';
import { discoverClients } from '../support/tokens.ts';

// An org's login policy with passwordlessType NOT_ALLOWED holds where the
// passkey answer is posted, not only on the login page that offers the
// button: for the org of the app being signed in to and for the org of
// the user the passkey belongs to. The attack reproduced: a challenge
// taken from the login page of another org's app, answered by the
// authenticator and posted to the blocked org's app's login.

describe('in Chromium: passwordlessType NOT_ALLOWED where the passkey answer is checked', { skip: needsChromium }, () => {
  let ui: LoginUi<'pia'>;
  /** ACME's app: ACME forbids passwordless sign-in. */
  let blocked: client.Configuration;
  /** The app of the org "Open", which allows it. */
  let open: client.Configuration;
  let oli: TestUser;

  before(async () => {
    ui = await startLoginUi({ pia: { firstName: 'Pia', lastName: 'Passkey' } });
    const asAdmin = apiClient(ui.world.server.url, ui.world.adminPat, { strictJson: true });
    oli = { userId: '', userName: 'oli', loginName: 'oli@open.example.test', password: 'Pw-oli-1234' };
    const setup = await asAdmin('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Open', domain: 'open.example.test' },
        human: { userName: 'oli', profile: { firstName: 'Oli', lastName: 'Open' }, email: { email: 'oli@open.example.test' }, password: oli.password },
      },
    });
    assert.equal(setup.status, 200, JSON.stringify(setup.body));
    oli.userId = setup.body.userId;
    const inOpen = apiClient(ui.world.server.url, ui.world.adminPat, { orgId: setup.body.orgId, strictJson: true });
    const project = await inOpen('POST', '/management/v1/projects', { body: { name: 'Open shop' } });
    const openApp = await inOpen('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, { body: { name: 'Open app', ...confidentialAppFor(ui.rp) } });
    assert.equal(openApp.status, 200, JSON.stringify(openApp.body));
    const acmeApp = await ui.world.createApp(confidentialAppFor(ui.rp));
    const clients = await discoverClients(ui.world.issuer);
    blocked = clients.config(acmeApp.clientId, client.ClientSecretBasic(acmeApp.clientSecret!));
    open = clients.config(openApp.body.clientId, client.ClientSecretBasic(openApp.body.clientSecret));
  });
  after(async () => {
    await ui?.stop();
  });

  /** A browser with its own virtual authenticator (user verification, resident keys), holding a passkey of `user` registered on the security page. */
  async function browserWithPasskey(user: TestUser): Promise<{ context: BrowserContext; p: Page }> {
    const { context, page: p } = await ui.freshPage();
    await addPasskeyAuthenticator(context, p);
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    await p.fill('#loginName', user.loginName);
    await p.fill('#password', user.password);
    await p.click('button[type=submit]');
    await p.click('#passkey-register');
    await p.waitForSelector('ul#passkeys');
    return { context, p };
  }

  /** A code flow with prompt=login; `finish` answers the ID token's claims. */
  async function authorize(p: Page, config: client.Configuration) {
    const finish = await startCodeFlow(p, config, ui.rp, { prompt: 'login' });
    return async () => (await finish()).claims()!;
  }

  /** Runs the passkey ceremony of the page's passkey form without posting it: the answer and its challenge id. */
  async function ceremonyResponse(p: Page): Promise<{ response: string; challengeId: string }> {
    return (await p.evaluate(`(async () => {
      const form = document.querySelector('form[data-passkey]');
      const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: JSON.parse(form.dataset.options) });
      return { response: JSON.stringify(response), challengeId: form.elements.challengeId.value };
    })()`)) as { response: string; challengeId: string };
  }

  /** Posts a passkey answer to this login page's passkey endpoint with the page's own CSRF token, as a tampering client would; answers the status. */
  async function postToThisLogin(p: Page, answer: { response: string; challengeId: string }): Promise<number | undefined> {
    const [response] = await Promise.all([
      p.waitForNavigation(),
      p.evaluate(`(() => {
        const login = document.querySelector('form[action$="/login-name"]');
        const form = document.createElement('form');
        form.method = 'post';
        form.action = login.getAttribute('action').replace(/\\/login-name$/, '/passkey');
        for (const [name, value] of Object.entries({ csrf: login.elements.csrf.value, ...${JSON.stringify(answer)} })) {
          const input = document.createElement('input');
          input.type = 'hidden';
          input.name = name;
          input.value = value;
          form.appendChild(input);
        }
        document.body.appendChild(form);
        form.submit();
      })()`),
    ]);
    return response?.status();
  }

  test("a challenge from another org's login page, answered and posted to the blocked org's app: refused, no code; the open org's app still signs in with the passkey", async () => {
    const { p } = await browserWithPasskey(oli);
    assert.equal((await ui.world.api('PUT', '/management/v1/policies/login', { passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' })).status, 200);
    try {
      await authorize(p, open);
      const answer = await ceremonyResponse(p);
      await authorize(p, blocked);
      assert.equal(await p.locator('#passkey-authenticate').count(), 0, "the blocked app's login page offers no passkey");
      assert.equal(await postToThisLogin(p, answer), 403);
      assert.match((await p.textContent('[role=alert]')) ?? '', /passkey alone is not allowed/);
      assert.ok(new URL(p.url()).pathname.startsWith('/ui/login/'), 'no code for the blocked app');

      const finish = await authorize(p, open);
      await p.click('#passkey-authenticate');
      const claims = await finish();
      assert.equal(claims.sub, oli.userId);
      assert.deepEqual(claims.amr, ['hwk', 'user']);
    } finally {
      assert.equal((await ui.world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });

  test("a user of the blocked org signs in with their passkey on the open org's app: refused, no code", async () => {
    const { p } = await browserWithPasskey(ui.users.pia);
    assert.equal((await ui.world.api('PUT', '/management/v1/policies/login', { passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' })).status, 200);
    try {
      await authorize(p, open);
      await p.click('#passkey-authenticate');
      await p.waitForSelector('[role=alert]');
      assert.match((await p.textContent('[role=alert]')) ?? '', /passkey alone is not allowed/);
      assert.ok(new URL(p.url()).pathname.startsWith('/ui/login/'), 'no code for the app');
    } finally {
      assert.equal((await ui.world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
    // Allowed again: the same passkey signs in.
    const finish = await authorize(p, open);
    await p.click('#passkey-authenticate');
    assert.equal((await finish()).sub, ui.users.pia.userId);
  });
});
