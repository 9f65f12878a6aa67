import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import {
  confidentialAppFor,
  landedOn,
  launchBrowser,
  needsChromium,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
} from '../support/browser.ts';
import { basicAuth } from '../support/code-flow.ts';

// Pushed authorization requests (RFC 9126): a relying party (openid-client)
// pushes its request to /oauth/v2/par with the token endpoint's client
// authentication, sends the browser (Chromium) with only the request_uri,
// and redeems the code; an app that requires PAR refuses a plain request.

describe('in Chromium', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let user: TestUser;
  let web: { appId: string; clientId: string; clientSecret?: string };
  let strict: { appId: string; clientId: string; clientSecret?: string };
  let pub: { appId: string; clientId: string };
  let parUrl: string;

  before(async () => {
    [world, rp, browser] = await Promise.all([startSignInWorld(), startRelyingParty(), launchBrowser()]);
    parUrl = `${world.issuer}/oauth/v2/par`;
    [web, strict, pub, user] = await Promise.all([
      world.createApp({ name: 'Web', ...confidentialAppFor(rp) }),
      world.createApp({ name: 'PAR only', ...confidentialAppFor(rp), requirePushedAuthorizationRequests: true } as never),
      world.createApp({ name: 'Public', redirectUris: [rp.callback], appType: 'OIDC_APP_TYPE_USER_AGENT', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' }),
      world.createUser('parker'),
    ]);
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await world?.stop();
  });

  async function discover(clientId: string, secret?: string): Promise<client.Configuration> {
    const auth = secret ? client.ClientSecretBasic(secret) : client.None();
    return client.discovery(new URL(world.issuer), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
  }

  /** The code flow with the request pushed first: the browser carries only client_id and request_uri. */
  async function pushedCodeFlow(config: client.Configuration, scope = 'openid profile') {
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const expectedState = client.randomState();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: rp.callback,
      scope,
      state: expectedState,
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
    });
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url.href);
      await signIn(page, user);
      const landed = await landedOn(page, rp.callback);
      return await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier, expectedState });
    } finally {
      await context.close();
    }
  }

  async function push(body: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await fetch(parUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  }

  const request = () => ({
    response_type: 'code',
    redirect_uri: rp.callback,
    scope: 'openid',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });

  test('discovery names the PAR endpoint', async () => {
    const metadata = (await discover(web.clientId, web.clientSecret)).serverMetadata();
    assert.equal(metadata.pushed_authorization_request_endpoint, parUrl);
    assert.notEqual(metadata.require_pushed_authorization_requests, true, 'required per app, not for all');
  });

  test('a confidential app (client_secret_basic) pushes its request, signs the user in and redeems the code', async () => {
    const tokens = await pushedCodeFlow(await discover(web.clientId, web.clientSecret));
    assert.equal(tokens.claims()?.sub, user.userId);
    assert.ok(tokens.access_token);
  });

  test('a public app pushes with its client_id alone (PKCE)', async () => {
    const tokens = await pushedCodeFlow(await discover(pub.clientId));
    assert.equal(tokens.claims()?.sub, user.userId);
  });

  test('an app requiring PAR completes a pushed request and refuses a plain one at its redirect_uri', async () => {
    const config = await discover(strict.clientId, strict.clientSecret);
    const tokens = await pushedCodeFlow(config);
    assert.equal(tokens.claims()?.sub, user.userId);

    const plain = client.buildAuthorizationUrl(config, {
      redirect_uri: rp.callback,
      scope: 'openid',
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const res = await fetch(plain, { redirect: 'manual' });
    assert.equal(res.status, 303);
    const location = new URL(res.headers.get('location')!);
    assert.equal(location.origin + location.pathname, rp.callback);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('state'), 'st');
  });

  describe('bad pushes: the RFC error as JSON, never 5xx', () => {
    test('no client authentication at all: 401 invalid_client', async () => {
      const res = await push(request());
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'invalid_client');
    });

    test('a wrong secret: 401 invalid_client with a Basic challenge', async () => {
      const res = await push({ ...request(), client_id: web.clientId }, { authorization: basicAuth(web.clientId, 'wrong') });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'invalid_client');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Basic/);
    });

    test('a confidential app naming only its client_id: 401 invalid_client', async () => {
      const res = await push({ ...request(), client_id: web.clientId });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'invalid_client');
    });

    test('request_uri inside the pushed body: 400 invalid_request', async () => {
      const res = await push({ ...request(), client_id: pub.clientId, request_uri: 'urn:ietf:params:oauth:request_uri:abc' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_request');
    });

    test('a scope without openid: 400 invalid_scope', async () => {
      const res = await push({ ...request(), client_id: pub.clientId, scope: 'profile' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_scope');
    });

    test('an unregistered redirect_uri: 400 invalid_redirect_uri', async () => {
      const res = await push({ ...request(), client_id: pub.clientId, redirect_uri: 'https://evil.example/cb' });
      assert.equal(res.status, 400);
      assert.ok(['invalid_request', 'invalid_redirect_uri'].includes(String(res.body.error)), JSON.stringify(res.body));
    });

    test('a NUL in a parameter: 400 invalid_request', async () => {
      const res = await push({ ...request(), client_id: pub.clientId, state: 'a\u0000b' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'invalid_request');
    });
  });

  test('requirePushedAuthorizationRequests is validated and shown', async () => {
    const refused = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, { name: 'bad', requirePushedAuthorizationRequests: 'yes' });
    assert.equal(refused.status, 400);
    const deviceOnly = await world.api('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, {
      name: 'device only',
      appType: 'OIDC_APP_TYPE_NATIVE',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      grantTypes: ['OIDC_GRANT_TYPE_DEVICE_CODE'],
      requirePushedAuthorizationRequests: true,
    });
    assert.equal(deviceOnly.status, 400);
    assert.match(JSON.stringify(deviceOnly.body), /requirePushedAuthorizationRequests/, 'no authorization requests to push');
    const shown = await world.api('GET', `/management/v1/projects/${world.projectId}/apps/${strict.appId}`);
    assert.equal(shown.body.app.requirePushedAuthorizationRequests, true);
  });
});
