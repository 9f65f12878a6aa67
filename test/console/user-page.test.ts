import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { needsChromium } from '../support/browser.ts';
import { assertAccessible, shoot, startConsoleScene, type ConsoleScene } from '../support/console.ts';
import { putPendingOtp } from '../../src/storage/otp.ts';

// The user page (docs/api/users.md as the console shows it): profile, login
// name, phone, state changes behind a confirmation (Cancel changes
// nothing), second factors and passkeys listed and removed, sessions
// listed and ended, grants by role checkboxes changed and removed, a
// machine user's tokens revoked.

describe('the user page of the console', { skip: needsChromium }, () => {
  let scene: ConsoleScene;
  let context: BrowserContext;
  let page: Page;
  let ada: string;
  let shop: string;
  const adaLogin = { loginName: 'ada@default.example.test', password: 'Ada-Lovelace-Passw0rd' };

  const user = (id: string) => scene.admin('GET', `/management/v1/users/${id}`).then((r) => r.body.user);
  const dialog = () => page.getByRole('dialog', { name: 'Please confirm' });

  before(async () => {
    scene = await startConsoleScene();
    const created = await scene.admin('POST', '/management/v1/users/human', {
      body: { userName: 'ada', profile: { firstName: 'Ada', lastName: 'Byron' }, email: { email: 'ada@default.example.test' }, password: adaLogin.password },
    });
    assert.equal(created.status, 200, created.text);
    ada = created.body.userId;
    shop = (await scene.admin('POST', '/management/v1/projects', { body: { name: 'Shop' } })).body.id;
    for (const [roleKey, displayName] of [
      ['buyer', 'Buyer'],
      ['seller', 'Seller'],
    ])
      assert.equal((await scene.admin('POST', `/management/v1/projects/${shop}/roles`, { body: { roleKey, displayName } })).status, 200);
    ({ context, page } = await scene.signedInPage());
  });
  after(() => scene?.stop());

  async function openUser(id: string): Promise<void> {
    await page.goto(`${scene.consoleUrl}users/${id}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
  }

  it('changes the profile, the login name and the phone, naming a bad phone number beside its field', async () => {
    await openUser(ada);
    const profile = page.getByRole('form', { name: 'Profile' });
    await profile.getByLabel('First name').fill('Augusta Ada');
    await profile.getByLabel('Nickname').fill('Ada');
    await profile.getByLabel('Gender').selectOption({ label: 'Female' });
    await profile.getByRole('button', { name: 'Save' }).click();
    await profile.getByText('Saved.').waitFor();
    const saved = await user(ada);
    assert.equal(saved.human.profile.firstName, 'Augusta Ada');
    assert.equal(saved.human.profile.gender, 'GENDER_FEMALE');

    const phone = page.getByRole('form', { name: 'Phone' });
    await phone.getByLabel('Phone').fill('call me');
    await phone.getByRole('button', { name: 'Save' }).click();
    await phone.getByText(/must be a global phone number/).waitFor();
    assert.equal(await phone.getByLabel('Phone').getAttribute('aria-invalid'), 'true');
    assert.equal((await user(ada)).human.phone.phone, '', 'nothing saved');
    await phone.getByLabel('Phone').fill('+41791234567');
    await phone.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('region', { name: 'Email and phone' }).getByText('Phone: +41791234567 (not verified)').waitFor();

    const name = page.getByRole('form', { name: 'Change login name' });
    await name.getByLabel('User name').fill('ada.lovelace');
    await name.getByRole('button', { name: 'Change login name' }).click();
    await page.getByRole('heading', { level: 1, name: 'ada.lovelace@default.example.test' }).waitFor();
    adaLogin.loginName = 'ada.lovelace@default.example.test';
    await assertAccessible(page, 'user page');
    await shoot(page, 'user-page');
  });

  it('asks before locking or deactivating: Cancel leaves the user as it was', async () => {
    await openUser(ada);
    const state = page.getByRole('region', { name: 'Lock state' });
    await state.getByRole('button', { name: 'Lock' }).click();
    await assertAccessible(page, 'user page, confirmation');
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
    await state.getByRole('button', { name: 'Deactivate' }).click();
    await dialog().waitFor();
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.equal((await user(ada)).state, 'USER_STATE_ACTIVE', 'neither Cancel nor Escape changed anything');

    await state.getByRole('button', { name: 'Lock' }).click();
    await dialog().getByRole('button', { name: 'Lock' }).click();
    await state.getByText('State: Locked').waitFor();
    assert.equal((await user(ada)).state, 'USER_STATE_LOCKED');
    await state.getByRole('button', { name: 'Unlock' }).click();
    await state.getByText('The user is unlocked.').waitFor();
    await state.getByRole('button', { name: 'Deactivate' }).click();
    await dialog().getByRole('button', { name: 'Deactivate' }).click();
    await state.getByText('State: Inactive').waitFor();
    assert.equal((await user(ada)).state, 'USER_STATE_INACTIVE');
    await state.getByRole('button', { name: 'Reactivate' }).click();
    await state.getByText('State: Active').waitFor();
    assert.equal((await user(ada)).state, 'USER_STATE_ACTIVE');
  });

  it('lists second factors and passkeys and removes them after a confirmation', async () => {
    await scene.server.running.db.query(
      'INSERT INTO user_passkeys (id, user_id, credential_id, public_key, counter, transports, name) VALUES ($1, $2, $3, $4, 0, $5, $6)',
      ['pk-console-1', ada, 'credential-console-1', Buffer.from([1, 2, 3]), [], 'YubiKey'],
    );
    assert.equal(await putPendingOtp(scene.server.running.db, ada, Buffer.from('sealed')), true);
    await openUser(ada);
    // An app whose set-up is not finished is listed as such, and has nothing to remove yet.
    const factors = page.getByRole('region', { name: 'Second factors and passkeys' });
    await factors.getByText('Authenticator app (one-time codes) (set-up not finished)').waitFor();
    assert.equal(await factors.getByRole('listitem').filter({ hasText: 'Authenticator app' }).getByRole('button').count(), 0);
    await scene.server.running.db.query('UPDATE user_otp SET ready = true WHERE user_id = $1', [ada]);
    await openUser(ada);
    await factors.getByText('Passkey YubiKey').waitFor();
    await factors.getByText('Authenticator app (one-time codes)', { exact: true }).waitFor();
    const passkeyRow = factors.getByRole('listitem').filter({ hasText: 'Passkey YubiKey' });
    await passkeyRow.getByRole('button', { name: 'Remove' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await scene.admin('GET', `/management/v1/users/${ada}/auth_factors`)).body.result.length, 2, 'Cancel kept the passkey');
    await passkeyRow.getByRole('button', { name: 'Remove' }).click();
    await dialog().getByRole('button', { name: 'Remove' }).click();
    await factors.getByText('Passkey YubiKey').waitFor({ state: 'detached' });
    await factors.getByRole('listitem').getByRole('button', { name: 'Remove' }).click();
    await dialog().getByRole('button', { name: 'Remove' }).click();
    await factors.getByText('No second factor or passkey set up.').waitFor();
    assert.deepEqual((await scene.admin('GET', `/management/v1/users/${ada}/auth_factors`)).body.result, []);
  });

  it("lists the user's sessions and ends one", async () => {
    // Ada signs in (to the console's own login) in a browser of her own.
    const adas = await scene.browser.newContext({ locale: 'en-US' });
    try {
      const p = await adas.newPage();
      await p.goto(scene.consoleUrl);
      await p.fill('#loginName', adaLogin.loginName);
      await p.click('button[type=submit]');
      await p.fill('#password', adaLogin.password);
      await p.click('button[type=submit]');
      await p.waitForURL((url) => url.pathname.startsWith('/ui/console/'));
    } finally {
      await adas.close();
    }
    await openUser(ada);
    const sessions = page.getByRole('region', { name: 'Sessions' });
    const table = sessions.getByRole('table', { name: 'Sessions' });
    await table.locator('tbody tr').first().waitFor();
    assert.match(await table.locator('tbody tr').first().innerText(), /pwd/);
    await table.getByRole('button', { name: 'End session' }).click();
    await dialog().getByRole('button', { name: 'End session' }).click();
    await sessions.getByText('Not signed in anywhere.').waitFor();
    assert.deepEqual((await scene.admin('GET', `/management/v1/users/${ada}/sessions`)).body.result, []);
  });

  it("grants a project's roles by ticking them, changes them, and removes the grant after a confirmation", async () => {
    await openUser(ada);
    const grants = page.getByRole('region', { name: 'User grants' });
    const add = grants.getByRole('form', { name: 'Grant roles' });
    await add.getByLabel('Project').selectOption({ label: 'Shop' });
    await add.getByLabel('Buyer (buyer)').check();
    await add.getByRole('button', { name: 'Grant roles' }).click();
    const granted = grants.getByRole('form', { name: 'Roles of Shop' });
    await granted.waitFor();
    assert.equal(await granted.getByLabel('Buyer (buyer)').isChecked(), true);
    await granted.getByLabel('Seller (seller)').check();
    await granted.getByRole('button', { name: 'Change roles' }).click();
    await granted.getByText('Saved.').waitFor();
    const listed = async () => (await scene.admin('GET', `/management/v1/users/${ada}/grants`)).body.result;
    assert.deepEqual((await listed())[0].roleKeys.sort(), ['buyer', 'seller']);
    await assertAccessible(page, 'user grants');
    await granted.getByRole('button', { name: 'Remove grant' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await listed()).length, 1, 'Cancel kept the grant');
    await granted.getByRole('button', { name: 'Remove grant' }).click();
    await dialog().getByRole('button', { name: 'Remove grant' }).click();
    await grants.getByText('No roles granted yet.').waitFor();
    assert.deepEqual(await listed(), []);
  });

  it("lists a machine user's tokens and revokes one", async () => {
    const robot = (await scene.admin('POST', '/management/v1/users/machine', { body: { userName: 'robot', name: 'Robot' } })).body.userId;
    await openUser(robot);
    const pats = page.getByRole('region', { name: 'Personal access tokens' });
    await pats.getByText('None yet.').waitFor();
    await pats.getByRole('button', { name: 'New token' }).click();
    await page.getByRole('region', { name: 'Token', exact: true }).waitFor();
    const [pat] = (await scene.admin('GET', `/management/v1/users/${robot}/pats`)).body.result;
    await pats.getByText(pat.id).waitFor();
    await pats.getByRole('button', { name: 'Revoke' }).click();
    await dialog().getByRole('button', { name: 'Revoke' }).click();
    await pats.getByText('None yet.').waitFor();
    assert.deepEqual((await scene.admin('GET', `/management/v1/users/${robot}/pats`)).body.result, []);
    await assertAccessible(page, 'machine user');
  });

  it('showed every page without a script error or CSP refusal', async () => {
    await context.close();
    assert.deepEqual(scene.problems, []);
  });
});
