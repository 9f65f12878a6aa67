import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startSignInWorld, type SignInWorld } from '../support/browser.ts';
import { createVerify, X509Certificate } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { authnRequestXml, handSp, logoutRequestXml, opensslKeyPair, redirectQuery, signedPostXml, type HandSp } from './support.ts';

// What the SSO endpoint refuses (docs/saml.md): each request a real SP
// would never send, written by hand. A refusal is the error page (400),
// never a redirect onward and never a response to an SP.

describe('SAML SSO requests', () => {
  let world: SignInWorld;
  let sp: HandSp;
  let unsignedSp: HandSp;
  let appId: string;
  let receiver: Server;
  let receiverHits: string[];
  let receiverUrl: string;

  before(async () => {
    world = await startSignInWorld();
    sp = handSp('signing');
    unsignedSp = handSp('plain', { signsRequests: false });
    for (const each of [sp, unsignedSp]) {
      const created = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/saml`, {
        name: each === sp ? 'Signing SP' : 'Plain SP',
        metadataXml: Buffer.from(each.metadataXml).toString('base64'),
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      if (each === sp) appId = created.body.appId;
    }
    // An attacker's server that an entity in a DTD would make the IdP fetch.
    receiverHits = [];
    receiver = createServer((req, res) => {
      receiverHits.push(req.url ?? '');
      res.end('secret');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/xxe`;
  });

  after(async () => {
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
    await world?.stop();
  });

  const sso = () => `${world.issuer}/saml/v2/SSO`;
  const get = (query: string) => fetch(`${world.server.url}/saml/v2/SSO?${query}`, { redirect: 'manual' });
  const post = (xml: string, relayState?: string) =>
    fetch(`${world.server.url}/saml/v2/SSO`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLRequest: Buffer.from(xml).toString('base64'), ...(relayState ? { RelayState: relayState } : {}) }),
    });

  async function refused(response: Response, reason: RegExp): Promise<void> {
    const body = await response.text();
    assert.equal(response.status, 400, body.slice(0, 500));
    assert.equal(response.headers.get('location'), null);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    assert.match(body, reason);
    assert.doesNotMatch(body, /SAMLResponse/);
  }

  test('a signed Redirect-binding request goes on to the engine authorization as the app’s client, with PKCE', async () => {
    const response = await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, destination: sso() }), sp.keyPem, 'back-to-page-1'));
    assert.equal(response.status, 303, await response.text());
    const next = new URL(response.headers.get('location')!);
    assert.equal(next.pathname, '/oauth/v2/authorize');
    assert.equal(next.searchParams.get('client_id'), `saml:${appId}`);
    assert.equal(next.searchParams.get('redirect_uri'), `${world.issuer}/saml/v2/continue`);
    assert.equal(next.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(next.searchParams.get('response_type'), 'code');
    // The engine knows the client and sends the browser to the login page.
    const engine = await fetch(next.href.replace(world.issuer, world.server.url), { redirect: 'manual' });
    assert.equal(engine.status, 303);
    assert.match(engine.headers.get('location') ?? '', /\/ui\/login\//);
  });

  test('a signed POST-binding request is accepted; the ACS it names must be in the metadata', async () => {
    const ok = authnRequestXml({ id: '_post_ok', issuer: sp.entityId, acs: `${sp.acs}/second` });
    assert.equal((await post(signedPostXml(ok, '_post_ok', sp.keyPem))).status, 303);
    const foreign = authnRequestXml({ id: '_post_foreign', issuer: sp.entityId, acs: 'https://evil.example.test/acs' });
    await refused(await post(signedPostXml(foreign, '_post_foreign', sp.keyPem)), /AssertionConsumerServiceURL is not in/);
  });

  test('an unknown issuer is refused', async () => {
    const stranger = opensslKeyPair('stranger');
    await refused(await get(redirectQuery(authnRequestXml({ issuer: 'https://stranger.example.test/saml' }), stranger.keyPem)), /not a known service provider/);
  });

  test('an ACS URL that is not in the metadata is refused (Redirect binding too)', async () => {
    await refused(
      await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, acs: 'https://evil.example.test/acs' }), sp.keyPem)),
      /AssertionConsumerServiceURL/,
    );
  });

  test('bad signatures are refused: another key, a changed request, none where the metadata promises one', async () => {
    const other = opensslKeyPair('other');
    await refused(await get(redirectQuery(authnRequestXml({ issuer: sp.entityId }), other.keyPem)), /signature does not verify/);
    const signed = redirectQuery(authnRequestXml({ issuer: sp.entityId }), sp.keyPem, 'state-a');
    await refused(await get(signed.replace('RelayState=state-a', 'RelayState=state-b')), /signature does not verify/);
    await refused(await get(redirectQuery(authnRequestXml({ issuer: sp.entityId }), undefined)), /signs its messages, and this one is not signed/);
    const xml = authnRequestXml({ id: '_post_tampered', issuer: sp.entityId });
    const tampered = signedPostXml(xml, '_post_tampered', sp.keyPem).replace('Version="2.0"', 'Version="2.0" ForceAuthn="true"');
    await refused(await post(tampered), /signature does not verify/);
  });

  test('a request signed by a foreign key is refused even for an SP that does not promise signatures', async () => {
    const other = opensslKeyPair('foreign');
    await refused(await get(redirectQuery(authnRequestXml({ issuer: unsignedSp.entityId }), other.keyPem)), /signature does not verify/);
    assert.equal((await get(redirectQuery(authnRequestXml({ issuer: unsignedSp.entityId }), undefined))).status, 303);
  });

  test('signature wrapping: a signed request wrapped in a forged one is refused', async () => {
    const original = signedPostXml(authnRequestXml({ id: '_genuine', issuer: sp.entityId }), '_genuine', sp.keyPem);
    const body = original.replace(/^<\?xml[^>]*>/, '');
    const wrapped = authnRequestXml({
      id: '_forged',
      issuer: sp.entityId,
      acs: 'https://evil.example.test/acs',
      inner: `<samlp:Extensions>${body}</samlp:Extensions>`,
    });
    await refused(await post(wrapped), /signs its messages, and this one is not signed/);
    // The signature moved to the forged root still references the genuine request.
    const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(original)![0];
    const moved = authnRequestXml({
      id: '_forged2',
      issuer: sp.entityId,
      acs: 'https://evil.example.test/acs',
      inner: `${signature}<samlp:Extensions>${body.replace(signature, '')}</samlp:Extensions>`,
    });
    await refused(await post(moved), /reference the message itself/);
  });

  test('a replayed request is refused', async () => {
    const query = redirectQuery(authnRequestXml({ id: '_once', issuer: sp.entityId }), sp.keyPem);
    assert.equal((await get(query)).status, 303);
    await refused(await get(query), /already used \(replay\)/);
  });

  test('DTDs and external entities are refused before parsing, and nothing is fetched', async () => {
    const prolog = `<?xml version="1.0"?><!DOCTYPE samlp:AuthnRequest [<!ENTITY xxe SYSTEM "${receiverUrl}">]>`;
    const xml = authnRequestXml({ issuer: sp.entityId, prolog, inner: '<samlp:Extensions>&xxe;</samlp:Extensions>' });
    await refused(await get(redirectQuery(xml, sp.keyPem)), /DTD/);
    await refused(
      await post(signedPostXml(authnRequestXml({ id: '_dtd', issuer: sp.entityId }), '_dtd', sp.keyPem).replace('<samlp:', `${prolog}<samlp:`)),
      /DTD/,
    );
    const metadata = sp.metadataXml.replace('<?xml version="1.0"?>', prolog.replace('samlp:AuthnRequest', 'md:EntityDescriptor'));
    const upload = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/saml`, {
      name: 'XXE',
      metadataXml: Buffer.from(metadata).toString('base64'),
    });
    assert.equal(upload.status, 400);
    assert.equal(upload.body.details[0].fieldViolations[0].field, 'metadataXml');
    assert.deepEqual(receiverHits, []);
  });

  test('comments, processing instructions, deep nesting, stale or misdirected requests are refused', async () => {
    await refused(await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, inner: '<!-- x -->' }), sp.keyPem)), /comments/);
    await refused(await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, inner: '<?evil x?>' }), sp.keyPem)), /processing instructions/);
    const deep = `${'<samlp:Extensions>'.repeat(40)}${'</samlp:Extensions>'.repeat(40)}`;
    await refused(await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, inner: deep }), sp.keyPem)), /nested deeper/);
    const old = new Date(Date.now() - 3600_000);
    await refused(await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, issueInstant: old }), sp.keyPem)), /expired/);
    await refused(
      await get(redirectQuery(authnRequestXml({ issuer: sp.entityId, destination: 'https://elsewhere.example.test/sso' }), sp.keyPem)),
      /Destination/,
    );
  });

  test('malformed messages get the error page, never a 5xx', async () => {
    const cases = [
      '',
      'SAMLRequest=',
      'SAMLRequest=%%%',
      'SAMLRequest=bm90IGRlZmxhdGVk',
      `SAMLRequest=${encodeURIComponent(Buffer.from('x'.repeat(10)).toString('base64'))}&SAMLRequest=a`,
      `${redirectQuery(authnRequestXml({ issuer: sp.entityId }), sp.keyPem)}&RelayState=${'r'.repeat(3000)}`,
      `SAMLRequest=${encodeURIComponent(Buffer.from('<a>').toString('base64'))}%00`,
    ];
    for (const query of cases) {
      const response = await get(query);
      assert.equal(response.status, 400, `${query.slice(0, 80)} → ${response.status}`);
    }
    const huge = await fetch(`${world.server.url}/saml/v2/SSO`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `SAMLRequest=${'A'.repeat(200_000)}`,
    });
    assert.equal(huge.status, 400);
    const notXml = await post('this is not XML');
    assert.equal(notXml.status, 400);
  });

  test('a passive request of a browser that is not signed in is answered NoPassive, posted to the ACS', async () => {
    const query = redirectQuery(authnRequestXml({ id: '_passive', issuer: sp.entityId, attributes: ' IsPassive="true"' }), sp.keyPem, 'relay-1');
    const toEngine = await get(query);
    assert.equal(toEngine.status, 303);
    const authorize = new URL(toEngine.headers.get('location')!);
    assert.equal(authorize.searchParams.get('prompt'), 'none');
    const back = await fetch(authorize.href.replace(world.issuer, world.server.url), { redirect: 'manual' });
    const continuation = new URL(back.headers.get('location')!);
    assert.equal(continuation.pathname, '/saml/v2/continue');
    assert.equal(continuation.searchParams.get('error'), 'login_required');
    const form = await fetch(continuation.href.replace(world.issuer, world.server.url));
    assert.equal(form.status, 200);
    const page = await form.text();
    assert.match(page, new RegExp(`action="${sp.acs}"`));
    assert.match(page, /name="RelayState" value="relay-1"/);
    assert.doesNotMatch(page, /<script>/);
    const response = Buffer.from(/name="SAMLResponse" value="([^"]+)"/.exec(page)![1]!, 'base64').toString();
    assert.match(response, /InResponseTo="_passive"/);
    assert.match(
      response,
      /StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:NoPassive"/,
    );
    assert.doesNotMatch(response, /Assertion/);
    // The waiting request is taken once.
    assert.equal((await fetch(continuation.href.replace(world.issuer, world.server.url))).status, 400);
  });

  test('a signed LogoutRequest is answered with a LogoutResponse signed on the Redirect binding; an unknown or replayed one is refused', async () => {
    const xml = logoutRequestXml({ id: '_logout1', issuer: sp.entityId, nameId: 'nobody', sessionIndex: 'no-such-session' });
    const slo = (query: string) => fetch(`${world.server.url}/saml/v2/SLO?${query}`, { redirect: 'manual' });
    const query = redirectQuery(xml, sp.keyPem, 'after-logout');
    const answered = await slo(query);
    assert.equal(answered.status, 303, await answered.text());
    const location = answered.headers.get('location')!;
    assert.ok(location.startsWith('https://signing.example.test/slo?SAMLResponse='), location);
    const raw = location.slice(location.indexOf('?') + 1);
    const signatureAt = raw.indexOf('&Signature=');
    const octets = raw.slice(0, signatureAt);
    const signature = decodeURIComponent(raw.slice(signatureAt + '&Signature='.length));
    const metadata = await (await fetch(`${world.server.url}/saml/v2/metadata`)).text();
    const certificate = new X509Certificate(Buffer.from(/<ds:X509Certificate>([^<]+)</.exec(metadata)![1]!, 'base64'));
    assert.equal(createVerify('sha256').update(octets).verify(certificate.publicKey, signature, 'base64'), true);
    const params = new URLSearchParams(raw);
    assert.equal(params.get('RelayState'), 'after-logout');
    const response = inflateRawSync(Buffer.from(params.get('SAMLResponse')!, 'base64')).toString();
    assert.match(response, /<samlp:LogoutResponse [^>]*InResponseTo="_logout1"/);
    assert.match(response, /status:Success/);
    await refused(await slo(query), /replay/);
    const stranger = opensslKeyPair('stranger-logout');
    const unknown = logoutRequestXml({ id: '_logout2', issuer: 'https://stranger.example.test/saml', nameId: 'x', sessionIndex: 'y' });
    await refused(await slo(redirectQuery(unknown, stranger.keyPem)), /not a known service provider/);
  });

  test('a LogoutRequest on the POST binding is checked as one on the Redirect binding: signed it is answered; unsigned, forged or signed by another key it is refused', async () => {
    const sloPost = (xml: string) =>
      fetch(`${world.server.url}/saml/v2/SLO`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ SAMLRequest: Buffer.from(xml).toString('base64'), RelayState: 'posted' }),
      });
    const sloGet = (query: string) => fetch(`${world.server.url}/saml/v2/SLO?${query}`, { redirect: 'manual' });
    const request = (id: string) => logoutRequestXml({ id, issuer: sp.entityId, nameId: 'nobody', sessionIndex: 'no-such-session' });
    const answered = await sloPost(signedPostXml(request('_postlogout1'), '_postlogout1', sp.keyPem));
    assert.equal(answered.status, 303, await answered.text());
    const location = new URL(answered.headers.get('location')!);
    assert.equal(location.origin + location.pathname, 'https://signing.example.test/slo');
    assert.equal(location.searchParams.get('RelayState'), 'posted');
    assert.ok(location.searchParams.get('Signature'));
    assert.match(inflateRawSync(Buffer.from(location.searchParams.get('SAMLResponse')!, 'base64')).toString(), /InResponseTo="_postlogout1"/);

    await refused(await sloPost(request('_postlogout2')), /signs its messages, and this one is not signed/);
    await refused(await sloGet(redirectQuery(request('_postlogout3'), undefined)), /signs its messages, and this one is not signed/);
    const stranger = opensslKeyPair('forger');
    await refused(await sloPost(signedPostXml(request('_postlogout4'), '_postlogout4', stranger.keyPem)), /does not verify/);
    await refused(await sloGet(redirectQuery(request('_postlogout5'), stranger.keyPem)), /does not verify/);
    // Signed, then its NameID changed: the digest no longer matches.
    const tampered = signedPostXml(request('_postlogout6'), '_postlogout6', sp.keyPem).replace('<saml:NameID>nobody<', '<saml:NameID>somebody<');
    await refused(await sloPost(tampered), /does not verify/);
    await refused(await sloPost('<samlp:LogoutRequest'), /not well-formed/);
  });

  test('a continuation without a waiting request is refused', async () => {
    const response = await fetch(`${world.server.url}/saml/v2/continue?state=${'a'.repeat(32)}&code=abc`);
    await refused(response, /expired or was already finished/);
  });
});
