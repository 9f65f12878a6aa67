import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { MAIL_TEXTS } from '../../src/pages/mail-texts.ts';
import { enqueue, message } from './support.ts';

// An org's own message texts (docs/api/message-texts.md): the API with its
// bad inputs, and the texts in the mails the org's users get, through a real
// SMTP server.

const PATH = '/management/v1/text/message';
const HOSTILE = '<script>alert(1)</script>';

describe('message texts', () => {
  let server: TestServer;
  let sink: SmtpSink;
  let admin: Api;
  let acmeId: string;
  let otherId: string;
  let owner: Api;
  let manager: Api;

  async function machineWithRole(orgId: string, userName: string, roles: string[]): Promise<Api> {
    const user = await admin('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId });
    assert.equal(user.status, 200, user.text);
    assert.equal((await admin('POST', '/management/v1/orgs/me/members', { body: { userId: user.body.userId, roles }, orgId })).status, 200);
    const pat = await admin('POST', `/management/v1/users/${user.body.userId}/pats`, { orgId });
    return apiClient(server.url, pat.body.token, { strictJson: true, orgId });
  }

  async function setupOrg(name: string, domain: string): Promise<string> {
    const setup = await admin('POST', '/admin/v1/orgs/_setup', {
      body: { org: { name, domain }, human: { userName: 'first', profile: { firstName: 'F', lastName: 'L' }, email: { email: `first@${domain}` } } },
    });
    assert.equal(setup.status, 200, setup.text);
    return setup.body.orgId;
  }

  async function eventsOf(type: string): Promise<Array<{ aggregate_id: string; payload: Record<string, unknown> }>> {
    const { rows } = await server.running.db.query<{ aggregate_id: string; payload: Record<string, unknown> }>(
      'SELECT aggregate_id, payload FROM events WHERE event_type = $1 ORDER BY position',
      [type],
    );
    return rows;
  }

  before(async () => {
    sink = await startSmtpSink();
    server = await testServer({ env: { SMTP_URL: sink.url(), SMTP_FROM: 'Portcullis <id@example.test>' } });
    admin = server.api;
    acmeId = await setupOrg('ACME', 'acme.example.test');
    otherId = await setupOrg('Other', 'other.example.test');
    owner = await machineWithRole(acmeId, 'acme-owner', ['ORG_OWNER']);
    manager = await machineWithRole(acmeId, 'acme-manager', ['ORG_USER_MANAGER']);
  });
  after(async () => {
    await server?.stop();
    await sink?.stop();
  });

  it('GET answers the built-in texts while the org has none of its own', async () => {
    const got = await owner('GET', `${PATH}/PasswordReset/de`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.isDefault, true);
    const { details, ...texts } = got.body.customText;
    assert.equal(texts.subject, MAIL_TEXTS.de.PasswordReset.subject);
    assert.equal(texts.text, MAIL_TEXTS.de.PasswordReset.text);
    assert.deepEqual(Object.keys(texts).sort(), ['buttonText', 'footerText', 'greeting', 'preHeader', 'subject', 'text', 'title']);
    assertDetails(details, acmeId);
  });

  it('PUT sets the org texts, GET shows them with the built-in ones for fields left out, DELETE returns to the built-in ones', async () => {
    const put = await owner('PUT', `${PATH}/VerifyPhone/en`, { body: { text: 'ACME code {{.Code}}', footerText: 'ACME Inc.' } });
    assert.equal(put.status, 200, put.text);
    assertDetails(put.body.details, acmeId);
    const got = await owner('GET', `${PATH}/VerifyPhone/en`);
    assert.equal(got.body.isDefault, false);
    assert.equal(got.body.customText.text, 'ACME code {{.Code}}');
    assert.equal(got.body.customText.footerText, 'ACME Inc.');
    assert.equal(got.body.customText.subject, MAIL_TEXTS.en.VerifyPhone.subject, 'a field left out keeps the built-in text');
    assert.equal(got.body.customText.details.sequence, put.body.details.sequence);
    assert.deepEqual((await eventsOf('org.text.message.set')).at(-1)?.payload, {
      messageType: 'VerifyPhone',
      language: 'en',
      text: 'ACME code {{.Code}}',
      footerText: 'ACME Inc.',
    });
    // Another org and another language are untouched.
    assert.equal((await admin('GET', `${PATH}/VerifyPhone/en`, { orgId: otherId })).body.isDefault, true);
    assert.equal((await owner('GET', `${PATH}/VerifyPhone/de`)).body.isDefault, true);

    const removed = await owner('DELETE', `${PATH}/VerifyPhone/en`);
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await eventsOf('org.text.message.removed')).length, 1);
    assert.equal((await owner('GET', `${PATH}/VerifyPhone/en`)).body.isDefault, true);
    assertError(await owner('DELETE', `${PATH}/VerifyPhone/en`), 404);
  });

  it('an unknown message type or language is 404, whatever the body', async () => {
    for (const path of [`${PATH}/Welcome/en`, `${PATH}/PasswordReset/fr`, `${PATH}/passwordreset/en`, `${PATH}/PasswordReset/EN`, `${PATH}/Init%00Code/en`]) {
      assertError(await owner('GET', path), 404);
      assertError(await owner('PUT', path, { body: { text: 'x' } }), 404);
      assertError(await owner('PUT', path, { body: { text: 1 } }), 404);
      assertError(await owner('DELETE', path), 404);
    }
  });

  it('refuses bad bodies with 400 naming each field, and stores nothing', async () => {
    const bad: Array<[unknown, string[]]> = [
      [{ text: 'x'.repeat(2001) }, ['text']],
      [{ subject: 's'.repeat(201), buttonText: 'b'.repeat(101), footerText: 'f'.repeat(1001) }, ['subject', 'buttonText', 'footerText']],
      [{ subject: 'Hello\r\nBcc: victim@example.test' }, ['subject']],
      [{ text: 'nul \u0000 byte' }, ['text']],
      [{ text: 42 }, ['text']],
      [{ title: ['a'] }, ['title']],
      [{ text: 'Code: {{.Secret}}' }, ['text']],
      [{ greeting: 'Hi {{ .FirstName }}' }, ['greeting']],
      [{ colour: 'red' }, ['colour']],
    ];
    for (const [body, fields] of bad) assertInvalid(await owner('PUT', `${PATH}/InitCode/en`, { body }), fields, { what: JSON.stringify(body).slice(0, 80) });
    assert.equal((await owner('PUT', `${PATH}/InitCode/en`, { body: {} })).status, 400);
    assert.equal((await owner('PUT', `${PATH}/InitCode/en`, { raw: '{"text": "unterminated' })).status, 400);
    assert.equal((await owner('PUT', `${PATH}/InitCode/en`, { body: 'text' })).status, 400);
    assert.equal((await owner('GET', `${PATH}/InitCode/en`)).body.isDefault, true, 'nothing stored');
    // A text of exactly the limit is fine.
    assert.equal((await owner('PUT', `${PATH}/InitCode/en`, { body: { text: 'x'.repeat(2000) } })).status, 200);
    assert.equal((await owner('DELETE', `${PATH}/InitCode/en`)).status, 200);
  });

  it('needs ORG_OWNER of the org', async () => {
    assertError(await manager('GET', `${PATH}/InitCode/en`), 403);
    assertError(await manager('PUT', `${PATH}/InitCode/en`, { body: { text: 'x' } }), 403);
    assertError(await owner('PUT', `${PATH}/InitCode/en`, { body: { text: 'x' }, orgId: otherId }), 403);
    assertError(await owner('GET', `${PATH}/InitCode/en`, { token: null }), 401);
  });

  it("the org's users get its texts: a hostile name escaped in the HTML part and intact in the text part; German texts for a German user", async () => {
    const english = await owner('PUT', `${PATH}/PasswordChanged/en`, {
      body: {
        title: 'ACME security',
        preHeader: 'About {{.UserName}}',
        subject: 'ACME: {{.FirstName}}, new password',
        greeting: 'Dear {{.FirstName}},',
        text: 'The password of {{.UserName}} at {{.OrgName}} changed. <b>not markup</b>',
        footerText: 'ACME & Co, Musterstrasse 1',
      },
    });
    assert.equal(english.status, 200, english.text);
    const german = await owner('PUT', `${PATH}/PasswordChanged/de`, {
      body: { subject: 'ACME: Passwort geändert', text: 'Hallo aus Zürich, {{.FirstName}}.' },
    });
    assert.equal(german.status, 200, german.text);

    const before = sink.received.length;
    await enqueue(
      server.running.db,
      message({
        type: 'PasswordChanged',
        recipient: 'eve@acme.example.test',
        language: 'en',
        orgId: acmeId,
        values: { FirstName: HOSTILE, UserName: 'eve@acme', OrgName: 'ACME' },
      }),
    );
    await enqueue(
      server.running.db,
      message({
        type: 'PasswordChanged',
        recipient: 'dora@acme.example.test',
        language: 'de-CH',
        orgId: acmeId,
        values: { FirstName: 'Dora', OrgName: 'ACME' },
      }),
    );
    await enqueue(
      server.running.db,
      message({
        type: 'PasswordChanged',
        recipient: 'olga@other.example.test',
        language: 'en',
        orgId: otherId,
        values: { FirstName: 'Olga', OrgName: 'Other' },
      }),
    );
    const mails = (await sink.waitFor(before + 3)).slice(before);
    const to = (address: string) => mails.find((m) => (m.to as { text: string }).text === address)!;

    const hostile = to('eve@acme.example.test');
    assert.equal(hostile.subject, `ACME: ${HOSTILE}, new password`, 'plain in the subject');
    assert.match(hostile.text ?? '', /^Dear <script>alert\(1\)<\/script>,$/m, 'intact in the text part');
    assert.match(hostile.text ?? '', /ACME & Co, Musterstrasse 1/);
    const html = String(hostile.html);
    assert.doesNotMatch(html, /<script>/, 'no script in the HTML part');
    assert.match(html, /Dear &lt;script&gt;alert\(1\)&lt;\/script&gt;,/);
    assert.match(html, /&lt;b&gt;not markup&lt;\/b&gt;/, "the org's own text is no markup either");
    assert.match(html, /<title>ACME security<\/title>/);
    assert.match(html, /About eve@acme/);
    assert.match(html, /ACME &amp; Co, Musterstrasse 1/);

    const dora = to('dora@acme.example.test');
    assert.equal(dora.subject, 'ACME: Passwort geändert');
    assert.match(dora.text ?? '', /Hallo aus Zürich, Dora\./);
    assert.match(dora.text ?? '', new RegExp(`^${MAIL_TEXTS.de.PasswordChanged.greeting.replace('{{.FirstName}}', 'Dora')}$`, 'm'), 'German built-in greeting');

    const olga = to('olga@other.example.test');
    assert.equal(olga.subject, MAIL_TEXTS.en.PasswordChanged.subject, "another org's users get the built-in texts");
  });
});
