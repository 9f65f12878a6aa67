import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { inflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import type { Browser, Page, Request } from 'playwright-core';
import {
  codeLogin,
  confidentialAppFor,
  launchBrowser,
  needsChromium,
  screenshot,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  rpConfig,
} from '../support/browser.ts';
import { needsMellon, prepareMellon, type MellonSp } from '../support/mellon.ts';
import { decryptAssertion } from './support.ts';

// A real service provider: Apache httpd with mod_auth_mellon, started by
// the test (test/support/mellon.ts), signs users in through Portcullis in
// Chromium, with the same login pages and sessions as OIDC apps. A second
// mellon SP ("Files") shares the browser session, for single logout.

const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';

/** The MELLON_* variables the SP's protected page prints, by name. */
function attributesOn(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.startsWith('MELLON_'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** The SAMLResponse the browser POSTs to the SP's ACS, caught on its way. */
function catchResponses(page: Page): string[] {
  const seen: string[] = [];
  page.on('request', (request: Request) => {
    if (request.method() === 'POST' && request.url().endsWith('/mellon/postResponse')) {
      const form = new URLSearchParams(request.postData() ?? '');
      seen.push(Buffer.from(form.get('SAMLResponse') ?? '', 'base64').toString('utf8'));
    }
  });
  return seen;
}

/**
 * The SAML messages the browser carries, in order, as "from → to field":
 * who sent it is read from the page it left, where it went from its URL.
 */
function catchLogoutTrips(page: Page, names: Record<string, string>): { trips: string[]; urls: string[] } {
  const seen = { trips: [] as string[], urls: [] as string[] };
  page.on('request', (request: Request) => {
    const url = new URL(request.url());
    const field = ['SAMLRequest', 'SAMLResponse'].find((name) => url.searchParams.has(name));
    if (!field || !request.isNavigationRequest()) return;
    seen.trips.push(`${names[url.origin] ?? url.origin} ${url.pathname} ${field}`);
    seen.urls.push(url.href);
  });
  return seen;
}

/** The XML of a Redirect-binding message URL. */
function redirectMessage(href: string): string {
  const url = new URL(href);
  const value = url.searchParams.get('SAMLRequest') ?? url.searchParams.get('SAMLResponse')!;
  return inflateRawSync(Buffer.from(value, 'base64')).toString('utf8');
}

describe('SAML sign-in with Apache mod_auth_mellon in Chromium', { skip: needsChromium || needsMellon }, () => {
  let world: SignInWorld;
  let sp: MellonSp;
  let files: MellonSp;
  let rp: RelyingParty;
  let browser: Browser;
  let user: TestUser;
  let idpCertificates: string[];
  let appId: string;

  before(async () => {
    [world, sp, files, rp, browser] = await Promise.all([startSignInWorld(), prepareMellon(), prepareMellon(), startRelyingParty(), launchBrowser()]);
    const role = await world.api('POST', `/management/v1/projects/${world.projectId}/roles`, { roleKey: 'editor', displayName: 'Editor' });
    assert.equal(role.status, 200, JSON.stringify(role.body));
    user = await world.createUser('sally', { firstName: 'Sally', lastName: 'Saml' });
    const grant = await world.api('POST', `/management/v1/users/${user.userId}/grants`, { projectId: world.projectId, roleKeys: ['editor'] });
    assert.equal(grant.status, 200, JSON.stringify(grant.body));
    const app = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/saml`, {
      name: 'Wiki',
      metadataXml: Buffer.from(sp.metadataXml).toString('base64'),
    });
    assert.equal(app.status, 200, JSON.stringify(app.body));
    appId = app.body.appId;
    const metadata = await fetch(`${world.server.url}/saml/v2/metadata`);
    assert.equal(metadata.status, 200);
    const metadataXml = await metadata.text();
    const doc = new DOMParser().parseFromString(metadataXml, 'text/xml');
    idpCertificates = Array.from(doc.getElementsByTagNameNS(DSIG, 'X509Certificate')).map((e) => e.textContent ?? '');
    assert.ok(idpCertificates.length >= 1);
    const second = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/saml`, {
      name: 'Files',
      metadataXml: Buffer.from(files.metadataXml).toString('base64'),
    });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    await Promise.all([sp.start(metadataXml), files.start(metadataXml)]);
  });

  after(async () => {
    await browser?.close();
    await sp?.stop();
    await files?.stop();
    await rp?.close();
    await world?.stop();
  });

  test('an SP-initiated sign-in ends on the SP page with the attributes, from a response whose assertion verifies with the IdP certificate', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const responses = catchResponses(page);
    try {
      await page.goto(`${sp.origin}/app/attributes`);
      // The login pages of every sign-in, naming the app.
      await page.waitForSelector('#loginName');
      assert.match(await page.content(), /Wiki/);
      await signIn(page, user);
      await page.waitForURL(`${sp.origin}/app/attributes`);
      const attributes = attributesOn(await page.innerText('body'));
      assert.equal(attributes.MELLON_NAME_ID, user.userId, JSON.stringify(attributes));
      assert.equal(attributes.MELLON_UserID, user.userId);
      assert.equal(attributes.MELLON_Email, 'sally@acme.example.test');
      assert.equal(attributes.MELLON_FirstName, 'Sally');
      assert.equal(attributes.MELLON_SurName, 'Saml');
      assert.equal(attributes.MELLON_FullName, 'Sally Saml');
      assert.equal(attributes.MELLON_UserName, 'sally');
      assert.equal(attributes.MELLON_Roles, 'editor');

      assert.equal(responses.length, 1);
      // mellon's metadata has an encryption key: the assertion travels encrypted, mellon decrypted it.
      assert.match(responses[0]!, /<saml:EncryptedAssertion>/);
      assert.doesNotMatch(responses[0]!, /<saml:Assertion /);
      const xml = decryptAssertion(responses[0]!, sp.keyPem);
      const doc = new DOMParser().parseFromString(xml, 'text/xml');
      const signature = doc.getElementsByTagNameNS(DSIG, 'Signature')[0]!;
      const verifier = new SignedXml({
        publicCert: `-----BEGIN CERTIFICATE-----\n${idpCertificates[0]}\n-----END CERTIFICATE-----\n`,
        getCertFromKeyInfo: () => null,
      });
      verifier.loadSignature(signature);
      assert.equal(verifier.checkSignature(xml), true);
      const [signed] = verifier.getSignedReferences();
      const assertion = new DOMParser().parseFromString(signed!, 'text/xml').documentElement!;
      assert.equal(assertion.localName, 'Assertion');
      const text = (name: string) => assertion.getElementsByTagNameNS(ASSERTION, name)[0]!;
      assert.equal(text('Audience').textContent, sp.entityId);
      const confirmation = text('SubjectConfirmationData');
      assert.equal(confirmation.getAttribute('Recipient'), `${sp.origin}/mellon/postResponse`);
      assert.match(confirmation.getAttribute('InResponseTo') ?? '', /^_/);
      const issued = Date.parse(assertion.getAttribute('IssueInstant')!);
      assert.equal(Date.parse(confirmation.getAttribute('NotOnOrAfter')!) - issued, 300_000);
      assert.equal(text('NameID').getAttribute('Format'), 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
      assert.match(xml, /SignatureMethod Algorithm="http:\/\/www\.w3\.org\/2001\/04\/xmldsig-more#rsa-sha256"/);
      assert.match(xml, /CanonicalizationMethod Algorithm="http:\/\/www\.w3\.org\/2001\/10\/xml-exc-c14n#"/);

      // Single logout, started at the SP: the IdP ends the session and answers the SP.
      await page.goto(`${sp.origin}/mellon/logout?ReturnTo=${encodeURIComponent(`${sp.origin}/bye`)}`);
      await page.waitForURL(`${sp.origin}/bye`);
      await page.goto(`${sp.origin}/app/attributes`);
      // Signed out at the IdP too: the login page again, not the attributes.
      await page.waitForSelector('#loginName');
    } catch (err) {
      await screenshot(page, 'saml-mellon-sign-in');
      throw new Error(`${(err as Error).message}\nmellon log:\n${sp.errorLog().slice(-3000)}`);
    } finally {
      await context.close();
    }
  });

  test('a browser signed in for an OIDC app goes straight through to the SAML app, without a password', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      const app = await world.createApp({ name: 'Shop', ...confidentialAppFor(rp) });
      const config = await rpConfig(world, app);
      await codeLogin(page, config, rp, user, 'openid');
      const loginPages: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.startsWith('/ui/login')) loginPages.push(request.url());
      });
      await page.goto(`${sp.origin}/app/attributes`);
      await page.waitForURL(`${sp.origin}/app/attributes`);
      assert.equal(attributesOn(await page.innerText('body')).MELLON_UserID, user.userId);
      assert.deepEqual(loginPages, []);
    } catch (err) {
      await screenshot(page, 'saml-mellon-sso');
      throw new Error(`${(err as Error).message}\nmellon log:\n${sp.errorLog().slice(-3000)}`);
    } finally {
      await context.close();
    }
  });

  test('IdP-initiated sign-in: mellon takes the unsolicited response and opens the RelayState page', async () => {
    const allowed = await world.api('PUT', `/management/v1/projects/${world.projectId}/apps/${appId}`, { allowIdpInitiated: true });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      const query = new URLSearchParams({ sp: sp.entityId, RelayState: `${sp.origin}/app/attributes` });
      await page.goto(`${world.issuer}/saml/v2/init?${query}`);
      await signIn(page, user);
      await page.waitForURL(`${sp.origin}/app/attributes`);
      assert.equal(attributesOn(await page.innerText('body')).MELLON_UserID, user.userId);
    } catch (err) {
      await screenshot(page, 'saml-mellon-idp-initiated');
      throw new Error(`${(err as Error).message}\nmellon log:\n${sp.errorLog().slice(-3000)}`);
    } finally {
      await context.close();
    }
  });

  /**
   * Single logout's user: mellon finds the session a LogoutRequest names by
   * its NameID alone, so the user signed in by the other tests (sessions
   * left open in closed browsers) would let it pick one of those.
   */
  let leaver: TestUser;

  /** Signs the browser in at both SPs (the second one by single sign-on), and answers the names of the parties by origin. */
  async function signedInAtBoth(page: Page, firstSignIn: boolean): Promise<Record<string, string>> {
    await page.goto(`${sp.origin}/app/attributes`);
    if (firstSignIn) {
      await page.waitForSelector('#loginName');
      await signIn(page, leaver);
    }
    await page.waitForURL(`${sp.origin}/app/attributes`);
    assert.equal(attributesOn(await page.innerText('body')).MELLON_UserID, leaver.userId);
    await page.goto(`${files.origin}/app/attributes`);
    await page.waitForURL(`${files.origin}/app/attributes`);
    assert.equal(attributesOn(await page.innerText('body')).MELLON_UserID, leaver.userId);
    return { [sp.origin]: 'wiki', [files.origin]: 'files', [new URL(world.issuer).origin]: 'idp' };
  }

  /** Both SPs' own sessions are over: each protected page sends the browser to the IdP, which asks for the password. */
  async function signedOutAtBoth(page: Page): Promise<void> {
    for (const origin of [sp.origin, files.origin]) {
      await page.goto(`${origin}/app/attributes`);
      await page.waitForSelector('#loginName');
    }
  }

  const mellonLogs = () => `wiki mellon log:\n${sp.errorLog().slice(-2000)}\nfiles mellon log:\n${files.errorLog().slice(-2000)}`;

  test('single logout at one SP logs the session out of the other SAML app too: the IdP asks it, it answers, then the first SP gets Success', async () => {
    leaver = await world.createUser('lou', { firstName: 'Lou', lastName: 'Leaver' });
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      const names = await signedInAtBoth(page, true);
      const seen = catchLogoutTrips(page, names);
      await page.goto(`${sp.origin}/mellon/logout?ReturnTo=${encodeURIComponent(`${sp.origin}/bye`)}`);
      await page.waitForURL(`${sp.origin}/bye`);
      assert.deepEqual(seen.trips, [
        'idp /saml/v2/SLO SAMLRequest',
        'files /mellon/logout SAMLRequest',
        'idp /saml/v2/SLO SAMLResponse',
        'wiki /mellon/logout SAMLResponse',
      ]);
      const toFiles = redirectMessage(seen.urls[1]!);
      assert.match(toFiles, new RegExp(`<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${leaver.userId}</saml:NameID>`));
      assert.match(toFiles, /<samlp:SessionIndex>[\w-]+<\/samlp:SessionIndex>/);
      const toWiki = redirectMessage(seen.urls[3]!);
      assert.match(toWiki, /<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2\.0:status:Success"><\/samlp:StatusCode>/);
      assert.doesNotMatch(toWiki, /PartialLogout/);
      await signedOutAtBoth(page);
    } catch (err) {
      await screenshot(page, 'saml-mellon-slo-fan-out');
      throw new Error(`${(err as Error).message}\n${mellonLogs()}`);
    } finally {
      await context.close();
    }
  });

  test("an OIDC logout logs the browser out of the session's SAML apps, one after the other, then goes on to the app's post_logout_redirect_uri", async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    try {
      const app = await world.createApp({ name: 'Portal', ...confidentialAppFor(rp) });
      const config = await rpConfig(world, app);
      const { tokens } = await codeLogin(page, config, rp, leaver, 'openid');
      const names = await signedInAtBoth(page, false);
      const seen = catchLogoutTrips(page, names);
      await page.goto(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: rp.loggedOut, state: 'bye' }).href);
      await page.waitForURL((url) => url.href.startsWith(rp.loggedOut));
      assert.equal(new URL(page.url()).searchParams.get('state'), 'bye');
      assert.deepEqual(seen.trips, [
        'wiki /mellon/logout SAMLRequest',
        'idp /saml/v2/SLO SAMLResponse',
        'files /mellon/logout SAMLRequest',
        'idp /saml/v2/SLO SAMLResponse',
      ]);
      await signedOutAtBoth(page);
    } catch (err) {
      await screenshot(page, 'saml-mellon-oidc-logout');
      throw new Error(`${(err as Error).message}\n${mellonLogs()}`);
    } finally {
      await context.close();
    }
  });
});
