import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { inflateRawSync } from 'node:zlib';
import type * as client from 'openid-client';
import type { Browser, Request } from 'playwright-core';
import { request } from '../support/api.ts';
import { assertInvalid } from '../support/assertions.ts';
import {
  confidentialAppFor,
  launchBrowser,
  needsChromium,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  rpConfig,
} from '../support/browser.ts';
import { interactionPage } from '../support/login-form.ts';
import { freePort } from '../support/server.ts';
import { needsSimpleSamlPhp, prepareSimpleSamlPhp, type SimpleSamlPhp } from '../support/simplesamlphp.ts';
import { opensslKeyPair } from '../saml/support.ts';
import { signInWith } from './support.ts';
import { UNDECRYPTABLE } from '../../src/domain/saml/sp-response.ts';
import {
  assertionXml,
  type Crafted,
  type Encryption,
  encryptedAssertion,
  flipBit,
  newId,
  nowPlus,
  RSA_SHA256,
  responseXml,
  signed,
} from '../support/saml-responses.ts';

// docs/idps.md, SAML: the saml kind through the API, a real sign-in in
// Chromium through Debian's SimpleSAMLphp as the IdP (the test starts it
// on a private port), plain and with encrypted assertions, the IdP
// metadata read by URL once per lifetime, and responses written by hand
// and posted to the ACS for what a real IdP never sends.

const ALICE = {
  userName: 'alice',
  password: 'Alice-Idp-Pass1',
  attributes: {
    UserName: ['alice'],
    'urn:oid:0.9.2342.19200300.100.1.3': ['alice@idp.example.test'],
    FirstName: ['Alice'],
    SurName: ['Idp'],
  },
};
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('SAML identity providers with SimpleSAMLphp as the IdP', { skip: needsChromium || needsSimpleSamlPhp }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let idp: SimpleSamlPhp;
  let config: client.Configuration;
  let clientId: string;
  let idpId: string;
  let sp: { entityId: string; acs: string };
  let spCertificate: string;

  const rowCount = async (sql: string) => Number((await world.server.running.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${sql}`)).rows[0]!.n);

  before(async () => {
    [world, rp, browser, idp] = await Promise.all([
      startSignInWorld({}, { captureLog: true }),
      startRelyingParty(),
      launchBrowser(),
      prepareSimpleSamlPhp([ALICE]),
    ]);
    const app = await world.createApp({ name: 'Shop web', ...confidentialAppFor(rp) });
    clientId = app.clientId;
    config = await rpConfig(world, app);
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await idp?.stop();
    await world?.stop();
  });

  test('refuses bad bodies naming the field, stores nothing; creates at the instance and in an org; the SP metadata carries the generated key', async () => {
    const post = (body: Record<string, unknown>) => world.server.api('POST', '/admin/v1/idps/saml', { body: { name: 'IdP', ...body } });
    const before = await rowCount('identity_providers');
    const idpMetadata = await (async () => {
      await idp.start({ entityId: 'http://localhost:1/placeholder', acs: 'http://localhost:1/acs', certificate: idp.certificate, signsRequests: false });
      return (await fetch(idp.metadataUrl)).text();
    })();
    assertInvalid(await post({}), ['metadataXml']);
    assertInvalid(await post({ metadataXml: b64('not xml at all') }), ['metadataXml']);
    assertInvalid(await post({ metadataXml: '%%%' }), ['metadataXml']);
    assertInvalid(await post({ metadataXml: b64(`<!DOCTYPE x [<!ENTITY e "e">]>${idpMetadata.replace(/^<\?xml[^>]*>/, '')}`) }), ['metadataXml']);
    const spOnly = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example.test"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>`;
    const noSso = await post({ metadataXml: b64(spOnly) });
    assertInvalid(noSso, ['metadataXml']);
    assert.match(noSso.text, /IDPSSODescriptor/);
    const noCert = await post({ metadataXml: b64(idpMetadata.replace(/<md:KeyDescriptor[\s\S]*?<\/md:KeyDescriptor>/g, '')) });
    assertInvalid(noCert, ['metadataXml']);
    assert.match(noCert.text, /signing certificate/);
    assertInvalid(await post({ metadataXml: b64(idpMetadata), metadataUrl: idp.metadataUrl }), ['metadataUrl']);
    assertInvalid(await post({ metadataUrl: 'ftp://idp.example.test/metadata' }), ['metadataUrl']);
    assertInvalid(await post({ metadataUrl: `http://127.0.0.1:${await freePort()}/metadata` }), ['metadataUrl']);
    assertInvalid(await post({ metadataXml: b64(idpMetadata), binding: 'SAML_BINDING_ARTIFACT' }), ['binding']);
    assertInvalid(await post({ metadataXml: b64(idpMetadata), nameIdFormat: 'persistent' }), ['nameIdFormat']);
    assertInvalid(await post({ metadataXml: b64(idpMetadata), withSignedRequest: 'yes' }), ['withSignedRequest']);
    assertInvalid(await post({ metadataXml: b64(idpMetadata), clientSecret: 'x' }), ['clientSecret']);
    // An org's provider may not fetch metadata from loopback; given as XML it needs no fetch.
    const orgUrl = await world.api('POST', '/management/v1/idps/saml', { name: 'Org IdP', metadataUrl: idp.metadataUrl });
    assert.equal(orgUrl.status, 400, JSON.stringify(orgUrl.body));
    assert.equal(await rowCount('identity_providers'), before, 'nothing stored');
    const orgXml = await world.api('POST', '/management/v1/idps/saml', { name: 'Org IdP', metadataXml: b64(idpMetadata) });
    assert.equal(orgXml.status, 200, JSON.stringify(orgXml.body));

    const created = await post({
      name: 'SimpleSAMLphp',
      metadataUrl: idp.metadataUrl,
      withSignedRequest: true,
      providerOptions: { isAutoCreation: true },
    });
    assert.equal(created.status, 200, created.text);
    idpId = created.body.id;
    const got = await world.server.api('GET', `/admin/v1/idps/${idpId}`);
    assert.equal(got.body.idp.type, 'IDP_TYPE_SAML');
    assert.deepEqual(got.body.idp.config, {
      metadataUrl: idp.metadataUrl,
      binding: 'SAML_BINDING_REDIRECT',
      withSignedRequest: true,
      nameIdFormat: 'SAML_NAME_ID_FORMAT_PERSISTENT',
      transientMappingAttributeName: '',
    });
    const stored = await world.server.running.db.query<{ secret_sealed: Buffer }>('SELECT secret_sealed FROM identity_providers WHERE id = $1', [idpId]);
    assert.ok(!Buffer.from(stored.rows[0]!.secret_sealed).toString('latin1').includes('"kty"'), 'the signing key is sealed at rest');
    // A change keeps the key: the certificate in the metadata stays the same.
    const metadataUrl = `${world.issuer}/idps/${idpId}/saml/metadata`;
    const first = await (await fetch(metadataUrl)).text();
    const changed = await world.server.api('PUT', `/admin/v1/idps/saml/${idpId}`, {
      body: { name: 'SimpleSAMLphp', metadataUrl: idp.metadataUrl, withSignedRequest: true, providerOptions: { isAutoCreation: true } },
    });
    assert.equal(changed.status, 200, changed.text);
    const metadata = await fetch(metadataUrl);
    assert.equal(metadata.status, 200);
    assert.match(metadata.headers.get('content-type') ?? '', /samlmetadata\+xml/);
    const xml = await metadata.text();
    assert.equal(xml, first);
    sp = { entityId: metadataUrl, acs: `${world.issuer}/idps/${idpId}/saml/acs` };
    assert.ok(xml.includes(`entityID="${sp.entityId}"`));
    assert.ok(xml.includes(`Location="${sp.acs}"`));
    assert.ok(xml.includes('AuthnRequestsSigned="true"'));
    assert.ok(xml.includes('<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>'));
    spCertificate = /<ds:X509Certificate>([^<]+)</.exec(xml)![1]!;
    assert.ok(
      xml.includes(
        `<md:KeyDescriptor use="encryption"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${spCertificate}<`,
      ),
    );
    assert.equal((await fetch(`${world.issuer}/idps/${orgXml.body.id}x/saml/metadata`)).status, 404);

    // SimpleSAMLphp now knows our SP, and checks its AuthnRequests' signatures with that certificate.
    await idp.stop();
    idp = await prepareSimpleSamlPhp([ALICE]);
    const again = await world.server.api('PUT', `/admin/v1/idps/saml/${idpId}`, {
      body: { name: 'SimpleSAMLphp', metadataUrl: idp.metadataUrl, withSignedRequest: true, providerOptions: { isAutoCreation: true } },
    });
    assert.equal(again.status, 400, 'the new IdP is not up yet');
    await idp.start({ ...sp, certificate: spCertificate, signsRequests: true });
    const moved = await world.server.api('PUT', `/admin/v1/idps/saml/${idpId}`, {
      body: { name: 'SimpleSAMLphp', metadataUrl: idp.metadataUrl, withSignedRequest: true, providerOptions: { isAutoCreation: true } },
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal((await world.api('POST', '/management/v1/policies/login/idps', { idpId })).status, 200);
  });

  /** Signs alice in through the provider's button and SimpleSAMLphp's form; answers the ID token's claims and the messages on the way. */
  async function signInThroughIdp(): Promise<{ claims: client.IDToken; toIdp: Request[]; toAcs: string[] }> {
    const context = await browser.newContext({ locale: 'en-US' });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const toIdp: Request[] = [];
      const toAcs: string[] = [];
      page.on('request', (r) => {
        if (r.url().startsWith(`${idp.origin}/saml2/idp/SSOService.php`)) toIdp.push(r);
        if (r.url() === sp.acs) toAcs.push(Buffer.from(new URLSearchParams(r.postData() ?? '').get('SAMLResponse') ?? '', 'base64').toString('utf8'));
      });
      const started = await signInWith(page, config, rp, 'Sign in with SimpleSAMLphp');
      await page.waitForURL((u) => u.href.startsWith(idp.origin));
      await page.fill('input[name=username]', ALICE.userName);
      await page.fill('input[name=password]', ALICE.password);
      await page.locator('button[type=submit], input[type=submit]').first().click();
      return { claims: (await started.finish()) as client.IDToken, toIdp, toAcs };
    } finally {
      await context.close();
    }
  }

  const aliceLinks = () =>
    world.server.running.db.query<{ id: string; user_name: string; first_name: string; last_name: string; email: string }>(
      'SELECT u.id, u.user_name, u.first_name, u.last_name, u.email FROM users u JOIN user_idp_links l ON l.user_id = u.id WHERE l.idp_id = $1 AND l.provided_user_id = $2',
      [idpId, 'alice'],
    );

  test('signs in in Chromium: the button, a signed AuthnRequest (Redirect binding), the IdP login form, back at the ACS; the user is created from the attributes, amr fed', async () => {
    const { claims, toIdp, toAcs } = await signInThroughIdp();
    assert.deepEqual(claims.amr, ['fed']);
    assert.equal(toIdp[0]?.method(), 'GET');
    assert.equal(new URL(toIdp[0]!.url()).searchParams.get('SigAlg'), RSA_SHA256);
    assert.match(toAcs[0] ?? '', /nameid-format:persistent">alice</);
    const user = await aliceLinks();
    assert.equal(user.rows.length, 1, 'created and linked to the NameID');
    assert.equal(claims.sub, user.rows[0]!.id);
    assert.deepEqual(
      { userName: user.rows[0]!.user_name, first: user.rows[0]!.first_name, last: user.rows[0]!.last_name, email: user.rows[0]!.email },
      { userName: 'alice', first: 'Alice', last: 'Idp', email: 'alice@idp.example.test' },
    );
  });

  /** A login that left for the IdP (without a browser): the RelayState and the ID of the AuthnRequest sent. */
  async function pendingLogin(): Promise<{ relayState: string; requestId: string }> {
    const interaction = await interactionPage(world.server.url, clientId, {}, rp.callback);
    const started = await request(`${interaction.action}/idp/${idpId}`, {
      method: 'POST',
      headers: { cookie: interaction.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: interaction.csrf }).toString(),
    });
    assert.equal(started.status, 303, started.text.slice(0, 300));
    const location = new URL(started.headers.get('location')!);
    assert.ok(location.href.startsWith(idp.origin));
    assert.equal(location.searchParams.get('SigAlg'), RSA_SHA256);
    const xml = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
    return { relayState: location.searchParams.get('RelayState')!, requestId: /ID="([^"]+)"/.exec(xml)![1]! };
  }

  /** The reason the server logged for the last refused response. */
  const lastFailure = () =>
    world.server
      .logText()
      .split('\n')
      .filter((line) => line.includes('external_login_failed'))
      .at(-1) ?? '';

  const postToAcs = (relayState: string, xml: string) =>
    request(sp.acs, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'de' },
      body: new URLSearchParams({ SAMLResponse: b64(xml), RelayState: relayState }).toString(),
    });

  test('the ACS refuses what a real IdP never sends, with the failure page, and nothing is created', async () => {
    const usersBefore = await rowCount('users');
    const linksBefore = await rowCount('user_idp_links');
    const base = { acs: sp.acs, audience: sp.entityId, issuer: idp.entityId };
    const signedAssertion = (c: Crafted) => {
      const id = c.assertionId ?? newId();
      return signed(assertionXml({ ...c, assertionId: id }), id, idp.keyPem);
    };
    const other = opensslKeyPair('other-idp');
    const cases: Array<[string, RegExp, (requestId: string) => string]> = [
      [
        'unsigned',
        /neither the response nor the assertion is signed/,
        (requestId) => responseXml({ ...base, requestId }, assertionXml({ ...base, requestId })),
      ],
      [
        'signed by another key',
        /does not verify/,
        (requestId) => {
          const id = newId();
          return responseXml({ ...base, requestId }, signed(assertionXml({ ...base, requestId, assertionId: id }), id, other.keyPem));
        },
      ],
      [
        'for another audience',
        /another audience/,
        (requestId) => responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId, audience: 'https://other-sp.example.test' })),
      ],
      [
        'to another recipient',
        /Recipient/,
        (requestId) => responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId, acs: 'https://other-sp.example.test/acs' })),
      ],
      [
        'answering another request',
        /answers another request/,
        (requestId) => responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId: `${requestId}x` })),
      ],
      ['expired', /expired/, (requestId) => responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId, notOnOrAfter: nowPlus(-600) }))],
      ['with a DTD', /DTD/, (requestId) => `<!DOCTYPE r [<!ENTITY e "x">]>${responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId }))}`],
      [
        'wrapped: an evil assertion carrying the signature of a good one hidden inside it',
        /reference the message itself/,
        (requestId) => {
          const good = signedAssertion({ ...base, requestId, nameId: 'alice' });
          const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(good)![0];
          const evil = assertionXml({ ...base, requestId, nameId: 'mallory' })
            .replace(/(<saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${signature}`)
            .replace('</saml:Conditions>', `</saml:Conditions><saml:Advice>${good.replace(signature, '')}</saml:Advice>`);
          return responseXml({ ...base, requestId }, evil);
        },
      ],
      [
        'wrapped: a second assertion beside the signed one',
        /exactly one assertion/,
        (requestId) =>
          responseXml(
            { ...base, requestId },
            `${assertionXml({ ...base, requestId, nameId: 'mallory' })}${signedAssertion({ ...base, requestId, nameId: 'alice' })}`,
          ),
      ],
      [
        'oversized',
        /larger than/,
        (requestId) =>
          responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId })).replace(
            '</samlp:Response>',
            `<!--${'x'.repeat(70_000)}--></samlp:Response>`,
          ),
      ],
    ];
    for (const [name, reason, make] of cases) {
      const { relayState, requestId } = await pendingLogin();
      const refused = await postToAcs(relayState, make(requestId));
      assert.equal(refused.status, 400, `${name}: ${refused.text.slice(0, 300)}`);
      assert.match(refused.text, /Die Anmeldung mit SimpleSAMLphp hat nicht funktioniert/, name);
      assert.match(lastFailure(), reason, name);
    }

    // A good response is taken once: the same again, or with a RelayState never sent, is refused.
    const { relayState, requestId } = await pendingLogin();
    const good = responseXml({ ...base, requestId }, signedAssertion({ ...base, requestId, nameId: 'mallory' }));
    const taken = await postToAcs(relayState, good);
    assert.equal(taken.status, 303, lastFailure());
    assert.match(taken.headers.get('location')!, /^\/ui\/login\/[^/]+\/idps\/saml\/return\?token=/);
    assert.equal((await postToAcs(relayState, good)).status, 400, 'replayed');
    const next = await pendingLogin();
    assert.equal((await postToAcs(next.relayState, good)).status, 400, 'replayed against another pending request');
    assert.equal((await postToAcs('x'.repeat(43), good)).status, 400);
    const missing = await request(sp.acs, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'RelayState=x' });
    assert.equal(missing.status, 400);
    const huge = await request(sp.acs, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `SAMLResponse=${'A'.repeat(200_000)}`,
    });
    assert.equal(huge.status, 400);

    assert.equal(await rowCount('users'), usersBefore, 'no user created');
    assert.equal(await rowCount('user_idp_links'), linksBefore, 'no link created');
    const log = world.server.logText();
    assert.match(log, /external_login_failed/);
    assert.ok(!log.includes('BEGIN PRIVATE KEY') && !log.includes('"kty"'), 'no key logged');
  });

  /** Refuses `xml` at the ACS in German, logs `reason`; answers the response. */
  async function refusedAtAcs(name: string, reason: RegExp | string, make: (requestId: string) => string): Promise<void> {
    const { relayState, requestId } = await pendingLogin();
    const refused = await postToAcs(relayState, make(requestId));
    assert.equal(refused.status, 400, `${name}: ${refused.text.slice(0, 300)}`);
    assert.match(refused.text, /Die Anmeldung mit SimpleSAMLphp hat nicht funktioniert/, name);
    assert.equal(refused.headers.get('set-cookie'), null, `${name}: no cookie, no session`);
    const logged = lastFailure();
    assert.ok(typeof reason === 'string' ? logged.includes(reason) : reason.test(logged), `${name}: ${logged}`);
  }

  test('encrypted assertions: SimpleSAMLphp encrypts to the provider certificate (AES-128-CBC, RSA-OAEP) and alice signs in; RSA 1.5, an unsigned or DTD-carrying plaintext, a tampered ciphertext, another key or an oversized one are refused, and nobody is created', async () => {
    idp.trust({ ...sp, certificate: spCertificate, signsRequests: true, encryptsAssertions: true });
    try {
      const { claims, toAcs } = await signInThroughIdp();
      assert.match(toAcs[0] ?? '', /<saml:EncryptedAssertion>/);
      assert.match(toAcs[0] ?? '', /Algorithm="http:\/\/www\.w3\.org\/2001\/04\/xmlenc#aes128-cbc"/);
      assert.match(toAcs[0] ?? '', /Algorithm="http:\/\/www\.w3\.org\/2001\/04\/xmlenc#rsa-oaep-mgf1p"/);
      assert.doesNotMatch(toAcs[0] ?? '', /<saml:Assertion[\s>]/, 'nothing of the assertion in the clear');
      assert.equal(claims.sub, (await aliceLinks()).rows[0]!.id, 'alice, the linked user');

      const usersBefore = await rowCount('users');
      const linksBefore = await rowCount('user_idp_links');
      const base = { acs: sp.acs, audience: sp.entityId, issuer: idp.entityId };
      const marker = 'encrypted-mallory-7f3a';
      const encrypted = (
        requestId: string,
        choice: Encryption,
        plaintext?: (signedAssertion: string, unsigned: string) => string,
        certificate = spCertificate,
      ) => {
        const id = newId();
        const unsigned = assertionXml({ ...base, requestId, assertionId: id, nameId: marker });
        const body = (plaintext ?? ((x) => x))(signed(unsigned, id, idp.keyPem), unsigned);
        return responseXml({ ...base, requestId }, encryptedAssertion(body, certificate, choice));
      };
      const other = opensslKeyPair('other-sp');
      await refusedAtAcs('RSA 1.5 key transport', /RSA 1\.5/, (requestId) => encrypted(requestId, { transport: 'rsa-1_5', data: 'aes128-cbc' }));
      await refusedAtAcs('the decrypted assertion unsigned', UNDECRYPTABLE, (requestId) =>
        encrypted(requestId, { data: 'aes128-cbc' }, (_, unsigned) => unsigned),
      );
      await refusedAtAcs('a DTD in the plaintext', UNDECRYPTABLE, (requestId) => encrypted(requestId, {}, (x) => `<!DOCTYPE a [<!ENTITY e "x">]>${x}`));
      await refusedAtAcs('CBC ciphertext tampered', UNDECRYPTABLE, (requestId) => encrypted(requestId, { data: 'aes256-cbc', tamper: flipBit(-20) }));
      await refusedAtAcs('GCM ciphertext tampered', UNDECRYPTABLE, (requestId) => encrypted(requestId, { tamper: flipBit(30) }));
      await refusedAtAcs('encrypted to another key', UNDECRYPTABLE, (requestId) => encrypted(requestId, {}, undefined, other.certificate));
      await refusedAtAcs('oversized', /larger than/, (requestId) =>
        encrypted(requestId, {}).replace(
          /<xenc:CipherValue>([^<]*)<\/xenc:CipherValue><\/xenc:CipherData><\/xenc:EncryptedData>/,
          `<xenc:CipherValue>${'QUFB'.repeat(16_500)}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>`,
        ),
      );
      assert.equal(await rowCount('users'), usersBefore, 'no user created');
      assert.equal(await rowCount('user_idp_links'), linksBefore, 'no link created');

      // The same hand-made encryption, signed inside, is taken: the refusals above are for what they change.
      const { relayState, requestId } = await pendingLogin();
      const taken = await postToAcs(relayState, encrypted(requestId, { data: 'aes256-gcm', transport: 'rsa-oaep', keyPlacement: 'peer' }));
      assert.equal(taken.status, 303, lastFailure());
      const log = world.server.logText();
      assert.ok(!log.includes(marker), 'nothing of a decrypted assertion logged');
      assert.ok(!log.includes('BEGIN PRIVATE KEY') && !log.includes('"kty"') && !log.includes('"d":'), 'no key logged');
    } finally {
      idp.trust({ ...sp, certificate: spCertificate, signsRequests: true });
    }
  });

  test('the IdP metadata URL is read once for several sign-ins, again after the provider changes; unreachable on first use, the button ends on the page saying so', async () => {
    let hits = 0;
    let status = 200;
    const proxy = createServer(async (_req, res) => {
      hits++;
      if (status !== 200) return res.writeHead(status).end();
      const metadata = await (await fetch(idp.metadataUrl)).text();
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml', 'cache-control': 'public, max-age=3600' }).end(metadata);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const metadataUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/metadata`;
    const change = async () => {
      const changed = await world.server.api('PUT', `/admin/v1/idps/saml/${idpId}`, {
        body: { name: 'SimpleSAMLphp', metadataUrl, withSignedRequest: true, providerOptions: { isAutoCreation: true } },
      });
      assert.equal(changed.status, 200, changed.text);
      hits = 0;
    };
    try {
      await change();
      for (let i = 0; i < 2; i++) assert.deepEqual((await signInThroughIdp()).claims.amr, ['fed']);
      assert.equal(hits, 1, 'two sign-ins (two buttons, two ACS posts) read the metadata once');
      await change();
      await signInThroughIdp();
      assert.equal(hits, 1, 'read again once after the change');

      await change();
      status = 503;
      const interaction = await interactionPage(world.server.url, clientId, {}, rp.callback);
      const started = await fetch(`${interaction.action}/idp/${idpId}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: interaction.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: interaction.csrf }).toString(),
      });
      assert.equal(started.status, 502);
      assert.match(await started.text(), /SimpleSAMLphp could not be reached/);
      assert.equal(hits, 1);
      assert.match(lastFailure(), /answered 503/);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      const back = await world.server.api('PUT', `/admin/v1/idps/saml/${idpId}`, {
        body: { name: 'SimpleSAMLphp', metadataUrl: idp.metadataUrl, withSignedRequest: true, providerOptions: { isAutoCreation: true } },
      });
      assert.equal(back.status, 200, back.text);
    }
  });

  test('the POST binding with a signed AuthnRequest and a transient NameID: the mapping attribute names the user, who signs in again as the linked one', async () => {
    const changed = await world.server.api('PUT', `/admin/v1/idps/saml/${idpId}`, {
      body: {
        name: 'SimpleSAMLphp',
        metadataUrl: idp.metadataUrl,
        binding: 'SAML_BINDING_POST',
        withSignedRequest: true,
        nameIdFormat: 'SAML_NAME_ID_FORMAT_TRANSIENT',
        transientMappingAttributeName: 'UserName',
        providerOptions: { isAutoCreation: true },
      },
    });
    assert.equal(changed.status, 200, changed.text);
    const metadata = await (await fetch(sp.entityId)).text();
    assert.ok(metadata.includes('<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:transient</md:NameIDFormat>'));
    idp.trust({ ...sp, certificate: spCertificate, signsRequests: true, nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' });
    const usersBefore = await rowCount('users');
    const { claims, toIdp, toAcs } = await signInThroughIdp();
    assert.deepEqual(claims.amr, ['fed']);
    assert.equal(toIdp[0]?.method(), 'POST');
    const posted = Buffer.from(new URLSearchParams(toIdp[0]!.postData() ?? '').get('SAMLRequest') ?? '', 'base64').toString('utf8');
    assert.match(posted, /<ds:Signature/);
    assert.match(toAcs[0] ?? '', /nameid-format:transient">_/);
    assert.equal(claims.sub, (await aliceLinks()).rows[0]!.id, 'the same user');
    assert.equal(await rowCount('users'), usersBefore, 'nobody new');
  });
});
