import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { needsChromium } from '../support/browser.ts';
import { shoot, startConsoleScene, type ConsoleScene } from '../support/console.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { eventually } from '../support/tokens.ts';
import { beginWrite } from '../../src/storage/event-log.ts';
import { insertLink } from '../../src/storage/idp-links.ts';

// The console's mail and SMS pages (docs/api/notifications.md,
// docs/api/sms.md), message texts (docs/api/message-texts.md), the password
// complexity policy, and on the user page the mails an admin sends, the
// email change, metadata and IdP links: each through Chromium against the
// real API, the test mail through a real SMTP server, removals behind a
// confirmation (Cancel changes nothing), an empty number refused before
// anything is sent, and a bad field named in German.

describe('the mail, SMS and message pages of the console', { skip: needsChromium }, () => {
  let scene: ConsoleScene;
  let sink: SmtpSink;
  let context: BrowserContext;
  let page: Page;
  let orgId: string;

  const dialog = () => page.getByRole('dialog', { name: 'Please confirm' });
  const get = async (path: string) => (await scene.admin('GET', path)).body;

  before(async () => {
    [scene, sink] = await Promise.all([startConsoleScene(), startSmtpSink()]);
    ({ context, page } = await scene.signedInPage());
    orgId = new URL(page.url()).pathname.split('/')[4]!;
  });
  after(async () => {
    await scene?.stop();
    await sink?.stop();
  });

  async function open(path: string): Promise<void> {
    await page.goto(`${scene.consoleUrl}orgs/${orgId}/${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    assert.ok(await eventually(async () => (await page.getByText('Loading…').count()) === 0, 10_000, 50), `${path} finished loading`);
  }

  it('sets the SMTP server (an empty port refused), sends a test mail, shows the server’s refusal, and removes it after a confirmation', async () => {
    await open('notifications');
    const smtp = page.getByRole('region', { name: 'SMTP server' });
    await smtp.getByText('No SMTP server is set here').waitFor();
    const form = smtp.getByRole('form', { name: 'SMTP server' });
    await form.getByLabel('Sender address').fill('id@example.test');
    await form.getByLabel('Sender name').fill('Example ID');
    await form.getByLabel('Host').fill('127.0.0.1');
    await form.getByLabel('Port').fill('');
    await form.getByLabel('Encryption').selectOption({ label: 'None (only on a network you trust)' });
    await form.getByLabel('User (empty: no sign-in)').fill('mailer');
    await form.getByLabel('Password').fill('Sink-Passw0rd');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Please fill this in.').waitFor();
    assert.equal(await form.getByLabel('Port').getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await get('/admin/v1/smtp'), {}, 'nothing sent');

    await form.getByLabel('Port').fill(String(sink.port));
    await form.getByRole('button', { name: 'Save' }).click();
    await smtp.getByText('Saved.').waitFor();
    await smtp.getByText('Mails go through this server.').waitFor();
    const { details: _details, ...saved } = await get('/admin/v1/smtp');
    assert.deepEqual(saved, {
      senderAddress: 'id@example.test',
      senderName: 'Example ID',
      host: '127.0.0.1',
      port: sink.port,
      user: 'mailer',
      tls: 'TLS_MODE_NONE',
      hasPassword: true,
    });
    // The password is never read back: the field is empty and says one is set.
    assert.equal(await form.getByLabel('Password').inputValue(), '');
    await form.getByText('A password is set').waitFor();

    const test = smtp.getByRole('form', { name: 'Send a test mail' });
    await test.getByLabel('Receiver address').fill('ops@example.test');
    await test.getByRole('button', { name: 'Send a test mail' }).click();
    await test.getByText('The server accepted the test mail.').waitFor();
    // The sink parses a mail after it has answered the server: wait for it.
    const arrived = await eventually(async () => sink.received.some((mail) => mail.subject === 'Portcullis test mail'), 5000, 20);
    assert.ok(arrived, 'the test mail reached the SMTP server');
    assert.ok(sink.logins.includes('mailer:Sink-Passw0rd'));

    sink.behaviour = () => ({ refuse: '550 5.1.1 mailbox unknown' });
    await test.getByRole('button', { name: 'Send a test mail' }).click();
    await test.getByText(/mailbox unknown/).waitFor();
    sink.behaviour = () => 'accept';
    await shoot(page, 'notifications-flow');

    await smtp.getByRole('button', { name: 'Remove the SMTP server' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
    assert.equal((await get('/admin/v1/smtp')).host, '127.0.0.1', 'Cancel kept the server');
    await smtp.getByRole('button', { name: 'Remove the SMTP server' }).click();
    await dialog().getByRole('button', { name: 'Remove the SMTP server' }).click();
    await smtp.getByText('No SMTP server is set here').waitFor();
    assert.deepEqual(await get('/admin/v1/smtp'), {});
  });

  it('sets the SMS relay, showing its signing key once, and removes it after a confirmation', async () => {
    await open('notifications');
    const sms = page.getByRole('region', { name: 'SMS relay' });
    const form = sms.getByRole('form', { name: 'SMS relay' });
    await form.getByLabel('Endpoint (https URL)').fill('sms.example.test/send');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('must be an absolute URL').waitFor();
    await form.getByLabel('Endpoint (https URL)').fill('https://sms.example.test/send');
    await form.getByRole('button', { name: 'Save' }).click();
    const key = sms.getByRole('region', { name: 'Signing key of the relay' });
    assert.match(await key.locator('pre').innerText(), /^[A-Za-z0-9_-]{43}$/);
    assert.equal((await get('/admin/v1/sms/http')).endpoint, 'https://sms.example.test/send');

    // Shown once: the page opened again has the endpoint and no key.
    await open('notifications');
    assert.equal(await form.getByLabel('Endpoint (https URL)').inputValue(), 'https://sms.example.test/send');
    assert.equal(await key.count(), 0);
    await sms.getByRole('button', { name: 'Remove the SMS relay' }).click();
    await dialog().getByRole('button', { name: 'Remove the SMS relay' }).click();
    await sms.getByText('No SMS relay is set').waitFor();
    assert.deepEqual(await get('/admin/v1/sms/http'), {});
  });

  it('sets the password complexity in words, refusing an empty minimum length rather than saving 0', async () => {
    await open('policies');
    const section = page.getByRole('region', { name: 'Password complexity' });
    const form = section.getByRole('form', { name: 'This organization: Password complexity' });
    await form.getByLabel('Minimum length in characters').fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Please fill this in.').waitFor();
    assert.equal((await get('/management/v1/policies/password_complexity')).isDefault, true, 'nothing saved');
    await form.getByLabel('Minimum length in characters').fill('12');
    await form.getByLabel('At least one digit').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await section.getByText('This organization has its own policy.').waitFor();
    const { policy } = await get('/management/v1/policies/password_complexity');
    assert.equal(policy.minLength, 12);
    assert.equal(policy.hasNumber, true);
    await section.getByRole('button', { name: 'Use the instance default' }).click();
    await dialog().getByRole('button', { name: 'Use the instance default' }).click();
    await section.getByText('This organization follows the instance default.').waitFor();
  });

  it("words a message in the org's own texts, names an unknown placeholder, and resets to the built-in texts", async () => {
    await open('message-texts');
    await page.getByText('Placeholders: {{.Code}}, {{.URL}}, {{.UserName}}, {{.FirstName}}, {{.OrgName}}').waitFor();
    await page.getByLabel('Message', { exact: true }).selectOption({ label: 'Password reset' });
    await page.getByLabel('Language').selectOption({ label: 'German' });
    const texts = page.getByRole('region', { name: 'Password reset (German)' });
    await texts.getByText('This organization uses the built-in texts.').waitFor();
    const form = texts.getByRole('form', { name: 'Message texts' });
    const builtIn = await form.getByLabel('Subject').inputValue();
    assert.ok(builtIn, 'the built-in subject is shown');
    await form.getByLabel('Subject').fill('Passwort für {{.Nope}}');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText(/unknown placeholder \{\{\.Nope\}\}/).waitFor();
    await form.getByLabel('Subject').fill('Neues Passwort für {{.OrgName}}');
    await form.getByRole('button', { name: 'Save' }).click();
    await texts.getByText('This organization has its own texts.').waitFor();
    const path = '/management/v1/text/message/PasswordReset/de';
    assert.equal((await get(path)).customText.subject, 'Neues Passwort für {{.OrgName}}');
    await shoot(page, 'message-texts-flow');
    await texts.getByRole('button', { name: 'Use the built-in texts' }).click();
    await dialog().getByRole('button', { name: 'Use the built-in texts' }).click();
    await texts.getByText('This organization uses the built-in texts.').waitFor();
    assert.equal((await get(path)).isDefault, true);
    assert.equal(await form.getByLabel('Subject').inputValue(), builtIn);
  });

  it('sends a user verification, reset and invitation mails, and changes the email as verified', async () => {
    const created = await scene.admin('POST', '/management/v1/users/human', {
      body: { userName: 'grace', profile: { firstName: 'Grace', lastName: 'Hopper' }, email: { email: 'grace@example.test' } },
    });
    assert.equal(created.status, 200, created.text);
    const grace = created.body.userId;
    const mails = async () =>
      (
        await scene.server.running.db.query<{ message_type: string }>('SELECT message_type FROM notification_outbox WHERE user_id = $1 ORDER BY id', [grace])
      ).rows.map((r) => r.message_type);
    assert.deepEqual(await mails(), ['InitCode'], 'invited on creation');
    await open(`users/${grace}`);
    const contact = page.getByRole('region', { name: 'Email and phone' });
    await contact.getByText('Email: grace@example.test (not verified)').waitFor();
    for (const [button, done] of [
      ['Resend invitation', 'An invitation is on its way.'],
      ['Resend verification', 'A verification mail is on its way.'],
      ['Send password reset', 'A password reset mail is on its way.'],
    ] as const) {
      await contact.getByRole('button', { name: button }).click();
      await contact.getByText(done).waitFor();
    }
    assert.deepEqual(await mails(), ['InitCode', 'InitCode', 'VerifyEmail', 'PasswordReset']);

    const change = contact.getByRole('form', { name: 'Change email' });
    await change.getByLabel('New email').fill('grace.hopper@example.test');
    await change.getByLabel('The address is verified (no verification mail)').check();
    await change.getByRole('button', { name: 'Change email' }).click();
    await contact.getByText('Email: grace.hopper@example.test (verified)').waitFor();
    assert.deepEqual((await get(`/management/v1/users/${grace}`)).user.human.email, { email: 'grace.hopper@example.test', isEmailVerified: true });
    // A verified address has nothing to verify.
    assert.equal(await contact.getByRole('button', { name: 'Resend verification' }).count(), 0);
    assert.equal((await mails()).length, 4, 'no verification mail for a verified address');

    // The admin has a password (human.passwordSet): no invitation is offered, and the rest is.
    const query = { userNameQuery: { userName: 'admin', method: 'TEXT_QUERY_METHOD_EQUALS' } };
    const [admin] = (await scene.admin('POST', '/management/v1/users/_search', { body: { queries: [query] } })).body.result;
    assert.equal(admin.human.passwordSet, true);
    await open(`users/${admin.id}`);
    await contact.getByRole('button', { name: 'Send password reset' }).waitFor();
    assert.equal(await contact.getByRole('button', { name: 'Resend invitation' }).count(), 0);
    assert.equal(await contact.getByText('For a user who has not set a password yet.').count(), 0);
    // Grace, still without a password, is offered the invitation again.
    assert.equal((await get(`/management/v1/users/${grace}`)).user.human.passwordSet, false);
    await open(`users/${grace}`);
    await contact.getByRole('button', { name: 'Resend invitation' }).waitFor();
  });

  it("sets a user's metadata as text, shows bytes that are not text, and removes a key after a confirmation", async () => {
    const created = await scene.admin('POST', '/management/v1/users/machine', { body: { userName: 'meta-bot', name: 'Meta bot' } });
    const bot = created.body.userId;
    const binary = await scene.admin('POST', `/management/v1/users/${bot}/metadata/blob`, {
      body: { value: Buffer.from([0xff, 0xfe, 0x00]).toString('base64') },
    });
    assert.equal(binary.status, 200, binary.text);
    await open(`users/${bot}`);
    const metadata = page.getByRole('region', { name: 'Metadata' });
    const table = metadata.getByRole('table', { name: 'Metadata' });
    await table.getByText('3 bytes (not text)').waitFor();
    const form = metadata.getByRole('form', { name: 'Set key' });
    await form.getByLabel('Key').fill('_hidden');
    await form.getByLabel('Value').fill('x');
    await form.getByRole('button', { name: 'Set key' }).click();
    await form.getByText(/must be 1–200 letters/).waitFor();
    await form.getByLabel('Key').fill('department');
    await form.getByLabel('Value').fill('Raketenbau ✓');
    await form.getByRole('button', { name: 'Set key' }).click();
    await table.getByText('Raketenbau ✓').waitFor();
    const stored = (await get(`/management/v1/users/${bot}/metadata/department`)).metadata.value;
    assert.equal(Buffer.from(stored, 'base64').toString('utf8'), 'Raketenbau ✓');

    const row = table.locator('tbody tr').filter({ hasText: 'department' });
    await row.getByRole('button', { name: 'Remove' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await scene.admin('GET', `/management/v1/users/${bot}/metadata/department`)).status, 200, 'Cancel kept the key');
    await row.getByRole('button', { name: 'Remove' }).click();
    await dialog().getByRole('button', { name: 'Remove' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await scene.admin('GET', `/management/v1/users/${bot}/metadata/department`)).status, 404);
  });

  it("lists a user's IdP links and removes one after a confirmation", async () => {
    const idp = await scene.admin('POST', '/admin/v1/idps/github', { body: { name: 'GitHub', clientId: 'gh-client', clientSecret: 'gh-secret' } });
    assert.equal(idp.status, 200, idp.text);
    const created = await scene.admin('POST', '/management/v1/users/human', {
      body: { userName: 'linus', profile: { firstName: 'Linus', lastName: 'T' }, email: { email: 'linus@example.test', isEmailVerified: true } },
    });
    const linus = created.body.userId;
    // A link is made by a sign-in at the provider (test/idps); here it is written as that sign-in writes it.
    await scene.server.running.db.transaction(async (tx) => {
      const write = await beginWrite(tx, null);
      assert.ok(await insertLink(write, { userId: linus, idpId: idp.body.id, providedUserId: '583231', providedUserName: 'octocat' }, orgId));
    });
    await open(`users/${linus}`);
    const links = page.getByRole('region', { name: 'Identity provider links' });
    const row = links.locator('tbody tr').filter({ hasText: 'octocat' });
    await row.getByText('GitHub').waitFor();
    await row.getByRole('button', { name: 'Remove' }).click();
    await dialog().getByText('Remove the link to GitHub?').waitFor();
    await dialog().getByRole('button', { name: 'Remove' }).click();
    await links.getByText('Not linked to any identity provider.').waitFor();
    assert.equal((await scene.admin('POST', `/management/v1/users/${linus}/links/_search`, { body: {} })).body.result.length, 0);
    await shoot(page, 'user-notify-flow');
  });

  it('names a bad field in German', async () => {
    // The console speaks the browser's language, read when it loads: this tab now says German first (the last test of the tab).
    await page.addInitScript(() => Object.defineProperty(navigator, 'languages', { get: () => ['de-DE', 'de'] }));
    await open('notifications');
    const form = page.getByRole('form', { name: 'SMTP-Server' });
    await form.getByLabel('Absenderadresse').fill('kein-absender');
    await form.getByLabel('Rechnername').fill('127.0.0.1');
    await form.getByRole('button', { name: 'Speichern' }).click();
    await form.getByText('muss eine E-Mail-Adresse sein').waitFor();
    await form.getByText('Bitte prüfen Sie die markierten Felder.').waitFor();
    assert.deepEqual(await get('/admin/v1/smtp'), {});
  });

  it('showed every page without a script error or CSP refusal', async () => {
    await context.close();
    assert.deepEqual(scene.problems, []);
  });
});
