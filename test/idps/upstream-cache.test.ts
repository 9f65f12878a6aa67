import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { HttpUpstream } from '../../src/domain/idps.ts';
import type { OutboundFetch } from '../../src/outbound/client.ts';
import { UpstreamError } from '../../src/outbound/upstream.ts';
import { DEFAULT_LIFETIME_MS, lifetimeOf, MAX_LIFETIME_MS, MIN_LIFETIME_MS, upstreamCache } from '../../src/outbound/upstream-cache.ts';
import { opensslKeyPair } from '../saml/support.ts';

// docs/idps.md "Caching": an issuer's discovery document and JWKS, and a
// SAML provider's IdP metadata read by URL, kept per provider, counted at a real upstream on a loopback port; the cache's clock
// is the test's, so that minutes pass at once.

const MINUTE = 60_000;

describe('the discovery, JWKS and SAML metadata cache of external providers', () => {
  let server: Server;
  let issuer: string;
  const hits = { discovery: 0, jwks: 0, saml: 0 };
  const headers = { discovery: 'max-age=600', jwks: '', saml: '' };
  let discoveryBody: 'json' | 'html' = 'json';
  let samlStatus = 200;
  const samlCertificate = opensslKeyPair('cached-idp').certificate;
  let keys: { kid: string; privateKey: CryptoKey; jwk: JWK }[] = [];
  let published: JWK[] = [];
  let clock = 0;

  const newKey = async (kid: string) => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
  };
  const sign = (key: { kid: string; privateKey: CryptoKey }) =>
    new SignJWT({ nonce: 'n' }).setProtectedHeader({ alg: 'RS256', kid: key.kid }).setIssuer(issuer).setSubject('s').setAudience('c').sign(key.privateKey);

  before(async () => {
    keys = [await newKey('k1'), await newKey('k2')];
    server = createServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration') {
        hits.discovery++;
        if (discoveryBody === 'html') {
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.end('<html><body>Maintenance</body></html>');
        }
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': headers.discovery });
        return res.end(
          JSON.stringify({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }),
        );
      }
      if (req.url === '/saml/metadata') {
        hits.saml++;
        res.writeHead(samlStatus, { 'content-type': 'application/samlmetadata+xml', ...(headers.saml ? { 'cache-control': headers.saml } : {}) });
        return res.end(
          `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${issuer}/saml"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${samlCertificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${issuer}/saml/sso"/></md:IDPSSODescriptor></md:EntityDescriptor>`,
        );
      }
      if (req.url === '/jwks') {
        hits.jwks++;
        res.writeHead(200, { 'content-type': 'application/json', ...(headers.jwks ? { 'cache-control': headers.jwks } : {}) });
        return res.end(JSON.stringify({ keys: published }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(() => {
    hits.discovery = 0;
    hits.jwks = 0;
    hits.saml = 0;
    headers.discovery = 'max-age=600';
    headers.jwks = '';
    headers.saml = '';
    samlStatus = 200;
    discoveryBody = 'json';
    published = [keys[0]!.jwk];
    clock = 1_000_000;
  });

  const fetch = globalThis.fetch as OutboundFetch;
  const upstream = (): HttpUpstream => ({ protocol: 'oidc', issuer, clientId: 'c', scopes: ['openid'], isIdTokenMapping: true });
  const idp = { id: 'idp-1', sequence: '1' };

  test('Cache-Control max-age is kept within 1 minute and 24 hours; none is 5 minutes', () => {
    assert.equal(lifetimeOf(null), DEFAULT_LIFETIME_MS);
    assert.equal(lifetimeOf('public'), DEFAULT_LIFETIME_MS);
    assert.equal(lifetimeOf('public, max-age=3600'), 3600_000);
    assert.equal(lifetimeOf('max-age=5'), MIN_LIFETIME_MS);
    assert.equal(lifetimeOf('no-store'), MIN_LIFETIME_MS);
    assert.equal(lifetimeOf('no-cache, max-age=3600'), MIN_LIFETIME_MS);
    assert.equal(lifetimeOf('max-age=99999999'), MAX_LIFETIME_MS);
    assert.equal(lifetimeOf('max-age=abc'), DEFAULT_LIFETIME_MS);
  });

  test('discovery is fetched once for many sign-ins (those arriving together share it) and again when its max-age ran out', async () => {
    const cache = upstreamCache({ now: () => clock });
    const configs = await Promise.all([1, 2, 3].map(() => cache.configuration(idp, upstream(), 'secret', fetch)));
    assert.equal(hits.discovery, 1);
    assert.equal(configs[0]!.serverMetadata().token_endpoint, `${issuer}/token`);
    clock += 9 * MINUTE;
    await cache.configuration(idp, upstream(), 'secret', fetch);
    assert.equal(hits.discovery, 1, 'max-age=600 still holds after 9 minutes');
    clock += MINUTE;
    await cache.configuration(idp, upstream(), 'secret', fetch);
    assert.equal(hits.discovery, 2, 'refetched after 10 minutes');
    await cache.configuration({ ...idp, sequence: '2' }, upstream(), 'secret', fetch);
    assert.equal(hits.discovery, 3, 'a changed provider is discovered afresh');
    await cache.configuration({ id: 'idp-2', sequence: '1' }, upstream(), 'secret', fetch);
    assert.equal(hits.discovery, 4, 'each provider has its own entry');
  });

  test('an answer that is no discovery document fails as invalid and is not kept: the next sign-in asks again', async () => {
    const cache = upstreamCache({ now: () => clock });
    discoveryBody = 'html';
    await assert.rejects(cache.configuration(idp, upstream(), 'secret', fetch), (err: unknown) => err instanceof UpstreamError && err.reason === 'invalid');
    discoveryBody = 'json';
    await cache.configuration(idp, upstream(), 'secret', fetch);
    assert.equal(hits.discovery, 2);
  });

  test("the JWKS is fetched once; a token of an unknown kid refetches it at most once a minute, and the issuer's new key is then taken", async () => {
    const cache = upstreamCache({ now: () => clock });
    const config = await cache.configuration(idp, upstream(), 'secret', fetch);
    const check = cache.signatureCheck(idp, config, fetch);
    for (let i = 0; i < 3; i++) await check(await sign(keys[0]!));
    assert.equal(hits.jwks, 1);

    // The issuer rotates to k2 within the minute: refused without a fetch.
    published = [keys[0]!.jwk, keys[1]!.jwk];
    const rotated = await sign(keys[1]!);
    await assert.rejects(check(rotated), (err: unknown) => err instanceof UpstreamError && err.reason === 'invalid');
    assert.equal(hits.jwks, 1, 'no refetch within a minute of the last');
    clock += MINUTE;
    await Promise.all([check(rotated), check(rotated)]);
    assert.equal(hits.jwks, 2, 'one refetch for the new kid, shared by sign-ins arriving together');

    // A kid nobody publishes: one more refetch a minute later, not one per token.
    const stranger = await sign(await newKey('k9'));
    await assert.rejects(check(stranger));
    assert.equal(hits.jwks, 2);
    clock += MINUTE;
    await assert.rejects(check(stranger));
    await assert.rejects(check(stranger));
    assert.equal(hits.jwks, 3);
    await check(rotated);

    // A token signed by another key under a published kid: refused, nothing fetched.
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .sign((await newKey('k1')).privateKey);
    await assert.rejects(check(forged), /signature/);
    assert.equal(hits.jwks, 3);
  });

  test('the JWKS follows its own max-age: kept for an hour when it says so, refetched after it', async () => {
    headers.jwks = 'max-age=3600';
    const cache = upstreamCache({ now: () => clock });
    const config = await cache.configuration(idp, upstream(), 'secret', fetch);
    const check = cache.signatureCheck(idp, config, fetch);
    await check(await sign(keys[0]!));
    clock += 59 * MINUTE;
    await check(await sign(keys[0]!));
    assert.equal(hits.jwks, 1);
    clock += MINUTE;
    await check(await sign(keys[0]!));
    assert.equal(hits.jwks, 2);
  });

  test('an HMAC token made with a public key is refused', async () => {
    const cache = upstreamCache({ now: () => clock });
    const config = await cache.configuration(idp, upstream(), 'secret', fetch);
    const check = cache.signatureCheck(idp, config, fetch);
    const mac = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(new TextEncoder().encode(JSON.stringify(keys[0]!.jwk)));
    await assert.rejects(check(mac), (err: unknown) => err instanceof UpstreamError && err.reason === 'invalid');
  });

  test("a SAML provider's metadata URL is read once per lifetime (sign-ins arriving together share it), again after a change; a failure is not kept", async () => {
    const cache = upstreamCache({ now: () => clock });
    const settings = () => ({ metadata: { url: `${issuer}/saml/metadata` } });
    headers.saml = 'public, max-age=7200';
    const read = await Promise.all([1, 2, 3].map(() => cache.samlMetadata(idp, settings(), fetch)));
    assert.equal(hits.saml, 1);
    assert.deepEqual(read[0], { entityId: `${issuer}/saml`, sso: { redirect: `${issuer}/saml/sso` }, certificates: [samlCertificate] });
    clock += 119 * MINUTE;
    await cache.samlMetadata(idp, settings(), fetch);
    assert.equal(hits.saml, 1, 'max-age=7200 still holds after 119 minutes');
    clock += MINUTE;
    await cache.samlMetadata(idp, settings(), fetch);
    assert.equal(hits.saml, 2, 'refetched after two hours');
    await cache.samlMetadata({ ...idp, sequence: '2' }, settings(), fetch);
    assert.equal(hits.saml, 3, 'a changed provider reads its metadata afresh');

    headers.saml = 'no-store';
    await cache.samlMetadata({ ...idp, sequence: '3' }, settings(), fetch);
    clock += MINUTE - 1;
    await cache.samlMetadata({ ...idp, sequence: '3' }, settings(), fetch);
    assert.equal(hits.saml, 4, 'no-store is still kept a minute');

    samlStatus = 503;
    const failing = { ...idp, sequence: '4' };
    for (let i = 0; i < 2; i++)
      await assert.rejects(cache.samlMetadata(failing, settings(), fetch), (err: unknown) => err instanceof UpstreamError && err.reason === 'unreachable');
    assert.equal(hits.saml, 6, 'each sign-in tries again');
    samlStatus = 200;
    await cache.samlMetadata(failing, settings(), fetch);
    assert.equal(hits.saml, 7);
  });

  test('metadata given as XML is read without any fetch; unusable XML fails as invalid', async () => {
    const cache = upstreamCache({ now: () => clock });
    const xml = await (await fetch(`${issuer}/saml/metadata`)).text();
    const given = await cache.samlMetadata(idp, { metadata: { base64: Buffer.from(xml).toString('base64') } }, fetch);
    assert.equal(given.entityId, `${issuer}/saml`);
    assert.equal(hits.saml, 1, 'only the test read it');
    await assert.rejects(
      cache.samlMetadata(idp, { metadata: { base64: Buffer.from('<x/>').toString('base64') } }, fetch),
      (err: unknown) => err instanceof UpstreamError && err.reason === 'invalid',
    );
  });
});
