import assert from 'node:assert/strict';
import { X509Certificate, createPublicKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DOMParser } from '@xmldom/xmldom';
import { startSignInWorld, type SignInWorld } from '../support/browser.ts';
import { spawnSync } from 'node:child_process';
import { handSp, type HandSp } from './support.ts';

// SAML apps through the management API (docs/api/saml-apps.md), and the
// IdP's metadata.

describe('SAML apps', () => {
  let world: SignInWorld;
  let metadataServer: Server;
  let metadataOrigin: string;
  const served = new Map<string, { status: number; body: string }>();

  before(async () => {
    // The SP's metadata URL is on loopback: the instance allows private addresses, as a local trial would.
    world = await startSignInWorld({ OUTBOUND_ALLOW_PRIVATE: 'true' });
    metadataServer = createServer((req, res) => {
      const page = served.get(req.url ?? '') ?? { status: 404, body: 'not here' };
      res.writeHead(page.status, { 'content-type': 'application/samlmetadata+xml' });
      res.end(page.body);
    });
    await new Promise<void>((resolve) => metadataServer.listen(0, '127.0.0.1', resolve));
    metadataOrigin = `http://127.0.0.1:${(metadataServer.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => metadataServer?.close(() => resolve()));
    await world?.stop();
  });

  const path = () => `/management/v1/projects/${world.projectId}/apps`;
  const create = (body: unknown) => world.api('POST', `${path()}/saml`, body);
  const base64 = (text: string) => Buffer.from(text).toString('base64');

  function fieldOf(response: { status: number; body: any }): string {
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.code, 3);
    return response.body.details[0].fieldViolations[0].field;
  }

  test('created from metadata, a SAML app is shown, listed beside OIDC apps, and removed', async () => {
    const sp: HandSp = handSp('wiki');
    const created = await create({ name: 'Wiki', metadataXml: base64(sp.metadataXml) });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.appId, /^\d+$/);
    assert.equal(created.body.details.resourceOwner, world.orgId);

    const shown = await world.api('GET', `${path()}/${created.body.appId}`);
    assert.equal(shown.status, 200);
    assert.equal(shown.body.app.name, 'Wiki');
    assert.equal(shown.body.app.samlConfig.entityId, sp.entityId);
    assert.equal(shown.body.app.samlConfig.authnRequestsSigned, true);
    assert.equal(shown.body.app.samlConfig.allowIdpInitiated, false);
    assert.deepEqual(shown.body.app.samlConfig.certificates, [sp.certificate]);
    assert.deepEqual(
      shown.body.app.samlConfig.assertionConsumerServices.map((e: { location: string }) => e.location),
      [sp.acs, `${sp.acs}/second`],
    );
    assert.equal(Buffer.from(shown.body.app.samlConfig.metadataXml, 'base64').toString(), sp.metadataXml);

    await world.createApp({ name: 'Shop', redirectUris: ['http://localhost:9/cb'] });
    const listed = await world.api('POST', `${path()}/_search`, {});
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.result.map((app: { name: string; samlConfig?: unknown }) => [app.name, Boolean(app.samlConfig)]),
      [
        ['Shop', false],
        ['Wiki', true],
      ],
    );
    assert.equal(listed.body.details.totalResult, '2');

    const again = await create({ name: 'Wiki again', metadataXml: base64(sp.metadataXml) });
    assert.equal(again.status, 409);

    const removed = await world.api('DELETE', `${path()}/${created.body.appId}`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal((await world.api('GET', `${path()}/${created.body.appId}`)).status, 404);
    assert.equal((await world.api('DELETE', `${path()}/${created.body.appId}`)).status, 404);
  });

  test('metadata from a URL is fetched through the outbound client', async () => {
    const sp = handSp('remote');
    served.set('/remote.xml', { status: 200, body: sp.metadataXml });
    const created = await create({ name: 'Remote', metadataUrl: `${metadataOrigin}/remote.xml` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const shown = await world.api('GET', `${path()}/${created.body.appId}`);
    assert.equal(shown.body.app.samlConfig.metadataUrl, `${metadataOrigin}/remote.xml`);
    assert.equal(fieldOf(await create({ name: 'Missing', metadataUrl: `${metadataOrigin}/missing.xml` })), 'metadataUrl');
    assert.equal(fieldOf(await create({ name: 'Bad URL', metadataUrl: 'ftp://example.test/x' })), 'metadataUrl');
    assert.equal(fieldOf(await create({ name: 'Link-local', metadataUrl: 'http://169.254.169.254/latest/meta-data' })), 'metadataUrl');
  });

  test('bad metadata is 400 naming the field, never a 5xx, and nothing is stored', async () => {
    const sp = handSp('bad');
    const count = async () => (await world.api('POST', `${path()}/_search`, {})).body.details.totalResult;
    const before = await count();
    // Assertions are encrypted with RSA-OAEP: an EC encryption key cannot be used.
    const ec = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=ec', '-keyout', '/dev/null', '-days', '2'],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(ec.status, 0, ec.stderr);
    const ecCertificate = ec.stdout.replace(/-----[A-Z ]+-----|\s+/g, '');
    const bad: Array<[string, string]> = [
      [
        'an EC encryption certificate',
        sp.metadataXml.replace(
          '<md:SingleLogoutService',
          `<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${ecCertificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:SingleLogoutService`,
        ),
      ],
      ['not XML', 'this is not XML'],
      ['no entityID', sp.metadataXml.replace(/ entityID="[^"]*"/, '')],
      ['no SP descriptor', sp.metadataXml.replace(/SPSSODescriptor/g, 'IDPSSODescriptor')],
      ['no POST ACS', sp.metadataXml.replace(/HTTP-POST/g, 'HTTP-Artifact')],
      ['a DTD', `<!DOCTYPE x [<!ENTITY a "b">]>${sp.metadataXml.replace('<?xml version="1.0"?>', '')}`],
      ['too deep', sp.metadataXml.replace('<md:SPSSODescriptor', `${'<md:Extensions>'.repeat(30)}${'</md:Extensions>'.repeat(30)}<md:SPSSODescriptor`)],
      ['a bad certificate', sp.metadataXml.replace(sp.certificate, 'bm90IGEgY2VydGlmaWNhdGU=')],
      ['two roots', `${sp.metadataXml}<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>`],
      ['a NUL', sp.metadataXml.replace('<md:SPSSODescriptor', '\u0000<md:SPSSODescriptor')],
      ['a javascript ACS', sp.metadataXml.replace(sp.acs, 'javascript:alert(1)')],
    ];
    for (const [what, xml] of bad) {
      assert.equal(fieldOf(await create({ name: what, metadataXml: base64(xml) })), 'metadataXml', what);
    }
    assert.equal(fieldOf(await create({ name: 'not base64', metadataXml: '%%%' })), 'metadataXml');
    assert.equal(fieldOf(await create({ name: 'oversized', metadataXml: 'A'.repeat(800_000) })), 'metadataXml');
    assert.equal(fieldOf(await create({ name: 'both', metadataXml: base64(sp.metadataXml), metadataUrl: `${metadataOrigin}/x` })), 'metadataXml');
    assert.equal(fieldOf(await create({ name: 'neither' })), 'metadataXml');
    assert.equal(fieldOf(await create({ metadataXml: base64(sp.metadataXml) })), 'name');
    assert.equal(fieldOf(await create({ name: 'extra', metadataXml: base64(sp.metadataXml), entityId: 'x' })), 'entityId');
    assert.equal(fieldOf(await create({ name: 7, metadataXml: base64(sp.metadataXml) })), 'name');
    assert.equal(fieldOf(await create({ name: 'flag', metadataXml: base64(sp.metadataXml), allowIdpInitiated: 'yes' })), 'allowIdpInitiated');
    assert.equal(await count(), before);
  });

  test('removing a project removes its SAML apps', async () => {
    const project = await world.api('POST', '/management/v1/projects', { name: 'Short-lived' });
    const sp = handSp('gone');
    const created = await world.api('POST', `/management/v1/projects/${project.body.id}/apps/saml`, { name: 'Gone', metadataXml: base64(sp.metadataXml) });
    assert.equal(created.status, 200);
    assert.equal((await world.api('DELETE', `/management/v1/projects/${project.body.id}`)).status, 200);
    // Its entityID is free again.
    const again = await create({ name: 'Back', metadataXml: base64(sp.metadataXml) });
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });

  test('the IdP metadata carries a certificate of the signing key the JWKS publishes, the same on every read', async () => {
    const read = async () => {
      const response = await fetch(`${world.server.url}/saml/v2/metadata`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /application\/samlmetadata\+xml/);
      return response.text();
    };
    const first = await read();
    assert.equal(await read(), first);
    const doc = new DOMParser().parseFromString(first, 'text/xml');
    const root = doc.documentElement!;
    assert.equal(root.getAttribute('entityID'), `${world.issuer}/saml/v2/metadata`);
    const services = Array.from(root.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'SingleSignOnService'));
    assert.deepEqual(
      services.map((s) => s.getAttribute('Location')),
      [`${world.issuer}/saml/v2/SSO`, `${world.issuer}/saml/v2/SSO`],
    );
    const certificate = new X509Certificate(
      Buffer.from(doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'X509Certificate')[0]!.textContent!, 'base64'),
    );
    assert.equal(certificate.verify(certificate.publicKey), true);
    const jwks = (await (await fetch(`${world.server.url}/oauth/v2/keys`)).json()) as { keys: Array<{ n: string; e: string; kty: string }> };
    const published = jwks.keys.map((key) => createPublicKey({ key: { kty: key.kty, n: key.n, e: key.e }, format: 'jwk' }));
    assert.ok(published.some((key) => key.equals(certificate.publicKey)));
  });
});
