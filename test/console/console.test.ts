import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { apiClient, type Api } from '../support/api.ts';
import { landedOn, needsChromium, signIn } from '../support/browser.ts';
import type { TestServer } from '../support/server.ts';
import { passwordForm } from '../support/login-form.ts';
import { eventually } from '../support/tokens.ts';
import { assertAccessible, CONSOLE_ADMIN as ADMIN, rowsAre, shoot, startConsoleScene, watch, type ConsoleScene } from '../support/console.ts';
import { consoleRedirectUri } from '../../src/commands/console-app.ts';

// The console in Chromium, as its users meet it: signing in as the
// first-start admin, each page by the accessible names of docs (README,
// "Console"), creating a user and finding it, lock state and unlock, an app
// and its secret shown once, rotating signing keys, paging the event log;
// every page without a serious or critical axe-core violation and without
// a CSP violation; keyboard use; German. Screenshots go to test-results/.

describe('the console in Chromium', { skip: needsChromium }, () => {
  let scene: ConsoleScene;
  let server: TestServer;
  let context: BrowserContext;
  let page: Page;
  let admin: Api;
  let consoleUrl: string;
  const audited: string[] = [];
  const problems: string[] = [];

  /** axe-core on the page as it is now: no serious or critical violation; and a screenshot for people. */
  async function audit(name: string): Promise<void> {
    await assertAccessible(page, name);
    await shoot(page, name);
    audited.push(name);
  }

  /** A property of the element that has the focus. */
  const focused = (property: 'textContent' | 'id' | 'name' | 'tagName') => page.evaluate<string>(`document.activeElement?.${property}`);
  // The focus moves a moment after a key press (fragment navigation, a new
  // page's heading), so the test polls for it. page.waitForFunction would
  // evaluate its predicate with eval once its first check fails, which the
  // console's CSP refuses.
  const focusMoves = (property: 'id' | 'tagName', expected: string) => eventually(async () => (await focused(property)) === expected, 5000, 25);
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  before(async () => {
    scene = await startConsoleScene();
    ({ server, admin, consoleUrl } = scene);
    context = await scene.browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    watch(page, problems);
  });
  after(async () => {
    await context?.close();
    await scene?.stop();
  });

  it('signs the first-start admin in through the login page and opens on Users, with every page in the navigation', async () => {
    await page.goto(consoleUrl);
    await landedOn(page, `${server.issuer}/ui/login`);
    await signIn(page, ADMIN);
    // The address names the org the pages act on: the admin's own.
    const landed = await landedOn(page, `${consoleUrl}orgs/`);
    const defaultOrg = (await admin('POST', '/admin/v1/orgs/_search', { body: {} })).body.result[0].id;
    assert.equal(landed.pathname, `/ui/console/orgs/${defaultOrg}/users`);
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    for (const name of ['Users', 'Projects', 'Apps', 'Members', 'Policies', 'Organization', 'Signing keys', 'Events'])
      assert.equal(await nav(name).count(), 1, name);
    assert.equal(await nav('Users').getAttribute('aria-current'), 'page');
    assert.match(await page.locator('header').innerText(), /Signed in as Instance Admin/);
    // The admin sees every org and may switch.
    assert.deepEqual(await page.getByLabel('Organization').locator('option').allInnerTexts(), ['Default']);
    await audit('users');
  });

  it('creates a user through the form, naming the bad field first, and finds it by search', async () => {
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByLabel('Login name', { exact: true }).fill('grace');
    await page.getByLabel('Email').fill('not an address');
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.getByLabel('Password', { exact: true }).fill('Grace-Passw0rd');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('must be an email address').waitFor();
    await page.getByText('Please check the marked fields.').waitFor();
    assert.equal(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');
    await audit('users-new-invalid');
    await page.getByLabel('Email').fill('grace@default.example.test');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Created. grace').waitFor();

    // Enough users for a second page, then the search.
    for (let i = 0; i < 25; i++) {
      const answer = await admin('POST', '/management/v1/users/machine', { body: { userName: `robot-${String(i).padStart(2, '0')}`, name: `Robot ${i}` } });
      assert.equal(answer.status, 200, answer.text);
    }
    await page.getByLabel('Search by login name').fill('GRA');
    await page.getByRole('button', { name: 'Search' }).click();
    const rows = page.getByRole('table', { name: 'Users' }).locator('tbody tr');
    await rowsAre(page.getByRole('table', { name: 'Users' }), 1);
    assert.equal(await page.getByRole('button', { name: 'Next page' }).count(), 0, 'one page: no pager');
    assert.match(await rows.first().innerText(), /grace@default\.example\.test\s+Grace Hopper\s+Human\s+Active/);
    await page.getByLabel('Search by login name').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    // admin, portcullis-admin, grace and 25 robots
    await page.getByText('1–20 of 28').waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('21–28 of 28').waitFor();
    assert.equal(await rows.count(), 8);
  });

  it('shows a user locked by failed logins and unlocks it', async () => {
    const policy = await admin('PUT', '/admin/v1/policies/lockout', { body: { maxPasswordAttempts: 3, lockoutDurationSeconds: 0 } });
    assert.equal(policy.status, 200, policy.text);
    const guess = await passwordForm(server.url, 'portcullis-console', {}, consoleRedirectUri(server.issuer));
    for (let i = 0; i < 3; i++) assert.equal((await guess('grace@default.example.test', `wrong-${i}`)).status, 200);
    const found = await admin('POST', '/management/v1/users/_search', { body: { queries: [{ userNameQuery: { userName: 'grace' } }] } });
    const userId = found.body.result[0].id;
    assert.equal(found.body.result[0].state, 'USER_STATE_LOCKED');

    await page.goto(`${consoleUrl}users`);
    await page.getByLabel('State').selectOption('USER_STATE_LOCKED');
    await rowsAre(page.getByRole('table', { name: 'Users' }), 1);
    await page.getByRole('link', { name: 'grace@default.example.test' }).click();
    await page.getByRole('heading', { level: 1, name: 'grace@default.example.test' }).waitFor();
    const lock = page.getByRole('region', { name: 'Lock state' });
    await lock.getByRole('button', { name: 'Unlock' }).waitFor();
    await audit('user-locked');
    await lock.getByRole('button', { name: 'Unlock' }).click();
    await lock.getByText('The user is unlocked.').waitFor();
    await lock.getByText('Not locked').waitFor();
    assert.equal((await admin('GET', `/management/v1/users/${userId}`)).body.user.state, 'USER_STATE_ACTIVE');
    assert.equal((await guess('grace@default.example.test', 'Grace-Passw0rd')).status, 303, 'the right password signs in again');
  });

  it("shows a machine user's key and token once, with copy and download", async () => {
    await page.goto(`${consoleUrl}users`);
    await page.getByRole('link', { name: 'robot-00@default.example.test' }).click();
    await page.getByRole('heading', { level: 1, name: 'robot-00@default.example.test' }).waitFor();
    await page.getByRole('button', { name: 'New token' }).click();
    const secret = page.getByRole('region', { name: 'Token' });
    const token = (await secret.locator('pre').innerText()).trim();
    assert.match(token, /^[A-Za-z0-9_-]{20,}$/);
    assert.equal(
      await secret.getByRole('link', { name: 'Download' }).getAttribute('download'),
      `${(await admin('GET', `/management/v1/users/${page.url().split('/').pop()}/pats`)).body.result[0].id}.pat`,
    );
    // The token works: it is the machine user's PAT.
    assert.equal((await apiClient(server.url, token)('POST', '/management/v1/users/_search', { body: {} })).status, 403, 'a PAT of a user without roles');
    await audit('user-machine');
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'robot-00@default.example.test' }).waitFor();
    assert.equal(await page.getByText(token).count(), 0, 'shown once');
  });

  it('creates a project with a role and an app, and shows the app secret once', async () => {
    await nav('Projects').click();
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Shop');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Created. Shop').waitFor();
    await audit('projects');
    await page.getByRole('link', { name: 'Shop' }).click();
    await page.getByLabel('Role key').fill('buyer');
    await page.getByLabel('Display name').fill('Buyer');
    await page.getByRole('button', { name: 'Add role' }).click();
    await rowsAre(page.getByRole('table', { name: 'Roles' }), 1);
    assert.match(await page.getByRole('table', { name: 'Roles' }).innerText(), /buyer/);
    assert.equal(await page.getByRole('textbox', { name: 'Display name: buyer' }).inputValue(), 'Buyer');
    await audit('project');

    await page.getByRole('link', { name: 'Apps of this project' }).click();
    await page.getByRole('heading', { level: 1, name: 'Apps' }).waitFor();
    assert.equal(
      await page.getByLabel('Project').inputValue(),
      (await admin('POST', '/management/v1/projects/_search', { body: { queries: [{ nameQuery: { name: 'Shop' } }] } })).body.result[0].id,
    );
    await page.getByRole('button', { name: 'New app' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Web shop');
    await page.getByLabel('Redirect URIs (one per line)', { exact: true }).fill('https://shop.example/cb');
    await page.getByLabel('REFRESH TOKEN').check();
    await page.getByRole('button', { name: 'Create' }).click();
    const secret = page.getByRole('region', { name: 'Client secret' });
    const value = (await secret.locator('pre').innerText()).trim();
    assert.match(value, /^[A-Za-z0-9_-]{32,}$/);
    await secret.getByRole('button', { name: 'Copy' }).waitFor();
    await secret.getByRole('link', { name: 'Download' }).waitFor();
    await audit('apps');
    const clientId = await page.locator('main [data-client-id]').getAttribute('data-client-id');
    // The secret is the app's: client_credentials is not its grant, but the engine authenticates it first.
    const token = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${value}`).toString('base64')}` },
      body: 'grant_type=refresh_token&refresh_token=unknown',
    });
    assert.equal(((await token.json()) as { error?: string }).error, 'invalid_grant', 'the client authenticated; only the refresh token is unknown');

    await page.getByRole('link', { name: 'Web shop' }).click();
    await page.getByRole('heading', { level: 1, name: 'Web shop' }).waitFor();
    assert.equal(await page.getByText(value).count(), 0, 'the secret is not shown again');
    assert.equal(await page.getByLabel('REFRESH TOKEN').isChecked(), true);
    await page.getByLabel('Roles in the ID token').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await audit('app');
  });

  it("offers a private_key_jwt app's new key file for download under the key's id", async () => {
    const shop = (await admin('POST', '/management/v1/projects/_search', { body: { queries: [{ nameQuery: { name: 'Shop' } }] } })).body.result[0].id;
    const created = await admin('POST', `/management/v1/projects/${shop}/apps/oidc`, {
      body: { name: 'Key shop', redirectUris: ['https://shop.example/key-cb'], authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' },
    });
    assert.equal(created.status, 200);
    await page.goto(`${consoleUrl}projects/${shop}/apps/${created.body.appId}`);
    await page.getByRole('heading', { level: 1, name: 'Key shop' }).waitFor();
    await page.getByRole('button', { name: 'New key' }).click();
    const file = page.getByRole('region', { name: 'Key file' });
    const { keyId, appId } = JSON.parse(await file.locator('pre').innerText()) as { keyId: string; appId: string };
    assert.equal(appId, created.body.appId);
    assert.equal(await file.getByRole('link', { name: 'Download' }).getAttribute('download'), `${keyId}.json`);
  });

  it("grants a user a project's roles from the user's page", async () => {
    const grace = (await admin('POST', '/management/v1/users/_search', { body: { queries: [{ userNameQuery: { userName: 'grace' } }] } })).body.result[0].id;
    await page.goto(`${consoleUrl}users/${grace}`);
    const grants = page.getByRole('region', { name: 'User grants' });
    await grants.getByLabel('Project').selectOption({ label: 'Shop' });
    await grants.getByLabel('Buyer (buyer)').check();
    await grants.getByRole('button', { name: 'Grant roles' }).click();
    await grants.getByRole('form', { name: 'Roles of Shop' }).waitFor();
    const listed = await admin('GET', `/management/v1/users/${grace}/grants`);
    assert.deepEqual(
      listed.body.result.map((g: { roleKeys: string[] }) => g.roleKeys),
      [['buyer']],
    );
    await audit('user-grants');
  });

  it('rotates the signing keys', async () => {
    await nav('Signing keys').click();
    await page.getByRole('heading', { level: 1, name: 'Signing keys' }).waitFor();
    const table = page.getByRole('table', { name: 'Signing keys' });
    await table.locator('tbody tr').first().waitFor();
    const before = await table.locator('tbody tr td:first-child').allInnerTexts();
    await page.getByRole('button', { name: 'Rotate keys' }).click();
    // It asks first; Cancel leaves the keys as they are.
    const ask = page.getByRole('dialog', { name: 'Please confirm' });
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.deepEqual(await table.locator('tbody tr td:first-child').allInnerTexts(), before);
    await page.getByRole('button', { name: 'Rotate keys' }).click();
    await audit('signing-keys-confirm');
    await ask.getByRole('button', { name: 'Rotate keys' }).click();
    await page.getByText('Keys rotated.').waitFor();
    // A locator waits without evaluating strings in the page, which its CSP forbids.
    await table.locator('tbody tr').nth(before.length).waitFor();
    const afterRotation = await table.locator('tbody tr td:first-child').allInnerTexts();
    assert.ok(
      afterRotation.some((kid) => !before.includes(kid)),
      'a new key is listed',
    );
    await audit('signing-keys');
  });

  it('pages through the event log and filters it by type', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await admin('POST', '/management/v1/projects', { body: { name: `Project ${i}` } })).status, 200);
    await nav('Events').click();
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    const total = Number((await admin('POST', '/admin/v1/events/_search', { body: { query: { limit: 1 } } })).body.details.totalResult);
    assert.ok(total > 50, `${total} events: more than two pages`);
    await page.getByText(`1–25 of ${total}`).waitFor();
    const table = page.getByRole('table', { name: /Events/ });
    const first = await table.locator('tbody tr td:first-child').allInnerTexts();
    assert.equal(first.length, 25);
    assert.deepEqual(
      first,
      [...first].sort((a, b) => Number(b) - Number(a)),
      'newest first',
    );
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(`26–50 of ${total}`).waitFor();
    const second = await table.locator('tbody tr td:first-child').allInnerTexts();
    assert.ok(Number(second[0]) < Number(first.at(-1)), 'the next page goes on where the first ended');
    await audit('events');
    await page.getByLabel('Event types (comma separated)').fill('user.human.added');
    await page.getByRole('button', { name: 'Filter' }).click();
    await rowsAre(table, 2);
    assert.deepEqual(await table.locator('tbody tr td:nth-child(3)').allInnerTexts(), ['user.human.added', 'user.human.added']);
  });

  it('shows and saves the policies', async () => {
    await nav('Policies').click();
    await page.getByRole('heading', { level: 1, name: 'Policies' }).waitFor();
    const lockout = page.getByRole('region', { name: 'Lockout policy' });
    const orgForm = lockout.getByRole('form', { name: 'This organization: Lockout policy' });
    await orgForm.getByLabel('Failed password attempts before locking (0: never)').fill('3');
    await orgForm.getByRole('button', { name: 'Save' }).click();
    await lockout.getByText('This organization has its own policy.').waitFor();
    assert.equal((await admin('GET', '/management/v1/policies/lockout')).body.policy.maxPasswordAttempts, 3);
    await audit('policies');
  });

  it('is usable with the keyboard: skip link first, then the navigation, forms opened and sent with keys', async () => {
    await page.goto(`${consoleUrl}projects`);
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await focused('textContent'), 'Skip to content');
    await page.keyboard.press('Enter');
    await focusMoves('id', 'main');
    assert.equal(await focused('id'), 'main');
    // From the main region, Tab reaches the New project button; Enter opens the form, typing and Enter send it.
    await page.keyboard.press('Tab');
    assert.equal(await focused('textContent'), 'New project');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    assert.equal(await focused('name'), 'name');
    await page.keyboard.type('Keyboard project');
    await page.keyboard.press('Enter');
    await page.getByText('Created. Keyboard project').waitFor();
    // Shift+Tab walks back into the navigation, whose links follow with Enter.
    await page.getByRole('link', { name: 'Events' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    await focusMoves('tagName', 'H1');
    assert.equal(await focused('tagName'), 'H1', 'the new page’s heading takes the focus');
  });

  it('speaks German to a German browser', async () => {
    const german = await scene.browser.newContext({ locale: 'de-DE' });
    try {
      const p = await german.newPage();
      watch(p, problems);
      await p.goto(consoleUrl);
      await signIn(p, ADMIN);
      await p.getByRole('heading', { level: 1, name: 'Benutzer' }).waitFor({ timeout: 10_000 });
      assert.equal(await p.evaluate<string>('document.documentElement.lang'), 'de');
      const links = await p.getByRole('navigation', { name: 'Hauptmenü' }).getByRole('link').allInnerTexts();
      assert.deepEqual(links, [
        'Benutzer',
        'Projekte',
        'Anwendungen',
        'Mitglieder',
        'Richtlinien',
        'Organisation',
        'Nachrichtentexte',
        'Identitätsanbieter',
        'SCIM-Bereitstellung',
        'Signaturschlüssel',
        'Ereignisse',
        'E-Mail und SMS',
        'Aktionen',
      ]);
      await p.getByRole('button', { name: 'Neuer Benutzer' }).click();
      await p.getByLabel('Loginname', { exact: true }).waitFor();
      await shoot(p, 'users-de');
    } finally {
      await german.close();
    }
  });

  it("shows an org owner their own org only, without the instance's pages", async () => {
    const setup = await admin('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'ACME', domain: 'acme.example.test' },
        human: {
          userName: 'olive',
          profile: { firstName: 'Olive', lastName: 'Owner' },
          email: { email: 'olive@acme.example.test' },
          password: 'Olive-Passw0rd',
        },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    // The instance owner starts in their own org and switches to ACME.
    await page.goto(`${consoleUrl}users`);
    const orgSwitch = page.getByLabel('Organization');
    await page.getByText('1–20 of 28').waitFor();
    assert.deepEqual(await orgSwitch.locator('option').allInnerTexts(), ['ACME', 'Default']);
    assert.equal(await orgSwitch.locator('option:checked').innerText(), 'Default');
    await orgSwitch.selectOption({ label: 'ACME' });
    await rowsAre(page.getByRole('table', { name: 'Users' }), 1);
    assert.deepEqual(await page.getByRole('table', { name: 'Users' }).locator('tbody a').allInnerTexts(), ['olive@acme.example.test']);

    const owner = await scene.browser.newContext({ locale: 'en-US' });
    try {
      const p = await owner.newPage();
      watch(p, problems);
      await p.goto(consoleUrl);
      await signIn(p, { loginName: 'olive@acme.example.test', password: 'Olive-Passw0rd' });
      await p.getByRole('heading', { level: 1, name: 'Users' }).waitFor({ timeout: 10_000 });
      await rowsAre(p.getByRole('table', { name: 'Users' }), 1);
      assert.deepEqual(await p.getByRole('table', { name: 'Users' }).locator('tbody a').allInnerTexts(), ['olive@acme.example.test']);
      assert.deepEqual(await p.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts(), [
        'Users',
        'Projects',
        'Apps',
        'Members',
        'Policies',
        'Organization',
        'Message texts',
        'Identity providers',
        'SCIM provisioning',
      ]);
      assert.equal(await p.getByLabel('Organization').count(), 0, 'no org switch');
      // The org's own identity providers are the owner's to manage; the instance's section is not shown.
      await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Identity providers' }).click();
      await p.getByRole('table', { name: 'On the login page of this organization' }).or(p.getByText('The login page shows no provider yet.')).waitFor();
      await p.getByRole('heading', { level: 2, name: 'Providers of this organization' }).waitFor();
      assert.equal(await p.getByRole('heading', { name: 'Providers of the instance' }).count(), 0);
    } finally {
      await owner.close();
    }
  });

  it('showed every page without a script error or CSP refusal', () => {
    assert.deepEqual([...problems, ...scene.problems], []);
    assert.ok(audited.length >= 10, `audited ${audited.join(', ')}`);
  });
});
