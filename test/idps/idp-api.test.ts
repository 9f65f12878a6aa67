import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { freePort, testServer, type TestServer } from '../support/server.ts';
import { startUpstreamOp, type UpstreamOp } from '../support/upstream-op.ts';

// docs/api/idps.md: providers at the instance and per org, their fields,
// write-only sealed secrets, discovery checked at write, and the login
// policy's list of providers.

let server: TestServer;
let upstream: UpstreamOp;
let orgId: string;
let orgOwnerPat: string;

function oidcBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Upstream', issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret, ...overrides };
}

const OAUTH_BODY = {
  name: 'Forge',
  clientId: 'forge-client',
  clientSecret: 'forge-secret-1',
  authorizationEndpoint: 'https://forge.example.test/login/oauth/authorize',
  tokenEndpoint: 'https://forge.example.test/login/oauth/access_token',
  userEndpoint: 'https://api.forge.example.test/user',
  idAttribute: 'id',
};

describe('identity providers API', () => {
  before(async () => {
    server = await testServer({ captureLog: true });
    upstream = await startUpstreamOp(`${server.issuer}/idps/callback`);
    const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Idp Org', domain: 'idp.example.test' },
        human: { userName: 'o', profile: { firstName: 'O', lastName: 'W' }, email: { email: 'o@idp.example.test' }, password: 'Owner-Passw0rd' },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    orgId = setup.body.orgId;
    const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'idp-owner', name: 'idp-owner' }, orgId });
    assert.equal(machine.status, 200, machine.text);
    const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles: ['ORG_OWNER'] }, orgId });
    assert.equal(member.status, 200, member.text);
    orgOwnerPat = (await server.api('POST', `/management/v1/users/${machine.body.userId}/pats`, { orgId })).body.token;
  });
  after(async () => {
    await server?.stop();
    await upstream?.stop();
  });

  it('creates a generic_oidc provider after discovery; GET shows its fields, the defaults and never the secret', async () => {
    const created = await server.api('POST', '/admin/v1/idps/generic_oidc', { body: oidcBody() });
    assert.equal(created.status, 200, created.text);
    assert.match(created.body.id, /^[A-Za-z0-9_-]+$/);
    const instanceId = (await server.running.db.query<{ id: string }>('SELECT id FROM instance')).rows[0]!.id;
    assertDetails(created.body.details, instanceId);
    const got = await server.api('GET', `/admin/v1/idps/${created.body.id}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.idp.config, {
      issuer: upstream.issuer,
      clientId: upstream.clientId,
      scopes: ['openid', 'profile', 'email'],
      isIdTokenMapping: false,
    });
    assert.deepEqual(got.body.idp.providerOptions, { isLinkingAllowed: true, isCreationAllowed: true, isAutoCreation: false, isAutoUpdate: false });
    assert.equal(got.body.idp.type, 'IDP_TYPE_OIDC');
    assert.equal(got.body.idp.state, 'IDP_STATE_ACTIVE');
    assert.equal(got.body.idp.name, 'Upstream');
    assert.ok(!got.text.includes(upstream.clientSecret), 'the secret is never answered');
    const events = await server.api('POST', '/admin/v1/events/_search', { body: { queries: [{ eventTypesQuery: { types: ['instance.idp.added'] } }] } });
    assert.equal(events.body.result.length, 1);
    assert.ok(!events.text.includes(upstream.clientSecret), 'nor written into the event log');
    const stored = await server.running.db.query<{ secret_sealed: Buffer }>('SELECT secret_sealed FROM identity_providers WHERE id = $1', [created.body.id]);
    assert.ok(!Buffer.from(stored.rows[0]!.secret_sealed).toString('latin1').includes(upstream.clientSecret), 'sealed at rest');
  });

  it('refuses bad generic_oidc bodies naming every bad field, and stores nothing', async () => {
    const post = (body: unknown) => server.api('POST', '/admin/v1/idps/generic_oidc', { body });
    const before = (await server.running.db.query('SELECT id FROM identity_providers')).rows.length;
    assertInvalid(await post(oidcBody({ issuer: 'not a url' })), ['issuer']);
    assertInvalid(await post(oidcBody({ issuer: 'http://idp.example.com' })), ['issuer']);
    assertInvalid(await post(oidcBody({ issuer: 'https://user:pw@idp.example.com' })), ['issuer']);
    assertInvalid(await post(oidcBody({ issuer: 'https://idp.example.com/#x' })), ['issuer']);
    assertInvalid(await post(oidcBody({ issuer: `https://${'a'.repeat(2050)}.example` })), ['issuer']);
    assertInvalid(await post(oidcBody({ issuer: 42 })), ['issuer']);
    assertInvalid(await post(oidcBody({ clientId: '' })), ['clientId']);
    assertInvalid(await post(oidcBody({ clientId: 'a\u0000b' })), ['clientId']);
    assertInvalid(await post(oidcBody({ clientSecret: undefined })), ['clientSecret']);
    assertInvalid(await post(oidcBody({ clientSecret: 'x'.repeat(1025) })), ['clientSecret']);
    assertInvalid(await post(oidcBody({ scopes: 'openid' })), ['scopes']);
    assertInvalid(await post(oidcBody({ scopes: ['open id'] })), ['scopes[0]']);
    assertInvalid(await post(oidcBody({ scopes: ['openid', 'openid'] })), ['scopes']);
    assertInvalid(await post(oidcBody({ isIdTokenMapping: 'yes' })), ['isIdTokenMapping']);
    assertInvalid(await post(oidcBody({ name: '' })), ['name']);
    assertInvalid(await post(oidcBody({ name: undefined })), ['name']);
    assertInvalid(await post(oidcBody({ name: 'n'.repeat(201) })), ['name']);
    assertInvalid(await post(oidcBody({ providerOptions: { isAutoCreation: 'true' } })), ['providerOptions.isAutoCreation']);
    assertInvalid(await post(oidcBody({ providerOptions: { other: true } })), ['providerOptions.other']);
    assertInvalid(await post(oidcBody({ tenant: 'x' })), ['tenant']);
    assertInvalid(await post([]), ['(body)']);
    const malformed = await server.api('POST', '/admin/v1/idps/generic_oidc', { raw: '{"name":' });
    assert.equal(malformed.status, 400);
    assert.equal((await server.running.db.query('SELECT id FROM identity_providers')).rows.length, before, 'nothing stored');
  });

  it('answers a discovery that fails with 400 naming issuer: nothing listening, not an OpenID provider', async () => {
    const closed = await freePort();
    const down = await server.api('POST', '/admin/v1/idps/generic_oidc', { body: oidcBody({ issuer: `http://127.0.0.1:${closed}` }) });
    assertInvalid(down, ['issuer']);
    assert.match(down.body.message, /discovery failed/);
    // The server itself answers, but no OpenID configuration at that path.
    const wrong = await server.api('POST', '/admin/v1/idps/generic_oidc', { body: oidcBody({ issuer: `${server.url}/nothing` }) });
    assertInvalid(wrong, ['issuer']);
    assert.ok(!server.logText().includes(upstream.clientSecret), 'no secret logged');
  });

  it('oauth and the presets: their fields, defaults and URL rules', async () => {
    const post = (kind: string, body: unknown) => server.api('POST', `/admin/v1/idps/${kind}`, { body });
    const oauth = await post('oauth', OAUTH_BODY);
    assert.equal(oauth.status, 200, oauth.text);
    const got = await server.api('GET', `/admin/v1/idps/${oauth.body.id}`);
    assert.deepEqual(got.body.idp.config, {
      clientId: 'forge-client',
      authorizationEndpoint: OAUTH_BODY.authorizationEndpoint,
      tokenEndpoint: OAUTH_BODY.tokenEndpoint,
      userEndpoint: OAUTH_BODY.userEndpoint,
      idAttribute: 'id',
      scopes: [],
    });
    assertInvalid(await post('oauth', { ...OAUTH_BODY, tokenEndpoint: 'ftp://x.example' }), ['tokenEndpoint']);
    assertInvalid(await post('oauth', { ...OAUTH_BODY, userEndpoint: 'http://api.example.com/user' }), ['userEndpoint']);
    assertInvalid(await post('oauth', { ...OAUTH_BODY, authorizationEndpoint: '/relative' }), ['authorizationEndpoint']);
    assertInvalid(await post('oauth', { ...OAUTH_BODY, idAttribute: 'a b' }), ['idAttribute']);
    assertInvalid(await post('oauth', { ...OAUTH_BODY, idAttribute: undefined }), ['idAttribute']);
    assertInvalid(await post('oauth', { ...OAUTH_BODY, issuer: 'https://x.example' }), ['issuer']);

    const github = await post('github', { name: 'GitHub', clientId: 'gh', clientSecret: 'gh-secret' });
    assert.equal(github.status, 200, github.text);
    assert.deepEqual((await server.api('GET', `/admin/v1/idps/${github.body.id}`)).body.idp.config, { clientId: 'gh', scopes: ['read:user', 'user:email'] });
    assert.equal((await post('google', { name: 'Google', clientId: 'g', clientSecret: 's' })).status, 200);
    assert.equal((await post('gitlab', { name: 'GitLab', clientId: 'g', clientSecret: 's', scopes: ['openid'] })).status, 200);
    assertInvalid(await post('azure_ad', { name: 'Entra', clientId: 'a', clientSecret: 's' }), ['tenant']);
    assertInvalid(await post('azure_ad', { name: 'Entra', clientId: 'a', clientSecret: 's', tenant: '../x' }), ['tenant']);
    const entra = await post('azure_ad', { name: 'Entra', clientId: 'a', clientSecret: 's', tenant: 'contoso.onmicrosoft.com' });
    assert.equal(entra.status, 200, entra.text);
    assert.equal((await server.api('GET', `/admin/v1/idps/${entra.body.id}`)).body.idp.type, 'IDP_TYPE_AZURE_AD');
  });

  it('refuses unknown kinds with 404', async () => {
    assertError(await server.api('POST', '/admin/v1/idps/kerberos', { body: { name: 'x' } }), 404);
  });

  it('changes a provider: the secret is kept for the same issuer, needed again for another', async () => {
    const created = await server.api('POST', '/admin/v1/idps/generic_oidc', { body: oidcBody({ name: 'Before' }) });
    const id = created.body.id;
    const { clientSecret: _s, ...withoutSecret } = oidcBody({ name: 'After', providerOptions: { isAutoCreation: true } });
    const changed = await server.api('PUT', `/admin/v1/idps/generic_oidc/${id}`, { body: withoutSecret });
    assert.equal(changed.status, 200, changed.text);
    const got = (await server.api('GET', `/admin/v1/idps/${id}`)).body.idp;
    assert.equal(got.name, 'After');
    assert.deepEqual(got.providerOptions, { isLinkingAllowed: true, isCreationAllowed: true, isAutoCreation: true, isAutoUpdate: false });
    const moved = await server.api('PUT', `/admin/v1/idps/generic_oidc/${id}`, { body: { ...withoutSecret, issuer: `${upstream.issuer}/other` } });
    assertInvalid(moved, ['clientSecret']);
    assertInvalid(await server.api('PUT', `/admin/v1/idps/oauth/${id}`, { body: { ...OAUTH_BODY } }), []);
    assertError(await server.api('PUT', '/admin/v1/idps/generic_oidc/unknown', { body: withoutSecret }), 404);
  });

  it('keeps instance and org providers apart: roles, search, and private addresses only at the instance', async () => {
    const asOrgOwner = { token: orgOwnerPat, orgId };
    assertError(await server.api('POST', '/admin/v1/idps/generic_oidc', { body: oidcBody(), token: orgOwnerPat }), 403);
    // An org's provider may not reach a loopback address (OUTBOUND_ALLOW_PRIVATE is off).
    const loopback = await server.api('POST', '/management/v1/idps/generic_oidc', { body: oidcBody(), ...asOrgOwner });
    assertInvalid(loopback, ['issuer']);
    assert.match(loopback.body.message, /refused/);
    const own = await server.api('POST', '/management/v1/idps/github', { body: { name: 'Org GitHub', clientId: 'c', clientSecret: 's' }, ...asOrgOwner });
    assert.equal(own.status, 200, own.text);
    assertDetails(own.body.details, orgId);
    const orgSearch = await server.api('POST', '/management/v1/idps/_search', { body: {}, ...asOrgOwner });
    assert.equal(orgSearch.status, 200, orgSearch.text);
    const owners = new Set(orgSearch.body.result.map((idp: { owner: string }) => idp.owner));
    assert.deepEqual([...owners].sort(), ['IDP_OWNER_TYPE_ORG', 'IDP_OWNER_TYPE_SYSTEM']);
    const instanceSearch = await server.api('POST', '/admin/v1/idps/_search', {
      body: { queries: [{ nameQuery: { name: 'org github', method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }] },
    });
    assert.equal(instanceSearch.body.result.length, 0, 'the org provider is not the instance one');
    const named = await server.api('POST', '/management/v1/idps/_search', {
      body: { queries: [{ nameQuery: { name: 'org git', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }] },
      ...asOrgOwner,
    });
    assert.deepEqual(
      named.body.result.map((idp: { id: string }) => idp.id),
      [own.body.id],
    );
    // The instance's provider is read in the org, but changed and removed only at the instance.
    const instanceIdp = orgSearch.body.result.find((idp: { owner: string }) => idp.owner === 'IDP_OWNER_TYPE_SYSTEM');
    assert.equal((await server.api('GET', `/management/v1/idps/${instanceIdp.id}`, asOrgOwner)).status, 200);
    assertError(await server.api('DELETE', `/management/v1/idps/${instanceIdp.id}`, asOrgOwner), 404);
    assertError(await server.api('GET', `/admin/v1/idps/${instanceIdp.id}`, { token: orgOwnerPat }), 403);
    assertError(await server.api('DELETE', `/admin/v1/idps/${own.body.id}`), 404);
    assert.equal((await server.api('DELETE', `/management/v1/idps/${own.body.id}`, asOrgOwner)).status, 200);
    assertError(await server.api('GET', `/management/v1/idps/${own.body.id}`, asOrgOwner), 404);
    assertInvalid(await server.api('POST', '/admin/v1/idps/_search', { body: { query: { limit: 5000 } } }), ['query.limit']);
  });

  it("the login policy's list: an org following the default gets its own copy first; removal and duplicates", async () => {
    const asOrgOwner = { token: orgOwnerPat, orgId };
    const idp = await server.api('POST', '/admin/v1/idps/generic_oidc', { body: oidcBody({ name: 'Listed' }) });
    const instanceListed = await server.api('POST', '/admin/v1/policies/login/idps', { body: { idpId: idp.body.id } });
    assert.equal(instanceListed.status, 200, instanceListed.text);
    assertError(await server.api('POST', '/admin/v1/policies/login/idps', { body: { idpId: idp.body.id } }), 409);
    assertError(await server.api('POST', '/admin/v1/policies/login/idps', { body: { idpId: 'unknown' } }), 404);
    assertInvalid(await server.api('POST', '/admin/v1/policies/login/idps', { body: { idpId: 'a b' } }), ['idpId']);
    assertInvalid(await server.api('POST', '/admin/v1/policies/login/idps', { body: {} }), ['idpId']);
    assertError(await server.api('POST', '/admin/v1/policies/login/idps', { body: { idpId: idp.body.id }, token: orgOwnerPat }), 403);

    // The org follows the default: its list is the instance's.
    assert.equal((await server.api('GET', '/management/v1/policies/login', asOrgOwner)).body.isDefault, true);
    const inherited = await server.api('POST', '/management/v1/policies/login/idps/_search', { body: {}, ...asOrgOwner });
    assert.deepEqual(
      inherited.body.result.map((r: { idpId: string }) => r.idpId),
      [idp.body.id],
    );
    const ownIdp = await server.api('POST', '/management/v1/idps/github', { body: { name: 'Org Forge', clientId: 'c', clientSecret: 's' }, ...asOrgOwner });
    assert.equal((await server.api('POST', '/management/v1/policies/login/idps', { body: { idpId: ownIdp.body.id }, ...asOrgOwner })).status, 200);
    assert.equal((await server.api('GET', '/management/v1/policies/login', asOrgOwner)).body.isDefault, false, 'the org has its own policy now');
    const own = await server.api('POST', '/management/v1/policies/login/idps/_search', { body: {}, ...asOrgOwner });
    assert.deepEqual(
      own.body.result.map((r: { idpId: string; ownerType: string }) => [r.idpId, r.ownerType]),
      [
        [idp.body.id, 'IDP_OWNER_TYPE_SYSTEM'],
        [ownIdp.body.id, 'IDP_OWNER_TYPE_ORG'],
      ],
    );
    // The instance default is unchanged.
    assert.equal((await server.api('POST', '/admin/v1/policies/login/idps/_search', { body: {} })).body.result.length, 1);
    assert.equal((await server.api('DELETE', `/management/v1/policies/login/idps/${idp.body.id}`, asOrgOwner)).status, 200);
    assertError(await server.api('DELETE', `/management/v1/policies/login/idps/${idp.body.id}`, asOrgOwner), 404);
    // Back to the default: the org's own list goes with its policy.
    assert.equal((await server.api('DELETE', '/management/v1/policies/login', asOrgOwner)).status, 200);
    const back = await server.api('POST', '/management/v1/policies/login/idps/_search', { body: {}, ...asOrgOwner });
    assert.deepEqual(
      back.body.result.map((r: { idpId: string }) => r.idpId),
      [idp.body.id],
    );
    // Removing a provider takes it off every list.
    assert.equal((await server.api('DELETE', `/admin/v1/idps/${idp.body.id}`)).status, 200);
    assert.equal((await server.api('POST', '/admin/v1/policies/login/idps/_search', { body: {} })).body.result.length, 0);
  });

  it('allowExternalIdp and forceMfaLocalOnly are login policy fields with their defaults', async () => {
    const policy = (await server.api('GET', '/admin/v1/policies/login')).body.policy;
    assert.equal(policy.allowExternalIdp, true);
    assert.equal(policy.forceMfaLocalOnly, false);
    assertInvalid(await server.api('PUT', '/admin/v1/policies/login', { body: { allowExternalIdp: 'no' } }), ['allowExternalIdp']);
    assert.equal((await server.api('PUT', '/admin/v1/policies/login', { body: { forceMfaLocalOnly: true } })).status, 200);
    assert.equal((await server.api('GET', '/admin/v1/policies/login')).body.policy.forceMfaLocalOnly, true);
  });
});
