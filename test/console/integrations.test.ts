import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { landedOn, needsChromium } from '../support/browser.ts';
import { assertAccessible, rowsAre, shoot, startConsoleScene, type ConsoleScene } from '../support/console.ts';
import { freePort, tempDir } from '../support/server.ts';
import { selfSignedCertificate } from '../support/slapd.ts';
import { eventually } from '../support/tokens.ts';
import { startUpstreamOp, type UpstreamOp } from '../support/upstream-op.ts';

// The console's pages for what the service connects to: an OpenID provider
// created at the instance whose button then shows on the org's login page,
// a provider changed without retyping its secret, an action target whose
// signing key is shown once, an execution set and removed only after a
// confirmation, a SAML app created from its metadata with the address of
// our own metadata to give it, and a bad target refused in German.

const SP_METADATA = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://wiki.example.test/saml">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false">
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://wiki.example.test/acs" index="0"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;

describe('integrations in the console', { skip: needsChromium }, () => {
  let scene: ConsoleScene;
  let upstream: UpstreamOp;
  let context: BrowserContext;
  let page: Page;
  let defaultOrg: string;

  const dialog = (p: Page = page) => p.getByRole('dialog', { name: /Please confirm|Bitte bestätigen/ });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  before(async () => {
    scene = await startConsoleScene();
    upstream = await startUpstreamOp(`${scene.server.issuer}/idps/callback`);
    defaultOrg = (await scene.admin('POST', '/admin/v1/orgs/_search', { body: {} })).body.result[0].id;
    ({ context, page } = await scene.signedInPage());
  });
  after(async () => {
    await upstream?.stop();
    await scene?.stop();
  });

  it("creates an OpenID provider at the instance, puts it on the org's login page, and its button shows there", async () => {
    await nav('Identity providers').click();
    await page.getByRole('heading', { level: 1, name: 'Identity providers' }).waitFor();
    assert.equal(await page.locator('[data-copy="Redirect URI to register at every provider"]').innerText(), `${scene.server.issuer}/idps/callback`);
    await page.getByRole('button', { name: 'New provider: Providers of the instance' }).click();
    const form = page.getByRole('form', { name: 'New provider: Providers of the instance' });
    await form.getByLabel('Kind of provider').selectOption({ label: 'OpenID Connect' });
    await form.getByLabel('Name', { exact: true }).fill('Upstream');
    await form.getByLabel('Issuer URL').fill('ftp://upstream.example.test');
    await form.getByLabel('Client ID').fill(upstream.clientId);
    await form.getByLabel('Client secret').fill(upstream.clientSecret);
    await form.getByLabel('Create users automatically').check();
    await form.getByRole('button', { name: 'Create' }).click();
    // The API's rule stands beside the field; nothing was created.
    await form.getByText('must be an https URL (http only on a loopback host)').waitFor();
    assert.equal((await scene.admin('POST', '/admin/v1/idps/_search', { body: {} })).body.result.length, 0);
    await form.getByLabel('Issuer URL').fill(upstream.issuer);
    await form.getByRole('button', { name: 'Create' }).click();
    const instanceTable = page.getByRole('table', { name: 'Providers of the instance' });
    await rowsAre(instanceTable, 1);
    assert.match(await instanceTable.innerText(), /Upstream\s+OpenID Connect\s+Active/);
    const stored = (await scene.admin('POST', '/admin/v1/idps/_search', { body: {} })).body.result[0];
    assert.equal(stored.providerOptions.isAutoCreation, true);
    assert.equal(stored.config.issuer, upstream.issuer);
    // The org sees the instance's provider too, as the instance's.
    assert.match(await page.getByRole('table', { name: 'Providers of this organization' }).innerText(), /Upstream\s+OpenID Connect\s+The instance/);

    const onLogin = page.getByRole('region', { name: 'On the login page of this organization' });
    await onLogin.getByText('The login policy allows sign-ins through providers').waitFor();
    await onLogin.getByLabel('Provider', { exact: true }).selectOption({ label: 'Upstream' });
    await onLogin.getByRole('button', { name: 'Add to the login page' }).click();
    await onLogin.getByText('Added to the login page.').waitFor();
    await rowsAre(onLogin.getByRole('table'), 1);
    await onLogin.getByText('Every provider is on the login page already.').waitFor();
    await shoot(page, 'idps-listed');

    const visitor = await scene.browser.newContext({ locale: 'en-US' });
    try {
      const login = await visitor.newPage();
      await login.goto(scene.consoleUrl);
      await landedOn(login, `${scene.server.issuer}/ui/login`);
      await login.getByRole('button', { name: 'Sign in with Upstream' }).waitFor();
    } finally {
      await visitor.close();
    }

    // Taking it off the login page asks first; Cancel keeps it.
    await onLogin.getByRole('button', { name: 'Remove from the login page' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
    assert.equal((await scene.admin('POST', '/management/v1/policies/login/idps/_search', { body: {}, orgId: defaultOrg })).body.result.length, 1);
    await onLogin.getByRole('button', { name: 'Remove from the login page' }).click();
    await dialog().getByRole('button', { name: 'Remove from the login page' }).click();
    await onLogin.getByText('The login page shows no provider yet.').waitFor();
  });

  it('changes a provider without retyping its secret, and removes it after a confirmation', async () => {
    await page.getByRole('table', { name: 'Providers of the instance' }).getByRole('link', { name: 'Upstream' }).click();
    await page.getByRole('heading', { level: 1, name: 'Upstream' }).waitFor();
    const form = page.getByRole('form', { name: 'Save' });
    assert.equal(await form.getByLabel('Client secret').inputValue(), '', 'the secret is never shown');
    await form.getByText('Leave empty to keep the stored secret.').waitFor();
    assert.equal(await form.getByLabel('Scopes (separated by spaces)').inputValue(), 'openid profile email');
    await assertAccessible(page, 'identity provider form');
    await shoot(page, 'idp-edit');
    await form.getByLabel('Name', { exact: true }).fill('Upstream SSO');
    await form.getByLabel('Update the profile at every sign-in').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { level: 1, name: 'Upstream SSO' }).waitFor();
    const id = (await scene.admin('POST', '/admin/v1/idps/_search', { body: {} })).body.result[0].id;
    const { idp } = (await scene.admin('GET', `/admin/v1/idps/${id}`)).body;
    assert.equal(idp.name, 'Upstream SSO');
    assert.equal(idp.providerOptions.isAutoUpdate, true);
    await page.getByRole('button', { name: 'Remove provider' }).click();
    await dialog().getByRole('button', { name: 'Remove provider' }).click();
    await page.getByRole('heading', { level: 1, name: 'Identity providers' }).waitFor();
    assert.equal((await scene.admin('GET', `/admin/v1/idps/${id}`)).status, 404);
  });

  it('offers an LDAP directory with its own fields (the bind password write-only, the attributes as a group, the CA a PEM text); refusals stand at their fields', async () => {
    await page.getByRole('button', { name: 'New provider: Providers of the instance' }).click();
    const form = page.getByRole('form', { name: 'New provider: Providers of the instance' });
    await form.getByLabel('Kind of provider').selectOption({ label: 'LDAP directory' });
    await form.getByLabel('Name', { exact: true }).fill('Directory');
    const closed = await freePort();
    await form.getByLabel('Servers (ldaps:// or ldap:// with StartTLS, separated by spaces)').fill(`ldap://127.0.0.1:${closed}`);
    await form.getByLabel('Base DN', { exact: true }).fill('dc=example,dc=test');
    await form.getByLabel('Bind DN of the service account').fill('cn=portcullis,dc=example,dc=test');
    assert.equal(await form.getByLabel('Bind password').getAttribute('type'), 'password');
    await form.getByLabel('Bind password').fill('bind-secret');
    await form.getByLabel('Where users are (a DN, or relative to the base DN)').fill('ou=people');
    await form.getByLabel('Object classes of a user entry').fill('inetOrgPerson');
    await form.getByLabel('Attributes that may hold the typed login name').fill('uid mail');
    const attributes = form.getByRole('group', { name: 'Which attribute holds what' });
    await attributes.getByLabel('User ID').fill('uid');
    await attributes.getByLabel('Email', { exact: true }).fill('mail');
    const { certificatePem, keyPem } = selfSignedCertificate(tempDir('portcullis-console-ca-'), 'Directory CA');
    const rootCa = form.getByLabel('Trusted CA certificates (PEM)');
    assert.equal(await rootCa.evaluate((field) => field.tagName), 'TEXTAREA');
    await rootCa.fill(`${certificatePem}${keyPem}`);
    await assertAccessible(page, 'LDAP provider form');
    await form.getByRole('button', { name: 'Create' }).click();
    // A private key pasted along is refused before anything is sent to the directory.
    await form.locator('.field-error').first().waitFor();
    assert.equal(await rootCa.getAttribute('aria-invalid'), 'true');
    assert.match(await form.innerText(), /must not hold a private key/);
    await rootCa.fill(certificatePem);
    await form.getByRole('button', { name: 'Create' }).click();
    // The API binds to check the settings: nobody listens, so it names the servers.
    const servers = form.getByLabel('Servers (ldaps:// or ldap:// with StartTLS, separated by spaces)');
    assert.ok(await eventually(async () => (await servers.getAttribute('aria-invalid')) === 'true', 15_000), 'the servers are named');
    assert.notEqual(await rootCa.getAttribute('aria-invalid'), 'true');
    assert.doesNotMatch(await form.innerText(), /bind-secret/);
    assert.equal((await scene.admin('POST', '/admin/v1/idps/_search', { body: {} })).body.result.length, 0);
    await nav('Identity providers').click();
  });

  it('creates a SAML provider from its IdP metadata pasted as XML (sent as the API takes it, base64), and shows it again as XML', async () => {
    // This service's own IdP metadata stands in for an external IdP's.
    const idpMetadata = await (await fetch(`${scene.server.issuer}/saml/v2/metadata`)).text();
    const form = page.getByRole('form', { name: 'New provider: Providers of the instance' });
    // The form the LDAP test used may still be open.
    if (!(await form.isVisible())) await page.getByRole('button', { name: 'New provider: Providers of the instance' }).click();
    await form.getByLabel('Kind of provider').selectOption({ value: 'saml' });
    await form.getByLabel('Name', { exact: true }).fill('Corporate SAML');
    await form.getByLabel('Metadata XML').fill(idpMetadata);
    await form.getByRole('button', { name: 'Create' }).click();
    const instanceTable = page.getByRole('table', { name: 'Providers of the instance' });
    await instanceTable.getByRole('link', { name: 'Corporate SAML' }).click();
    await page.getByRole('heading', { level: 1, name: 'Corporate SAML' }).waitFor();
    const { idp } = (await scene.admin('GET', `/admin/v1/idps/${new URL(page.url()).pathname.split('/').pop()}`)).body;
    assert.equal(idp.type, 'IDP_TYPE_SAML');
    assert.equal(Buffer.from(idp.config.metadataXml, 'base64').toString('utf8'), idpMetadata.trim());
    assert.equal((await page.getByLabel('Metadata XML').inputValue()).trim(), idpMetadata.trim());
    await page.getByRole('button', { name: 'Remove provider' }).click();
    await dialog().getByRole('button', { name: 'Remove provider' }).click();
    await page.getByRole('heading', { level: 1, name: 'Identity providers' }).waitFor();
  });

  it('creates a target with its signing key shown once, sets an execution for it, and removes that after a confirmation', async () => {
    await nav('Actions').click();
    await page.getByRole('heading', { level: 1, name: 'Actions' }).waitFor();
    await page.getByRole('button', { name: 'New target' }).click();
    const form = page.getByRole('form', { name: 'New target' });
    await form.getByLabel('Name').fill('crm-sync');
    await form.getByLabel('Endpoint (https URL)').fill('https://127.0.0.1:1/hook');
    await form.getByLabel('Timeout').fill('2s');
    await form.getByRole('button', { name: 'Create' }).click();
    const key = await page.locator('pre[data-secret="Signing key: crm-sync"]').innerText();
    assert.match(key, /^[A-Za-z0-9_-]{43}$/);
    await page.getByText('It is shown only now and cannot be read again.').waitFor();
    const targets = page.getByRole('table', { name: 'Targets' });
    await rowsAre(targets, 1);
    await targets.getByText(/Delivered up to event \d+/).waitFor();
    assert.match(await targets.innerText(), /crm-sync\s+https:\/\/127\.0\.0\.1:1\/hook\s+Webhook \(waits for the answer\)\s+2s/);

    const set = page.getByRole('form', { name: 'Set execution' });
    await set.getByLabel('When').selectOption({ label: 'Events of a group' });
    await set.getByLabel('Group of event types, e.g. user').fill('user');
    await set.getByLabel('crm-sync').check();
    await set.getByRole('button', { name: 'Set execution' }).click();
    const executions = page.getByRole('table', { name: 'Executions' });
    await rowsAre(executions, 1);
    assert.match(await executions.innerText(), /Events of the group user\s+crm-sync/);
    const targetId = (await scene.admin('POST', '/v2beta/actions/targets/_search', { body: {} })).body.result[0].id;
    const stored = (await scene.admin('POST', '/v2beta/actions/executions/_search', { body: {} })).body.result;
    assert.deepEqual(
      stored.map((e: { condition: unknown; targets: unknown }) => [e.condition, e.targets]),
      [[{ event: { group: 'user' } }, [{ target: targetId }]]],
    );
    // A new user is an event of the group; the target refuses the connection, and its row says so.
    const user = await scene.admin('POST', '/management/v1/users/human', {
      body: { userName: 'delivered', profile: { firstName: 'D', lastName: 'E' }, email: { email: 'delivered@default.example.test' } },
    });
    assert.equal(user.status, 200, user.text);
    const failed = await eventually(async () => (await scene.admin('GET', `/v2beta/actions/targets/${targetId}/state`)).body.failures > 0, 10_000, 100);
    assert.ok(failed, 'the delivery failed at least once');
    await page.reload();
    await targets.getByText(/^Failed attempts at the next event: [1-9]\d*$/).waitFor();
    await targets.getByText(/^Last error: .+/).waitFor();
    await assertAccessible(page, 'actions');
    await shoot(page, 'actions-listed');

    await executions.getByRole('button', { name: 'Remove execution' }).click();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
    assert.equal((await scene.admin('POST', '/v2beta/actions/executions/_search', { body: {} })).body.result.length, 1, 'Cancel kept it');
    await executions.getByRole('button', { name: 'Remove execution' }).click();
    await dialog().getByRole('button', { name: 'Remove execution' }).click();
    await page.getByText('No executions yet: set one below.').waitFor();

    // The target's own page changes it; its key is not shown again anywhere.
    await targets.getByRole('link', { name: 'crm-sync' }).click();
    await page.getByRole('heading', { level: 1, name: 'crm-sync' }).waitFor();
    assert.equal(await page.locator('pre[data-secret]').count(), 0);
    const edit = page.getByRole('form', { name: 'Change target' });
    await edit.getByLabel('Timeout').fill('5s');
    await edit.getByLabel('Kind of call').selectOption({ label: 'Call with an answer (needed by token hooks)' });
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const { target } = (await scene.admin('GET', `/v2beta/actions/targets/${targetId}`)).body;
    assert.equal(target.timeout, '5s');
    assert.deepEqual(target.restCall, { interruptOnError: false });
    assert.equal(JSON.stringify(target).includes(key), false);
  });

  it('answers a bad target in German, each field with its own message', async () => {
    const german = await scene.signedInPage({ locale: 'de-DE' });
    try {
      const p = german.page;
      await p.goto(`${scene.consoleUrl}orgs/${defaultOrg}/actions`);
      await p.getByRole('heading', { level: 1, name: 'Aktionen' }).waitFor();
      await p.getByRole('button', { name: 'Neues Ziel' }).click();
      const form = p.getByRole('form', { name: 'Neues Ziel' });
      await form.getByLabel('Name').fill('klartext');
      await form.getByLabel('Endpunkt (https-URL)').fill('http://hooks.example.test/hook');
      await form.getByLabel('Zeitlimit').fill('99s');
      await form.getByRole('button', { name: 'Erstellen' }).click();
      await form.getByText('Bitte prüfen Sie die markierten Felder.').waitFor();
      assert.equal(await form.getByLabel('Endpunkt (https-URL)').getAttribute('aria-invalid'), 'true');
      assert.equal(await form.getByLabel('Zeitlimit').getAttribute('aria-invalid'), 'true');
      assert.deepEqual(await form.locator('.field-error').allInnerTexts(), ['muss https verwenden', 'muss zwischen 0.1s und 30s liegen']);
      assert.doesNotMatch(await form.innerText(), /must|https URL|timeout/i, 'no English left');
      assert.equal((await scene.admin('POST', '/v2beta/actions/targets/_search', { body: {} })).body.result.length, 1, 'nothing stored');
      await shoot(p, 'actions-bad-target-de');
    } finally {
      await german.context.close();
    }
  });

  it("creates a SAML app from its metadata, shows our metadata's address for it, and removes it", async () => {
    const project = (await scene.admin('POST', '/management/v1/projects', { body: { name: 'Wiki' } })).body.id;
    await page.goto(`${scene.consoleUrl}orgs/${defaultOrg}/apps?project=${project}`);
    await page.getByRole('button', { name: 'New SAML app' }).click();
    const form = page.getByRole('form', { name: 'New SAML app' });
    await form.getByLabel('Name').fill('Team wiki');
    await form.getByLabel('Metadata XML', { exact: true }).fill(SP_METADATA);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: 'Team wiki' }).waitFor();
    await page.getByText('https://wiki.example.test/saml').waitFor();
    await page.getByText('https://wiki.example.test/acs').waitFor();
    const metadataUrl = await page.locator('[data-copy="Metadata URL of this identity provider"]').innerText();
    assert.equal(metadataUrl, `${scene.server.issuer}/saml/v2/metadata`);
    const metadata = await fetch(metadataUrl);
    assert.equal(metadata.status, 200);
    assert.match(await metadata.text(), /EntityDescriptor[^>]+entityID=/);
    const appId = new URL(page.url()).pathname.split('/').at(-1);
    const initiated = page.getByRole('form', { name: 'IdP-initiated sign-in' });
    await initiated.getByLabel('Allow IdP-initiated sign-in (unsolicited responses)').check();
    await initiated.getByRole('button', { name: 'Save' }).click();
    const initUrl = await page.locator('[data-copy="IdP-initiated sign-in link"]').innerText();
    assert.equal(initUrl, `${scene.server.issuer}/saml/v2/init?sp=${encodeURIComponent('https://wiki.example.test/saml')}`);
    const stored = await scene.admin('GET', `/management/v1/projects/${project}/apps/${appId}`);
    assert.equal(stored.body.app.samlConfig.allowIdpInitiated, true);
    await shoot(page, 'saml-app');

    await page.getByRole('button', { name: 'Remove app' }).click();
    await dialog().getByRole('button', { name: 'Remove app' }).click();
    await page.getByRole('heading', { level: 1, name: 'Apps' }).waitFor();
    await page.getByText('This project has no apps yet').waitFor();
    assert.equal((await scene.admin('GET', `/management/v1/projects/${project}/apps/${appId}`)).status, 404);
  });

  it('SCIM: the base URL to copy, a provisioning user made with its token shown once, and that token works at the SCIM endpoint', async () => {
    await nav('SCIM provisioning').click();
    await page.getByRole('heading', { level: 1, name: 'SCIM provisioning' }).waitFor();
    const baseUrl = await page.locator('[data-copy="SCIM base URL of this organization"]').innerText();
    assert.equal(baseUrl, `${scene.server.issuer}/scim/v2/${defaultOrg}`);
    await page.getByText('No provisioning user yet').waitFor();
    const form = page.getByRole('form', { name: 'New provisioning user' });
    await form.getByLabel('User name').fill('scim-okta');
    await form.getByRole('button', { name: 'New provisioning user' }).click();
    const token = await page.locator('pre[data-secret="Token of scim-okta (the client\'s secret token)"]').innerText();
    await rowsAre(page.getByRole('table', { name: 'Provisioning users' }), 1);
    await assertAccessible(page, 'SCIM page');
    await shoot(page, 'scim');
    const users = await fetch(`${baseUrl}/Users?count=1`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(users.status, 200);
    assert.equal(users.headers.get('content-type')?.split(';')[0], 'application/scim+json');
    // A taken name is the API's refusal on the page; no second user is left behind.
    await form.getByRole('button', { name: 'New provisioning user' }).click();
    await form.locator('[role=status].error, .field-error').first().waitFor();
    const machines = await scene.admin('POST', '/management/v1/users/_search', {
      body: { queries: [{ userNameQuery: { userName: 'scim-okta', method: 'TEXT_QUERY_METHOD_EQUALS' } }] },
      orgId: defaultOrg,
    });
    assert.equal(machines.body.result.length, 1);
  });

  it('showed every page without a script error or CSP refusal', async () => {
    const quiet = await eventually(async () => scene.problems.length === 0, 100, 50);
    assert.ok(quiet, scene.problems.join('\n'));
    await context.close();
  });
});
