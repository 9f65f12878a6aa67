import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { needsChromium } from '../support/browser.ts';
import { assertAccessible, rowsAre, shoot, startConsoleScene, type ConsoleScene } from '../support/console.ts';

// Managing an org in the console: members listed by name and added by
// login name, an org renamed and a new one created (the address moves to
// it), a project and its roles changed and removed, an app's secret
// replaced and shown once, policies validated before anything is sent and
// reset only after a confirmation, and the German console in the login's
// words with the server's errors translated.

describe('managing an org in the console', { skip: needsChromium }, () => {
  let scene: ConsoleScene;
  let context: BrowserContext;
  let page: Page;
  let defaultOrg: string;

  const dialog = (p: Page = page) => p.getByRole('dialog', { name: /Please confirm|Bitte bestätigen/ });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  before(async () => {
    scene = await startConsoleScene();
    defaultOrg = (await scene.admin('POST', '/admin/v1/orgs/_search', { body: {} })).body.result[0].id;
    const grace = await scene.admin('POST', '/management/v1/users/human', {
      body: { userName: 'grace', profile: { firstName: 'Grace', lastName: 'Hopper' }, email: { email: 'grace@default.example.test' } },
    });
    assert.equal(grace.status, 200, grace.text);
    ({ context, page } = await scene.signedInPage());
  });
  after(() => scene?.stop());

  it('lists members by name, adds one found by login name, and removes one only after a confirmation', async () => {
    await nav('Members').click();
    const members = page.getByRole('region', { name: 'Members of this organization' });
    const table = members.getByRole('table', { name: 'Members of this organization' });
    await rowsAre(table, 1);
    assert.match(await table.innerText(), /Instance Admin\s+admin@default\.example\.test\s+Owner/);
    const add = members.getByRole('form', { name: 'Members of this organization: Add' });
    await add.getByLabel('Login name of the user').fill('gra');
    await add.getByRole('button', { name: 'Search' }).click();
    await add.getByRole('button', { name: 'Choose grace@default.example.test' }).click();
    await add.getByText('Chosen: grace@default.example.test').waitFor();
    await add.getByLabel('User manager').check();
    await add.getByRole('button', { name: 'Add' }).click();
    await add.getByText('Member added.').waitFor();
    await rowsAre(table, 2);
    assert.match(await table.locator('tbody tr').filter({ hasText: 'grace' }).innerText(), /Grace Hopper\s+grace@default\.example\.test\s+User manager/);
    await assertAccessible(page, 'members');
    await shoot(page, 'members-listed');

    const grace = table.locator('tbody tr').filter({ hasText: 'grace' });
    await grace.getByRole('button', { name: 'Remove member' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await scene.admin('POST', '/management/v1/orgs/me/members/_search', { body: {} })).body.result.length, 2, 'Cancel kept the member');
    await grace.getByRole('button', { name: 'Remove member' }).click();
    await dialog().getByRole('button', { name: 'Remove member' }).click();
    await rowsAre(table, 1);
    // No org can be left without members here; the instance's members are listed too.
    await page.getByRole('table', { name: 'Members of the instance' }).locator('tbody tr').first().waitFor();
  });

  it('renames the org and creates a new one, moving the address into it', async () => {
    await nav('Organization').click();
    const rename = page.getByRole('form', { name: 'Rename' });
    await rename.getByLabel('Name of the organization').fill('Default Corp');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await rename.getByText('Saved.').waitFor();
    await page.getByRole('heading', { level: 1, name: 'Default Corp' }).waitFor();
    assert.equal(await page.getByLabel('Organization', { exact: true }).locator('option:checked').innerText(), 'Default Corp');
    await assertAccessible(page, 'org');
    // Deactivating asks first; Cancel leaves the org active.
    await page.getByRole('button', { name: 'Deactivate organization' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
    const state = (await scene.admin('POST', '/admin/v1/orgs/_search', { body: { queries: [{ nameQuery: { name: 'Default Corp' } }] } })).body.result[0].state;
    assert.equal(state, 'ORG_STATE_ACTIVE');
    const create = page.getByRole('form', { name: 'New organization' });
    await create.getByLabel('Name of the organization').fill('Globex');
    await create.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: 'Globex' }).waitFor();
    const globex = (await scene.admin('POST', '/admin/v1/orgs/_search', { body: { queries: [{ nameQuery: { name: 'Globex' } }] } })).body.result[0].id;
    assert.equal(new URL(page.url()).pathname, `/ui/console/orgs/${globex}/org`);
    await page.goto(`${scene.consoleUrl}orgs/${defaultOrg}/users`);
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
  });

  it('renames a project and its roles, removes a role, and removes the project only after a confirmation', async () => {
    const shop = (await scene.admin('POST', '/management/v1/projects', { body: { name: 'Shop' } })).body.id;
    for (const roleKey of ['buyer', 'seller']) await scene.admin('POST', `/management/v1/projects/${shop}/roles`, { body: { roleKey, displayName: roleKey } });
    await page.goto(`${scene.consoleUrl}orgs/${defaultOrg}/projects/${shop}`);
    const settings = page.getByRole('form', { name: 'Project settings' });
    await settings.getByLabel('Name').fill('Web shop');
    await settings.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { level: 1, name: 'Web shop' }).waitFor();
    const buyer = page.getByRole('form', { name: 'Display name: buyer' });
    await buyer.getByRole('textbox', { name: 'Display name: buyer' }).fill('Buyer');
    await buyer.getByRole('button', { name: 'Save' }).click();
    const roles = page.getByRole('table', { name: 'Roles' });
    await roles.locator('tbody tr').filter({ hasText: 'seller' }).getByRole('button', { name: 'Remove role' }).click();
    await dialog().getByRole('button', { name: 'Remove role' }).click();
    await rowsAre(roles, 1);
    const project = (await scene.admin('GET', `/management/v1/projects/${shop}`)).body.project;
    assert.equal(project.name, 'Web shop');
    assert.deepEqual(project.roles, [{ roleKey: 'buyer', displayName: 'Buyer' }]);
    await assertAccessible(page, 'project');
    await shoot(page, 'project-edit');

    await page.getByRole('button', { name: 'Remove project' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await scene.admin('GET', `/management/v1/projects/${shop}`)).status, 200, 'Cancel kept the project');
    await page.getByRole('button', { name: 'Remove project' }).click();
    await dialog().getByRole('button', { name: 'Remove project' }).click();
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    assert.equal((await scene.admin('GET', `/management/v1/projects/${shop}`)).status, 404);
  });

  it("replaces an app's client secret after a confirmation and shows the new one once", async () => {
    const project = (await scene.admin('POST', '/management/v1/projects', { body: { name: 'Store' } })).body.id;
    const app = (
      await scene.admin('POST', `/management/v1/projects/${project}/apps/oidc`, { body: { name: 'Till', redirectUris: ['https://till.example/cb'] } })
    ).body;
    await page.goto(`${scene.consoleUrl}orgs/${defaultOrg}/projects/${project}/apps/${app.appId}`);
    await page.getByRole('button', { name: 'New client secret' }).click();
    await dialog().getByRole('button', { name: 'New client secret' }).click();
    const secret = (await page.getByRole('region', { name: 'Client secret', exact: true }).locator('pre').innerText()).trim();
    assert.notEqual(secret, app.clientSecret);
    // The engine authenticates the client before it looks at the grant (refresh_token is not this app's): a wrong secret is invalid_client.
    const tokenError = async (clientSecret: string) => {
      const answer = await fetch(`${scene.server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${app.clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: 'grant_type=refresh_token&refresh_token=unknown',
      });
      return ((await answer.json()) as { error?: string }).error;
    };
    assert.equal(await tokenError(secret), 'unauthorized_client', 'the new secret authenticates the app');
    assert.equal(await tokenError(app.clientSecret), 'invalid_client', 'the old one no longer does');
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Till' }).waitFor();
    assert.equal(await page.getByText(secret).count(), 0, 'shown once');
  });

  it('refuses an empty number in a policy beside its field, saves nothing, and resets only after a confirmation', async () => {
    await nav('Policies').click();
    const lockout = page.getByRole('region', { name: 'Lockout policy' });
    const form = lockout.getByRole('form', { name: 'This organization: Lockout policy' });
    const duration = form.getByLabel('Lock duration in seconds (0: until unlocked)');
    await duration.fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Please fill this in.').waitFor();
    assert.equal(await duration.getAttribute('aria-invalid'), 'true');
    assert.equal((await scene.admin('GET', '/management/v1/policies/lockout')).body.isDefault, true, 'nothing saved');
    await duration.fill('600');
    await form.getByRole('button', { name: 'Save' }).click();
    await lockout.getByText('This organization has its own policy.').waitFor();
    assert.equal((await scene.admin('GET', '/management/v1/policies/lockout')).body.policy.lockoutDurationSeconds, 600);

    // Labels in words, never the API's enum names.
    const login = page.getByRole('region', { name: 'Login policy' });
    const text = await login.innerText();
    assert.doesNotMatch(text, /PASSWORDLESS_TYPE|SECOND_FACTOR_TYPE|secondFactors|passwordlessType/);
    await login.getByRole('group', { name: 'Second factors users may set up' }).first().getByLabel('Security key or passkey').waitFor();
    await assertAccessible(page, 'policies');

    await lockout.getByRole('button', { name: 'Use the instance default' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await scene.admin('GET', '/management/v1/policies/lockout')).body.isDefault, false, 'Cancel kept the policy');
    await lockout.getByRole('button', { name: 'Use the instance default' }).click();
    await dialog().getByRole('button', { name: 'Use the instance default' }).click();
    await lockout.getByText('This organization follows the instance default.').waitFor();
  });

  it('speaks German in the login’s words, with the server’s errors translated', async () => {
    const german = await scene.signedInPage({ locale: 'de-DE' });
    const p = german.page;
    await p.getByRole('button', { name: 'Neuer Benutzer' }).click();
    await p.getByLabel('Loginname', { exact: true }).waitFor();
    await p.getByRole('button', { name: 'Erstellen' }).click();
    await p
      .getByText(/darf nicht leer sein|muss angegeben werden/)
      .first()
      .waitFor();
    assert.doesNotMatch(await p.locator('main').innerText(), /must not|is required/);
    await p.goto(`${scene.consoleUrl}orgs/${defaultOrg}/org`);
    const create = p.getByRole('form', { name: 'Neue Organisation' });
    await create.getByLabel('Name der Organisation').fill('Globex');
    await create.getByRole('button', { name: 'Erstellen' }).click();
    await create.getByText('Das gibt es bereits: wählen Sie einen anderen Namen.').waitFor();
    assert.doesNotMatch(await p.locator('main').innerText(), /already exists/);
    await assertAccessible(p, 'org (de)');
    await shoot(p, 'org-de');
    await german.context.close();
  });

  it('showed every page without a script error or CSP refusal', async () => {
    await context.close();
    assert.deepEqual(scene.problems, []);
  });
});
