import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, needsChromium, screenshot, signIn, startSignInWorld, type SignInWorld, type TestUser } from '../support/browser.ts';
import { base32Decode, totpCode, totpStep } from '../../src/domain/totp.ts';
import { authnRequestXml, opensslKeyPair, redirectQuery } from './support.ts';
import { startReceiver, trustInThisProcess, type Receiver } from '../actions/receiver.ts';

// SAML sign-ins in Chromium against a service provider written here: its
// ACS is a local server that keeps what the browser POSTs. What a real SP
// does not ask for by default: the email NameID, ForceAuthn, the login
// policy's forceMfa holding for SAML apps as for OIDC apps, and the
// presamlresponse hooks (HTTPS receivers started here) adding attributes,
// and IdP-initiated sign-in.

const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

describe('SAML sign-in with a hand-written SP in Chromium', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let browser: Browser;
  let acs: Server;
  let acsUrl: string;
  let user: TestUser;
  let sp: { entityId: string; keyPem: string };
  let idpCertificate: string;
  let appId: string;
  const posted: URLSearchParams[] = [];
  const receivers: Receiver[] = [];

  before(async () => {
    trustInThisProcess();
    [world, browser] = await Promise.all([startSignInWorld(), launchBrowser()]);
    acs = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        if (req.method === 'POST') posted.push(new URLSearchParams(body));
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>signed in</title><p id="done">signed in at the SP</p>');
      });
    });
    await new Promise<void>((resolve) => acs.listen(0, '127.0.0.1', resolve));
    acsUrl = `http://localhost:${(acs.address() as AddressInfo).port}/acs`;
    const keys = opensslKeyPair('hand');
    sp = { entityId: 'https://hand.example.test/saml', keyPem: keys.keyPem };
    const metadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${sp.entityId}"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="true"><md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${keys.certificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acsUrl}" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>`;
    const app = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/saml`, {
      name: 'Hand SP',
      metadataXml: Buffer.from(metadata).toString('base64'),
    });
    assert.equal(app.status, 200, JSON.stringify(app.body));
    appId = app.body.appId;
    user = await world.createUser('hanna', { firstName: 'Hanna', lastName: 'Hand' });
    const idpMetadata = await (await fetch(`${world.server.url}/saml/v2/metadata`)).text();
    idpCertificate = /<ds:X509Certificate>([^<]+)</.exec(idpMetadata)![1]!;
  });

  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    for (const receiver of receivers) assert.deepEqual(receiver.badSignatures, [], 'every hook call carried a valid signature');
    await browser?.close();
    await new Promise<void>((resolve) => acs?.close(() => resolve()));
    await world?.stop();
  });

  const ssoUrl = (fields: { nameIdFormat?: string; attributes?: string } = {}) =>
    `${world.issuer}/saml/v2/SSO?${redirectQuery(authnRequestXml({ issuer: sp.entityId, ...fields }), sp.keyPem, 'relay')}`;

  /** A receiver answering `answer`, and a restCall target pointing at it. */
  async function hookTarget(name: string, answer: Receiver['answer'], interruptOnError = false): Promise<{ id: string; receiver: Receiver }> {
    const receiver = await startReceiver();
    receivers.push(receiver);
    receiver.answer = answer;
    const res = await world.api('POST', '/v2beta/actions/targets', { name, endpoint: receiver.url, timeout: '5s', restCall: { interruptOnError } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    receiver.key = res.body.signingKey;
    return { id: res.body.id, receiver };
  }

  async function setSamlHooks(targets: string[]): Promise<void> {
    const res = await world.api('PUT', '/v2beta/actions/executions', {
      condition: { function: { name: 'presamlresponse' } },
      targets: targets.map((target) => ({ target })),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }

  /** The assertion of the last response the ACS received, after checking its signature with the IdP's certificate. */
  function lastAssertion(relayState = 'relay'): Element {
    const form = posted.at(-1)!;
    assert.equal(form.get('RelayState'), relayState);
    const xml = Buffer.from(form.get('SAMLResponse')!, 'base64').toString();
    const doc = new DOMParser().parseFromString(xml, 'text/xml');
    assert.equal(doc.documentElement!.getAttribute('Destination'), acsUrl);
    const verifier = new SignedXml({
      publicCert: `-----BEGIN CERTIFICATE-----\n${idpCertificate}\n-----END CERTIFICATE-----\n`,
      getCertFromKeyInfo: () => null,
    });
    verifier.loadSignature(doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0]!);
    assert.equal(verifier.checkSignature(xml), true);
    return new DOMParser().parseFromString(verifier.getSignedReferences()[0]!, 'text/xml').documentElement!;
  }

  async function withPage(name: string, run: (page: Page, context: BrowserContext) => Promise<void>): Promise<void> {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    context.setDefaultTimeout(10_000);
    try {
      await run(page, context);
    } catch (err) {
      await screenshot(page, name);
      throw err;
    } finally {
      await context.close();
    }
  }

  test('a request for the emailAddress format gets the email as NameID; ForceAuthn asks for the password again', async () => {
    await withPage('saml-hand-email', async (page) => {
      await page.goto(ssoUrl({ nameIdFormat: EMAIL_FORMAT }));
      await signIn(page, user);
      await page.waitForSelector('#done');
      const nameId = lastAssertion().getElementsByTagNameNS(ASSERTION, 'NameID')[0]!;
      assert.equal(nameId.getAttribute('Format'), EMAIL_FORMAT);
      assert.equal(nameId.textContent, 'hanna@acme.example.test');

      const before = posted.length;
      await page.goto(ssoUrl({ attributes: ' ForceAuthn="true"' }));
      await page.waitForSelector('#password, #loginName');
      assert.equal(posted.length, before, 'nothing reaches the SP before the password');
    });
  });

  test("the org's forceMfa holds for SAML apps: a second factor is set up before the SP gets a response, which says so", async () => {
    const policy = await world.api('PUT', '/management/v1/policies/login', { forceMfa: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    try {
      await withPage('saml-hand-mfa', async (page) => {
        const before = posted.length;
        await page.goto(ssoUrl());
        await signIn(page, user);
        await page.waitForSelector('#otpSecret');
        assert.equal(posted.length, before, 'no response before the second factor');
        const secret = base32Decode((await page.textContent('#otpSecret'))!);
        await page.fill('#code', totpCode(secret, totpStep(Date.now())));
        await page.click('button[type=submit]');
        await page.waitForSelector('#recoveryCodes');
        await page.click('button[type=submit]');
        await page.waitForSelector('#done');
        const context = lastAssertion().getElementsByTagNameNS(ASSERTION, 'AuthnContextClassRef')[0]!;
        assert.equal(context.textContent, 'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract');
      });
    } finally {
      assert.equal((await world.api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });

  test('presamlresponse hooks add attributes beside the IdP’s own; a hostile answer is skipped; a failing hook with interruptOnError gets the SP a Responder status', async () => {
    const good = await hookTarget('saml attributes', () => ({
      status: 200,
      body: JSON.stringify({
        append_attribute: [
          { name: 'department', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri', value: ['R&D', '<ops>'] },
          { name: 'Email', value: ['mallory@evil.example'] },
        ],
        set_user_metadata: [{ key: 'saml_seen', value: Buffer.from('yes').toString('base64') }],
      }),
    }));
    const hostile = await hookTarget('hostile', () => ({
      status: 200,
      body: JSON.stringify({ append_attribute: [{ name: 'injected', nameFormat: 'no uri"/><x', value: ['v'] }] }),
    }));
    const failing = await hookTarget('failing', () => 500, true);
    await setSamlHooks([hostile.id, good.id]);
    // Not Hanna: she has a second factor since the test before.
    const hooked = await world.createUser('hugo', { firstName: 'Hugo', lastName: 'Hook' });
    try {
      await withPage('saml-hand-hooks', async (page) => {
        await page.goto(ssoUrl());
        await signIn(page, hooked);
        await page.waitForSelector('#done');
        const assertion = lastAssertion();
        const attribute = (name: string) =>
          Array.from(assertion.getElementsByTagNameNS(ASSERTION, 'Attribute')).filter((element) => element.getAttribute('Name') === name);
        const [department] = attribute('department');
        assert.equal(department?.getAttribute('NameFormat'), 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri');
        assert.deepEqual(
          Array.from(department!.getElementsByTagNameNS(ASSERTION, 'AttributeValue')).map((value) => value.textContent),
          ['R&D', '<ops>'],
        );
        // The IdP's own Email is never replaced, nor doubled; the hostile answer added nothing.
        assert.deepEqual(
          attribute('Email').map((element) => element.textContent),
          ['hugo@acme.example.test'],
        );
        assert.deepEqual(attribute('injected'), []);
        const call = good.receiver.deliveries.at(-1)!.body;
        assert.equal(call.function, 'presamlresponse');
        assert.equal(call.spEntityId, sp.entityId);
        assert.equal(call.user.id, hooked.userId);
        assert.equal(hostile.receiver.attempts.length, 1);
        const metadata = await world.api('GET', `/management/v1/users/${hooked.userId}/metadata/saml_seen`);
        assert.equal(metadata.status, 200, JSON.stringify(metadata.body));

        // Signed in already: the next request goes straight through, and the failing hook stops the assertion.
        await setSamlHooks([good.id, failing.id]);
        const before = posted.length;
        await page.goto(ssoUrl());
        await page.waitForSelector('#done');
        assert.equal(posted.length, before + 1);
        const xml = Buffer.from(posted.at(-1)!.get('SAMLResponse')!, 'base64').toString();
        assert.match(xml, /<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder">/);
        assert.doesNotMatch(xml, /Assertion/);
        assert.equal(failing.receiver.attempts.length, 1);
      });
    } finally {
      await setSamlHooks([]);
    }
  });

  test('IdP-initiated sign-in: refused until the app allows it, then an unsolicited response (no InResponseTo) reaches the default ACS with the RelayState', async () => {
    const init = (query: string) => fetch(`${world.server.url}/saml/v2/init?${query}`, { redirect: 'manual' });
    const refused = async (response: Response, reason: RegExp) => {
      assert.equal(response.status, 400);
      assert.match(await response.text(), reason);
    };
    const spQuery = `sp=${encodeURIComponent(sp.entityId)}`;
    await refused(await init(spQuery), /does not accept IdP-initiated sign-in/);
    const path = `/management/v1/projects/${world.projectId}/apps/${appId}`;
    for (const bad of [{}, { allowIdpInitiated: 'yes' }, { allowIdpInitiated: true, name: 'Renamed' }]) {
      const res = await world.api('PUT', path, bad);
      assert.equal(res.status, 400, JSON.stringify(res.body));
    }
    const allowed = await world.api('PUT', path, { allowIdpInitiated: true });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal((await world.api('GET', path)).body.app.samlConfig.allowIdpInitiated, true);
    await refused(await init(''), /sp must name a service provider/);
    await refused(await init(`${spQuery}&${spQuery}`), /sp is repeated/);
    await refused(await init(`sp=${encodeURIComponent('https://nobody.example.test/saml')}`), /not a known service provider/);
    await refused(await init(`${spQuery}&RelayState=${'x'.repeat(3000)}`), /RelayState is too long/);
    const started = await init(`${spQuery}&RelayState=from-idp`);
    assert.equal(started.status, 303);
    assert.ok(started.headers.get('location')!.startsWith(`${world.issuer}/oauth/v2/authorize?`));

    const ida = await world.createUser('ida', { firstName: 'Ida', lastName: 'Init' });
    await withPage('saml-hand-idp-initiated', async (page) => {
      const before = posted.length;
      await page.goto(`${world.issuer}/saml/v2/init?${spQuery}&RelayState=from-idp`);
      await signIn(page, ida);
      await page.waitForSelector('#done');
      assert.equal(posted.length, before + 1);
      const assertion = lastAssertion('from-idp');
      const xml = Buffer.from(posted.at(-1)!.get('SAMLResponse')!, 'base64').toString();
      assert.doesNotMatch(xml, /InResponseTo/);
      assert.equal(assertion.getElementsByTagNameNS(ASSERTION, 'NameID')[0]!.textContent, ida.userId);
    });
  });
});
