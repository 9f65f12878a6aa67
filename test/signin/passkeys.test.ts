import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';
import { addPasskeyAuthenticator, confidentialAppFor, needsChromium, screenshot, startCodeFlow, startLoginUi, type LoginUi } from '../support/browser.ts';

// Passkeys (WebAuthn Level 2) in Chromium with its virtual authenticator
// (CDP WebAuthn domain: ctap2, internal, resident keys, user verification),
// on the issuer http://localhost:PORT, a secure context: registration on the
// security page, passwordless sign-in from the login-name page, a passkey as
// second factor after the password, amr and acr through openid-client, and
// responses that must be refused: malformed, for another challenge, replayed.

describe('in Chromium: passkeys', { skip: needsChromium }, () => {
  let ui: LoginUi<'pia'>;
  let config: client.Configuration;
  let context: BrowserContext;
  let p: Page;

  before(async () => {
    ui = await startLoginUi({ pia: { firstName: 'Pia', lastName: 'Passkey' } });
    const app = await ui.world.createApp(confidentialAppFor(ui.rp));
    config = await client.discovery(new URL(ui.world.issuer), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
    ({ context, page: p } = await ui.freshPage());
    await addPasskeyAuthenticator(context, p);
  });
  after(async () => {
    await ui?.stop();
  });

  async function alert(): Promise<string> {
    return ((await p.textContent('[role=alert]')) ?? '').trim();
  }

  async function authorize(extra: Record<string, string> = {}) {
    const finish = await startCodeFlow(p, config, ui.rp, extra);
    return async () => (await finish()).claims()!;
  }

  /** Runs the page's ceremony in the browser without sending its answer: the response JSON and the form's challenge id. */
  async function ceremonyResponse(): Promise<{ response: string; challengeId: string }> {
    return (await p.evaluate(`(async () => {
      const form = document.querySelector('form[data-passkey]');
      const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: JSON.parse(form.dataset.options) });
      return { response: JSON.stringify(response), challengeId: form.elements.challengeId.value };
    })()`)) as { response: string; challengeId: string };
  }

  /** Posts the page's passkey form with these values, as a tampering client would. */
  async function postPasskeyForm(values: { response: string; challengeId?: string }): Promise<void> {
    await Promise.all([
      p.waitForNavigation(),
      p.evaluate(`(() => {
        const form = document.querySelector('form[data-passkey]');
        form.elements.response.value = ${JSON.stringify(values.response)};
        ${values.challengeId ? `form.elements.challengeId.value = ${JSON.stringify(values.challengeId)};` : ''}
        form.submit();
      })()`),
    ]);
  }

  async function passkeyCount(): Promise<number> {
    const { rows } = await ui.world.server.running.db.query('SELECT 1 FROM user_passkeys WHERE user_id = $1', [ui.users.pia.userId]);
    return rows.length;
  }

  test('registration on the security page; a malformed registration response is refused and stores nothing', async () => {
    const pia = ui.users.pia;
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    await p.fill('#loginName', pia.loginName);
    await p.fill('#password', pia.password);
    await p.click('button[type=submit]');
    assert.equal((await p.textContent('#passkeys'))?.trim(), 'None yet');

    await postPasskeyForm({ response: '{"id": 1' });
    assert.match(await alert(), /no usable passkey response/);
    assert.equal(await passkeyCount(), 0);

    await p.fill('#passkeyName', 'Laptop');
    await p.click('#passkey-register');
    await p.waitForSelector('ul#passkeys');
    await screenshot(p, 'security-passkeys');
    assert.match((await p.textContent('#passkeys')) ?? '', /Laptop/);
    const factors = await ui.world.api('GET', `/management/v1/users/${pia.userId}/auth_factors`);
    assert.equal(factors.body.result.length, 1);
    assert.equal(factors.body.result[0].u2f.name, 'Laptop');
    assert.equal(factors.body.result[0].state, 'AUTH_FACTOR_STATE_READY');
  });

  test('passwordless sign-in from the login-name page: amr hwk user, acr mfa', async () => {
    const finish = await authorize({ prompt: 'login' });
    await screenshot(p, 'login-name-passkey');
    await p.click('#passkey-authenticate');
    const claims = await finish();
    assert.equal(claims.sub, ui.users.pia.userId);
    assert.deepEqual(claims.amr, ['hwk', 'user']);
    assert.equal(claims.acr, 'mfa');
  });

  test('after the password, the passkey is the second factor: amr pwd hwk mfa', async () => {
    const pia = ui.users.pia;
    const finish = await authorize({ prompt: 'login' });
    await p.fill('#loginName', pia.loginName);
    await p.click('button[type=submit]');
    await p.fill('#password', pia.password);
    await p.click('button[type=submit]');
    await p.waitForSelector('#passkey-authenticate');
    assert.equal(await p.locator('#code').count(), 0, 'no code field without an authenticator app');
    await p.click('#passkey-authenticate');
    assert.deepEqual((await finish()).amr, ['pwd', 'hwk', 'mfa']);

    // The security page's own sign-in asks for the passkey too.
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    await p.click('text=Sign out');
    await p.fill('#loginName', pia.loginName);
    await p.fill('#password', pia.password);
    await p.click('button[type=submit]');
    await p.click('#passkey-authenticate');
    await p.waitForSelector('ul#passkeys');
    assert.match((await p.textContent('#passkeys')) ?? '', /Laptop/);
  });

  test('refused with a message, no sign-in: a malformed response, a response for another challenge, a replayed assertion', async () => {
    await authorize({ prompt: 'login' });
    await postPasskeyForm({ response: 'not json' });
    assert.match(await alert(), /no usable passkey response/);
    await postPasskeyForm({ response: '' });
    assert.match(await alert(), /no usable passkey response/);

    // An assertion signed over one challenge, sent with another.
    const signed = await ceremonyResponse();
    await p.reload();
    await postPasskeyForm({ response: signed.response });
    assert.match(await alert(), /was not accepted/);

    // A good assertion, used once, then sent again with its own challenge.
    const finish = await authorize({ prompt: 'login' });
    const good = await ceremonyResponse();
    await postPasskeyForm(good);
    assert.deepEqual((await finish()).amr, ['hwk', 'user']);
    await authorize({ prompt: 'login' });
    await postPasskeyForm(good);
    assert.match(await alert(), /expired or was already used/);
    assert.ok(new URL(p.url()).pathname.startsWith('/ui/login/'), 'no code for the app');
  });

  test('the login policy may forbid passwordless sign-in; an admin removes a passkey (user.passkey.removed) and it no longer signs in', async () => {
    const pia = ui.users.pia;
    assert.equal((await ui.world.api('PUT', '/management/v1/policies/login', { passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' })).status, 200);
    await authorize({ prompt: 'login' });
    assert.equal(await p.locator('#passkey-authenticate').count(), 0);
    assert.equal((await ui.world.api('DELETE', '/management/v1/policies/login')).status, 200);

    const factors = await ui.world.api('GET', `/management/v1/users/${pia.userId}/auth_factors`);
    const passkeyId = factors.body.result[0].u2f.id;
    const removed = await ui.world.api('DELETE', `/management/v1/users/${pia.userId}/passkeys/${passkeyId}`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal((await ui.world.api('DELETE', `/management/v1/users/${pia.userId}/passkeys/${passkeyId}`)).status, 404);
    const { rows } = await ui.world.server.running.db.query<{ event_type: string }>(
      "SELECT event_type FROM events WHERE aggregate_id = $1 AND event_type LIKE 'user.passkey.%' ORDER BY position",
      [pia.userId],
    );
    assert.deepEqual(
      rows.map((r) => r.event_type),
      ['user.passkey.added', 'user.passkey.removed'],
    );

    await authorize({ prompt: 'login' });
    await p.click('#passkey-authenticate');
    await p.waitForSelector('[role=alert]');
    assert.match(await alert(), /was not accepted/, 'the authenticator still holds the key; the server no longer does');
  });
});
