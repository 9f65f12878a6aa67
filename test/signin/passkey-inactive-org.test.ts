import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { apiClient, type Api } from '../support/api.ts';
import { addPasskeyAuthenticator, confidentialAppFor, needsChromium, startCodeFlow, startLoginUi, type LoginUi } from '../support/browser.ts';

// docs/api/orgs.md: a user of a deactivated org signs in with no passkey
// either — at an app of the (active) first org, in Chromium with its
// virtual authenticator — and signs in again once the org is reactivated.

describe('in Chromium: a passkey of a user of an inactive org', { skip: needsChromium }, () => {
  let ui: LoginUi<'pia'>;
  let admin: Api;
  let config: client.Configuration;
  let p: Page;

  before(async () => {
    ui = await startLoginUi({ pia: { firstName: 'Pia', lastName: 'Passkey' } });
    admin = apiClient(ui.world.server.url, ui.world.adminPat, { strictJson: true });
    // The app belongs to the instance's first org, so it stays a client while ACME is inactive.
    const project = await admin('POST', '/management/v1/projects', { body: { name: 'First Shop' } });
    assert.equal(project.status, 200, project.text);
    const app = await admin('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, { body: { name: 'first shop', ...confidentialAppFor(ui.rp) } });
    assert.equal(app.status, 200, app.text);
    config = await client.discovery(new URL(ui.world.issuer), app.body.clientId, undefined, client.ClientSecretBasic(app.body.clientSecret), {
      execute: [client.allowInsecureRequests],
    });
    const fresh = await ui.freshPage();
    p = fresh.page;
    await addPasskeyAuthenticator(fresh.context, p);
    const pia = ui.users.pia;
    await p.goto(`${ui.world.issuer}/ui/login/security`);
    await p.fill('#loginName', pia.loginName);
    await p.fill('#password', pia.password);
    await p.click('button[type=submit]');
    await p.fill('#passkeyName', 'Laptop');
    await p.click('#passkey-register');
    await p.waitForSelector('ul#passkeys');
  });
  after(async () => {
    await ui?.stop();
  });

  async function passwordless(): Promise<() => Promise<Record<string, unknown>>> {
    const finish = await startCodeFlow(p, config, ui.rp, { prompt: 'login' });
    await p.click('#passkey-authenticate');
    return async () => (await finish()).claims()!;
  }

  const orgState = async (action: '_deactivate' | '_reactivate') => {
    const res = await admin('POST', `/management/v1/orgs/me/${action}`, { orgId: ui.world.orgId });
    assert.equal(res.status, 200, res.text);
  };

  test('signs in before; refused while the org is inactive; signs in again after reactivation', async () => {
    assert.equal((await (await passwordless())()).sub, ui.users.pia.userId);

    await orgState('_deactivate');
    await passwordless();
    await p.waitForSelector('[role=alert]');
    assert.match((await p.textContent('[role=alert]')) ?? '', /\S/, 'the login says why');
    assert.ok(new URL(p.url()).pathname.startsWith('/ui/login/'), 'no code for the app');

    await orgState('_reactivate');
    assert.equal((await (await passwordless())()).sub, ui.users.pia.userId);
  });
});
