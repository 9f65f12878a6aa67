import assert from 'node:assert/strict';
import { createVerify, randomBytes, X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { inflateRawSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, needsChromium, screenshot, signIn, startSignInWorld, type SignInWorld, type TestUser } from '../support/browser.ts';
import { authnRequestXml, handSp, logoutRequestXml, logoutResponseXml, opensslKeyPair, redirectQuery, type HandSp } from './support.ts';

// Single logout across the SAML apps of one browser session, with service
// providers written here (what a real SP never sends: answers from the
// wrong app, to the wrong request, unsigned, stale): the session is made
// in Chromium, whose requests to the SPs' hosts the test answers itself;
// the logout messages are then sent as the SPs would send them.

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const STATUS = 'urn:oasis:names:tc:SAML:2.0:status:';

describe('SAML single logout across the session’s apps (hand-written SPs)', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let user: TestUser;
  let idpCertificate: X509Certificate;
  const alpha = handSp('alpha');
  const beta = handSp('beta');
  // An app whose metadata has no SingleLogoutService: it cannot be told.
  const gamma = handSp('gamma', { singleLogout: false });
  const posted: Array<{ url: string; form: URLSearchParams }> = [];

  before(async () => {
    [world, browser] = await Promise.all([startSignInWorld(), launchBrowser()]);
    for (const [name, sp] of [
      ['Alpha', alpha],
      ['Beta', beta],
      ['Gamma', gamma],
    ] as const) {
      const created = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/saml`, {
        name,
        metadataXml: Buffer.from(sp.metadataXml).toString('base64'),
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    user = await world.createUser('sol', { firstName: 'Sol', lastName: 'Logout' });
    const metadata = await (await fetch(`${world.server.url}/saml/v2/metadata`)).text();
    idpCertificate = new X509Certificate(Buffer.from(/<ds:X509Certificate>([^<]+)</.exec(metadata)![1]!, 'base64'));
  });

  after(async () => {
    await browser?.close();
    await world?.stop();
  });

  /** A new browser whose requests to the SPs' hosts are answered here, their POSTed forms kept. */
  async function freshBrowser(): Promise<void> {
    await context?.close();
    context = await browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(10_000);
    await context.route('https://*.example.test/**', async (route) => {
      const request = route.request();
      if (request.method() === 'POST') posted.push({ url: request.url(), form: new URLSearchParams(request.postData() ?? '') });
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>SP</title><p id="at-sp">at the SP</p>' });
    });
    page = await context.newPage();
  }

  /** Signs the browser in at `sp` (with the password when `password`), and answers the SessionIndex its assertion carried. */
  async function signInAt(sp: HandSp, password: boolean, nameIdFormat?: string): Promise<string> {
    const before = posted.length;
    await page.goto(
      `${world.issuer}/saml/v2/SSO?${redirectQuery(authnRequestXml({ issuer: sp.entityId, ...(nameIdFormat ? { nameIdFormat } : {}) }), sp.keyPem)}`,
    );
    if (password) {
      await page.waitForSelector('#loginName');
      await signIn(page, user);
    }
    await page.waitForSelector('#at-sp');
    const answer = posted.slice(before).find((each) => each.url === sp.acs);
    assert.ok(answer, `a response was POSTed to ${sp.acs}`);
    const xml = Buffer.from(answer.form.get('SAMLResponse')!, 'base64').toString();
    return /SessionIndex="([^"]+)"/.exec(xml)![1]!;
  }

  const slo = (query: string) => fetch(`${world.server.url}/saml/v2/SLO?${query}`, { redirect: 'manual' });
  const newId = () => `_${randomBytes(10).toString('hex')}`;

  /** The IdP's signed Redirect-binding message in `location`: its signature checked with the IdP's certificate. */
  function signedMessage(location: string): { endpoint: string; xml: string; relayState: string | null } {
    const raw = location.slice(location.indexOf('?') + 1);
    const at = raw.indexOf('&Signature=');
    const signature = decodeURIComponent(raw.slice(at + '&Signature='.length));
    assert.equal(createVerify('sha256').update(raw.slice(0, at)).verify(idpCertificate.publicKey, signature, 'base64'), true, 'signed by the IdP');
    const params = new URLSearchParams(raw);
    const message = params.get('SAMLRequest') ?? params.get('SAMLResponse')!;
    return {
      endpoint: location.slice(0, location.indexOf('?')),
      xml: inflateRawSync(Buffer.from(message, 'base64')).toString(),
      relayState: params.get('RelayState'),
    };
  }

  /** Starts the logout at `origin` for the session `sessionIndex`: answers the IdP's LogoutRequest to the next app and its RelayState. */
  async function logoutAt(origin: HandSp, sessionIndex: string, relay: string): Promise<{ originRequest: string; next: ReturnType<typeof signedMessage> }> {
    const originRequest = newId();
    const started = await slo(
      redirectQuery(logoutRequestXml({ id: originRequest, issuer: origin.entityId, nameId: user.userId, sessionIndex }), origin.keyPem, relay),
    );
    assert.equal(started.status, 303, await started.text());
    return { originRequest, next: signedMessage(started.headers.get('location')!) };
  }

  async function refused(response: Response, reason: RegExp): Promise<void> {
    const body = await response.text();
    assert.equal(response.status, 400, body.slice(0, 500));
    assert.equal(response.headers.get('location'), null);
    assert.match(body, reason);
  }

  /** `sp`'s LogoutResponse on the Redirect binding, signed with its own key unless `keyPem` says another (null: unsigned). */
  const answerQuery = (
    sp: HandSp,
    fields: { inResponseTo: string; status?: string; destination?: string },
    relayState: string | undefined,
    keyPem: string | null = sp.keyPem,
  ) => redirectQuery(logoutResponseXml({ id: newId(), issuer: sp.entityId, ...fields }), keyPem ?? undefined, relayState, 'SAMLResponse');

  test('a logout at one SP asks the next app; stray, forged and stale answers are refused without ending the logout; the right one finishes it, PartialLogout for the app that cannot be told', async () => {
    await freshBrowser();
    try {
      const session = await signInAt(alpha, true);
      assert.equal(await signInAt(beta, false), session, 'one browser session, one SessionIndex');
      await signInAt(gamma, false);

      const { originRequest, next } = await logoutAt(alpha, session, 'alpha-relay');
      assert.equal(next.endpoint, 'https://beta.example.test/slo');
      assert.match(next.xml, /^<samlp:LogoutRequest /);
      assert.match(next.xml, /Destination="https:\/\/beta\.example\.test\/slo"/);
      assert.match(next.xml, new RegExp(`<saml:Issuer>${world.issuer}/saml/v2/metadata</saml:Issuer>`));
      assert.match(next.xml, new RegExp(`<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${user.userId}</saml:NameID>`));
      assert.match(next.xml, new RegExp(`<samlp:SessionIndex>${session}</samlp:SessionIndex>`));
      const waitingFor = /ID="([^"]+)"/.exec(next.xml)![1]!;
      const chain = next.relayState!;
      assert.match(chain, /^[\w-]{32}$/);

      // Each of these is refused, and the logout still waits for beta's answer.
      const stranger = opensslKeyPair('logout-stranger');
      await refused(await slo(answerQuery(beta, { inResponseTo: waitingFor }, chain, null)), /signs its messages, and this one is not signed/);
      await refused(await slo(answerQuery(beta, { inResponseTo: waitingFor }, chain, stranger.keyPem)), /does not verify/);
      await refused(await slo(answerQuery(alpha, { inResponseTo: waitingFor }, chain)), /does not answer the logout under way/);
      await refused(await slo(answerQuery(gamma, { inResponseTo: waitingFor }, chain)), /does not answer the logout under way/);
      await refused(await slo(answerQuery(beta, { inResponseTo: originRequest }, chain)), /does not answer the logout under way/);
      await refused(await slo(answerQuery(beta, { inResponseTo: waitingFor }, 'A'.repeat(32))), /expired or was already finished/);
      await refused(await slo(answerQuery(beta, { inResponseTo: waitingFor }, undefined)), /expired or was already finished/);
      await refused(await slo(answerQuery(beta, { inResponseTo: waitingFor, destination: 'https://elsewhere.example.test/slo' }, chain)), /another endpoint/);
      const noAnswer = logoutResponseXml({ id: newId(), issuer: beta.entityId, inResponseTo: waitingFor }).replace(/ InResponseTo="[^"]+"/, '');
      await refused(await slo(redirectQuery(noAnswer, beta.keyPem, chain, 'SAMLResponse')), /answers no request/);
      await refused(await slo('SAMLResponse=not-base64!'), /base64|DEFLATE/);
      const repeated = answerQuery(beta, { inResponseTo: waitingFor }, chain);
      await refused(await slo(`${repeated}&${repeated.slice(0, repeated.indexOf('&'))}`), /SAMLResponse is repeated/);
      const oversized = logoutResponseXml({ id: newId(), issuer: beta.entityId, inResponseTo: waitingFor }).replace(
        '<samlp:Status>',
        `<samlp:Extensions>${'a'.repeat(70_000)}</samlp:Extensions><samlp:Status>`,
      );
      await refused(await slo(redirectQuery(oversized, beta.keyPem, chain, 'SAMLResponse')), /too large/);
      const posted = await fetch(`${world.server.url}/saml/v2/SLO`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ SAMLResponse: Buffer.from(oversized).toString('base64'), RelayState: chain }),
      });
      await refused(posted, /too large|larger than 65536 bytes/);
      await refused(await slo(`SAMLResponse=${encodeURIComponent(Buffer.from('<samlp:LogoutResponse').toString('base64'))}`), /DEFLATE|not well-formed/);

      const answer = answerQuery(beta, { inResponseTo: waitingFor, destination: `${world.issuer}/saml/v2/SLO` }, chain);
      const finished = await slo(answer);
      assert.equal(finished.status, 303, await finished.text());
      const toOrigin = signedMessage(finished.headers.get('location')!);
      assert.equal(toOrigin.endpoint, 'https://alpha.example.test/slo');
      assert.equal(toOrigin.relayState, 'alpha-relay');
      assert.match(toOrigin.xml, new RegExp(`^<samlp:LogoutResponse [^>]*InResponseTo="${originRequest}"`));
      // Gamma has no SingleLogoutService: not every participant could be told.
      assert.match(
        toOrigin.xml,
        new RegExp(`<samlp:StatusCode Value="${STATUS}Responder"><samlp:StatusCode Value="${STATUS}PartialLogout"/></samlp:StatusCode>`),
      );
      await refused(await slo(answer), /replay/);

      // The IdP session is over: the next sign-in asks for the password.
      await page.goto(`${world.issuer}/saml/v2/SSO?${redirectQuery(authnRequestXml({ issuer: beta.entityId }), beta.keyPem)}`);
      await page.waitForSelector('#loginName');
    } catch (err) {
      await screenshot(page, 'saml-logout-chain');
      throw err;
    }
  });

  test('the IdP repeats to each app the NameID it was given (the email format included); an app that answers with a failure status makes the logout partial', async () => {
    await freshBrowser();
    try {
      const session = await signInAt(alpha, true, EMAIL_FORMAT);
      await signInAt(beta, false);
      const { originRequest, next } = await logoutAt(beta, session, 'beta-relay');
      assert.equal(next.endpoint, 'https://alpha.example.test/slo');
      assert.match(next.xml, new RegExp(`<saml:NameID Format="${EMAIL_FORMAT}">sol@acme\\.example\\.test</saml:NameID>`));
      const waitingFor = /ID="([^"]+)"/.exec(next.xml)![1]!;
      const finished = await slo(answerQuery(alpha, { inResponseTo: waitingFor, status: `${STATUS}Requester` }, next.relayState!));
      assert.equal(finished.status, 303, await finished.text());
      const toOrigin = signedMessage(finished.headers.get('location')!);
      assert.equal(toOrigin.endpoint, 'https://beta.example.test/slo');
      assert.match(toOrigin.xml, new RegExp(`InResponseTo="${originRequest}"`));
      assert.match(toOrigin.xml, /status:PartialLogout/);
    } catch (err) {
      await screenshot(page, 'saml-logout-chain-partial');
      throw err;
    }
  });

  test('a logout at an SP whose session has no other app answers it Success at once', async () => {
    await freshBrowser();
    const session = await signInAt(beta, true);
    const request = newId();
    const answered = await slo(
      redirectQuery(logoutRequestXml({ id: request, issuer: beta.entityId, nameId: user.userId, sessionIndex: session }), beta.keyPem),
    );
    assert.equal(answered.status, 303, await answered.text());
    const toOrigin = signedMessage(answered.headers.get('location')!);
    assert.equal(toOrigin.endpoint, 'https://beta.example.test/slo');
    assert.match(
      toOrigin.xml,
      new RegExp(`InResponseTo="${request}"[^>]*><saml:Issuer>[^<]+</saml:Issuer><samlp:Status><samlp:StatusCode Value="${STATUS}Success">`),
    );
    await context.close();
  });
});
