import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import {
  ACCESS_TOKEN_TYPE,
  API_SCOPE,
  JWT_BEARER,
  TOKEN_EXCHANGE,
  basicAndPost,
  clientAssertion,
  fixedAssertion,
  jwtProfileAssertion,
  noClientAuth,
  ok,
  postForm,
  privateKeyJwt,
  refused,
  startTokenWorld,
  strangerKey,
  type App,
  type KeyFile,
  type TokenWorld,
} from '../support/tokens.ts';

// docs/oidc.md, Client authentication: every client authentication method at
// every token endpoint grant, introspection and revocation — the accepted ones
// and the refused ones — and the failures of client authentication (RFC 6749
// 5.2, docs/oidc.md). Acceptance is shown without a user: a bogus code, refresh
// token or subject token gets past client authentication and is then refused as
// `invalid_grant`, never `invalid_client`.

const REDIRECT = 'http://localhost:9/cb';
type Method = 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';
const METHODS: Method[] = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'];

let world: TokenWorld;
const apps = {} as Record<Method, App>;
/** An app of each method, as openid-client configured with that method. */
const configs = {} as Record<Method, client.Configuration>;
let appKey: KeyFile;
/** A BASIC app with the code grant only (no refresh token, no token exchange). */
let codeOnlyConfig: client.Configuration;
/** A machine user with a client secret (client_credentials). */
let machine: { userId: string; clientId: string; clientSecret: string };

before(async () => {
  world = await startTokenWorld();
  const projectId = await world.createProject('Auth methods');
  const settings = {
    redirectUris: [REDIRECT],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
    devMode: true,
  };
  const [basic, post, none, pkj, only, machineUser] = await Promise.all([
    world.createApp(projectId, { ...settings, authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC' }),
    world.createApp(projectId, { ...settings, authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST' }),
    world.createApp(projectId, { ...settings, appType: 'OIDC_APP_TYPE_USER_AGENT', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' }),
    world.createApp(projectId, { ...settings, authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' }),
    world.createApp(projectId, { ...settings, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'], authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC' }),
    world.createMachine('auth-methods-robot'),
  ]);
  Object.assign(apps, { client_secret_basic: basic, client_secret_post: post, none, private_key_jwt: pkj });
  assert.ok(basic.clientSecret && post.clientSecret && only.clientSecret, 'BASIC and POST apps come with a secret');
  assert.equal(none.clientSecret, undefined);
  assert.equal(pkj.clientSecret, undefined);
  appKey = await world.appKey(pkj);
  machine = { userId: machineUser.userId, ...(await world.machineSecret(machineUser.userId)) };
  await ok(world.api('PUT', '/v2/features/instance', { oidcTokenExchange: true }), 'turn token exchange on');

  configs.client_secret_basic = world.clients.config(basic.clientId, client.ClientSecretBasic(basic.clientSecret));
  configs.client_secret_post = world.clients.config(post.clientId, client.ClientSecretPost(post.clientSecret));
  configs.none = world.clients.config(none.clientId, client.None());
  configs.private_key_jwt = world.clients.config(pkj.clientId, privateKeyJwt(appKey));
  codeOnlyConfig = world.clients.config(only.clientId, client.ClientSecretBasic(only.clientSecret));
});

after(async () => {
  await world?.stop();
});

const bogusCode = (config: client.Configuration) =>
  client.genericGrantRequest(config, 'authorization_code', {
    code: 'bogus-authorization-code',
    redirect_uri: REDIRECT,
    code_verifier: client.randomPKCECodeVerifier(),
  });
const bogusRefresh = (config: client.Configuration) => client.refreshTokenGrant(config, 'bogus-refresh-token');
const bogusExchange = (config: client.Configuration) =>
  client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: 'bogus-subject-token', subject_token_type: ACCESS_TOKEN_TYPE, scope: 'openid' });

describe('token endpoint: authorization_code accepts client_secret_basic, client_secret_post, none (PKCE) and private_key_jwt', () => {
  for (const method of METHODS) {
    test(`${method}: client authentication passes, and a bogus code is invalid_grant (not invalid_client)`, async () => {
      await refused(bogusCode(configs[method]), 'invalid_grant', 400, method);
    });
  }

  test('a public client (none) must send the PKCE code_verifier with the code', async () => {
    const failure = await refused(
      client.genericGrantRequest(configs.none, 'authorization_code', { code: 'bogus-authorization-code', redirect_uri: REDIRECT }),
      'invalid_grant',
      400,
    );
    assert.ok(failure.error !== 'invalid_client');
  });
});

describe('token endpoint: refresh_token accepts client_secret_basic, client_secret_post, none (client_id only) and private_key_jwt', () => {
  for (const method of METHODS) {
    test(`${method}: client authentication passes, and a bogus refresh token is invalid_grant`, async () => {
      await refused(bogusRefresh(configs[method]), 'invalid_grant', 400, method);
    });
  }
});

describe('token endpoint: token exchange (feature on) accepts client_secret_basic, client_secret_post, none and private_key_jwt', () => {
  for (const method of METHODS) {
    test(`${method}: client authentication passes, and a bogus subject token is invalid_grant`, async () => {
      await refused(bogusExchange(configs[method]), 'invalid_grant', 400, method);
    });
  }
});

describe('token endpoint: client_credentials accepts only client_secret_basic and client_secret_post', () => {
  test("client_secret_basic with the machine user's secret gives an access token", async () => {
    const config = world.clients.config(machine.clientId, client.ClientSecretBasic(machine.clientSecret));
    const tokens = await client.clientCredentialsGrant(config, { scope: API_SCOPE });
    assert.equal(typeof tokens.access_token, 'string');
    assert.equal(tokens.token_type, 'bearer');
  });

  test("client_secret_post with the machine user's secret gives an access token", async () => {
    const config = world.clients.config(machine.clientId, client.ClientSecretPost(machine.clientSecret));
    const tokens = await client.clientCredentialsGrant(config, { scope: API_SCOPE });
    assert.equal(typeof tokens.access_token, 'string');
  });

  test("none (the machine user's client_id only) is 401 invalid_client", async () => {
    await refused(client.clientCredentialsGrant(world.clients.config(machine.clientId, client.None()), { scope: API_SCOPE }), 'invalid_client', 401);
  });

  test('private_key_jwt (a valid assertion of an app key) is 401 invalid_client', async () => {
    await refused(client.clientCredentialsGrant(configs.private_key_jwt, { scope: API_SCOPE }), 'invalid_client', 401);
  });
});

describe('token endpoint: the JWT profile grant takes no client authentication', () => {
  const jwtProfile = async (auth: client.ClientAuth, clientId = 'unused') =>
    client.genericGrantRequest(world.clients.config(clientId, auth), JWT_BEARER, {
      assertion: await jwtProfileAssertion(world.adminKey, world.issuer),
      scope: 'openid',
    });

  test('the signed assertion alone is accepted', async () => {
    const tokens = await client.genericGrantRequest(world.clients.config(`machine:${world.adminKey.userId}`, noClientAuth), JWT_BEARER, {
      assertion: await jwtProfileAssertion(world.adminKey, world.issuer),
      scope: API_SCOPE,
    });
    assert.equal(typeof tokens.access_token, 'string');
  });

  test('with client_secret_basic added it is 400 invalid_request', async () => {
    await refused(jwtProfile(client.ClientSecretBasic(apps.client_secret_basic.clientSecret), apps.client_secret_basic.clientId), 'invalid_request', 400);
  });

  test('with client_secret_post added it is 400 invalid_request', async () => {
    await refused(jwtProfile(client.ClientSecretPost(apps.client_secret_post.clientSecret), apps.client_secret_post.clientId), 'invalid_request', 400);
  });

  test('with a client_id (none) added it is 400 invalid_request', async () => {
    await refused(jwtProfile(client.None(), apps.none.clientId), 'invalid_request', 400);
  });

  test('with private_key_jwt added it is 400 invalid_request', async () => {
    await refused(jwtProfile(privateKeyJwt(appKey), apps.private_key_jwt.clientId), 'invalid_request', 400);
  });
});

describe('introspection accepts only client_secret_basic and private_key_jwt', () => {
  test('client_secret_basic: answered 200 with an introspection result', async () => {
    const result = await client.tokenIntrospection(configs.client_secret_basic, 'bogus-token');
    assert.deepEqual(result, { active: false });
  });

  test('private_key_jwt: answered 200 with an introspection result', async () => {
    const result = await client.tokenIntrospection(configs.private_key_jwt, 'bogus-token');
    assert.deepEqual(result, { active: false });
  });

  test('a machine user with client_secret_basic introspects its own token: active', async () => {
    const config = world.clients.config(machine.clientId, client.ClientSecretBasic(machine.clientSecret));
    const tokens = await client.clientCredentialsGrant(config, { scope: API_SCOPE });
    assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, true);
  });

  test('client_secret_post (with the right secret) is 401 invalid_client', async () => {
    await refused(client.tokenIntrospection(configs.client_secret_post, 'bogus-token'), 'invalid_client', 401);
  });

  test('none (client_id only) is 401 invalid_client', async () => {
    await refused(client.tokenIntrospection(configs.none, 'bogus-token'), 'invalid_client', 401);
  });

  test('no client authentication at all is 401 invalid_client', async () => {
    await refused(client.tokenIntrospection(world.clients.config('nobody', noClientAuth), 'bogus-token'), 'invalid_client', 401);
  });
});

describe('revocation accepts client_secret_basic, client_secret_post, none and private_key_jwt', () => {
  for (const method of METHODS) {
    test(`${method}: an unknown token is answered 200`, async () => {
      await client.tokenRevocation(configs[method], 'bogus-token');
    });
  }

  test('no client authentication at all is 401 invalid_client', async () => {
    await refused(client.tokenRevocation(world.clients.config('nobody', noClientAuth), 'bogus-token'), 'invalid_client', 401);
  });

  test('a wrong secret with client_secret_basic is 401 invalid_client with a Basic challenge', async () => {
    const failure = await refused(
      client.tokenRevocation(world.clients.config(apps.client_secret_basic.clientId, client.ClientSecretBasic('wrong-secret')), 'bogus-token'),
      'invalid_client',
      401,
    );
    assert.match(failure.wwwAuthenticate ?? '', /^Basic\b/);
  });
});

describe('failed client authentication', () => {
  test('no client authentication at all at the token endpoint is 401 invalid_client', async () => {
    await refused(client.refreshTokenGrant(world.clients.config('nobody', noClientAuth), 'bogus-refresh-token'), 'invalid_client', 401);
  });

  test('an unknown client_id is 401 invalid_client', async () => {
    await refused(bogusRefresh(world.clients.config('999999999999999999', client.ClientSecretBasic('whatever'))), 'invalid_client', 401);
    await refused(bogusRefresh(world.clients.config('999999999999999999', client.None())), 'invalid_client', 401);
  });

  test('a wrong secret with client_secret_basic is 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const wrong = world.clients.config(apps.client_secret_basic.clientId, client.ClientSecretBasic('wrong-secret'));
    for (const attempt of [bogusRefresh(wrong), client.tokenIntrospection(wrong, 'bogus-token')]) {
      const failure = await refused(attempt, 'invalid_client', 401);
      assert.match(failure.wwwAuthenticate ?? '', /^Basic\b/, `WWW-Authenticate is "${failure.wwwAuthenticate}"`);
    }
  });

  test('a wrong machine secret at client_credentials is 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const failure = await refused(
      client.clientCredentialsGrant(world.clients.config(machine.clientId, client.ClientSecretBasic('wrong-secret')), { scope: API_SCOPE }),
      'invalid_client',
      401,
    );
    assert.match(failure.wwwAuthenticate ?? '', /^Basic\b/);
  });

  test('a wrong secret with client_secret_post is 401 invalid_client', async () => {
    await refused(bogusRefresh(world.clients.config(apps.client_secret_post.clientId, client.ClientSecretPost('wrong-secret'))), 'invalid_client', 401);
  });

  test("a method of another kind than the app's is 401 invalid_client (a secret for a key app, an assertion for a secret app)", async () => {
    await refused(
      bogusRefresh(world.clients.config(apps.private_key_jwt.clientId, client.ClientSecretBasic('some-secret'))),
      'invalid_client',
      401,
      'secret for a private_key_jwt app',
    );
    await refused(bogusRefresh(world.clients.config(apps.private_key_jwt.clientId, client.None())), 'invalid_client', 401, 'none for a private_key_jwt app');
    const foreign = await clientAssertion({ ...appKey, clientId: apps.client_secret_basic.clientId }, world.issuer);
    await refused(
      bogusRefresh(world.clients.config(apps.client_secret_basic.clientId, fixedAssertion(foreign))),
      'invalid_client',
      401,
      'assertion for a BASIC app',
    );
  });

  test('a confidential app presenting no secret (none) is 401 invalid_client', async () => {
    await refused(bogusRefresh(world.clients.config(apps.client_secret_basic.clientId, client.None())), 'invalid_client', 401);
  });

  test('two mechanisms at once (Basic and client_secret in the body) are 400 invalid_request', async () => {
    const app = apps.client_secret_basic;
    await refused(bogusRefresh(world.clients.config(app.clientId, basicAndPost(app.clientId, app.clientSecret!))), 'invalid_request', 400);
  });

  test('a private_key_jwt assertion with aud = the token endpoint URL is accepted too', async () => {
    const assertion = await clientAssertion(appKey, world.issuer, { aud: `${world.issuer}/oauth/v2/token` });
    await refused(bogusRefresh(world.clients.config(apps.private_key_jwt.clientId, fixedAssertion(assertion))), 'invalid_grant', 400);
  });

  test('a private_key_jwt assertion used twice (same jti) is refused the second time: 401 invalid_client', async () => {
    const assertion = await clientAssertion(appKey, world.issuer);
    const replaying = world.clients.config(apps.private_key_jwt.clientId, fixedAssertion(assertion));
    await refused(bogusRefresh(replaying), 'invalid_grant', 400, 'first use');
    await refused(bogusRefresh(replaying), 'invalid_client', 401, 'replay');
  });

  test('a private_key_jwt assertion signed with another key (same kid) is 401 invalid_client', async () => {
    const assertion = await clientAssertion(appKey, world.issuer, {}, { key: strangerKey() });
    await refused(bogusRefresh(world.clients.config(apps.private_key_jwt.clientId, fixedAssertion(assertion))), 'invalid_client', 401);
    await refused(
      client.tokenIntrospection(
        world.clients.config(apps.private_key_jwt.clientId, fixedAssertion(await clientAssertion(appKey, world.issuer, {}, { key: strangerKey() }))),
        'x',
      ),
      'invalid_client',
      401,
    );
  });

  test('a private_key_jwt assertion naming another client (iss/sub) is 401 invalid_client', async () => {
    const assertion = await clientAssertion(appKey, world.issuer, { iss: apps.client_secret_basic.clientId, sub: apps.client_secret_basic.clientId });
    await refused(bogusRefresh(world.clients.config(apps.private_key_jwt.clientId, fixedAssertion(assertion))), 'invalid_client', 401);
  });

  test('an expired private_key_jwt assertion is 401 invalid_client', async () => {
    const t = Math.floor(Date.now() / 1000);
    const assertion = await clientAssertion(appKey, world.issuer, { iat: t - 600, exp: t - 300 });
    await refused(bogusRefresh(world.clients.config(apps.private_key_jwt.clientId, fixedAssertion(assertion))), 'invalid_client', 401);
  });
});

describe('grant types', () => {
  test('a grant type the app is not allowed to use is unauthorized_client', async () => {
    await refused(bogusRefresh(codeOnlyConfig), 'unauthorized_client', 400, 'refresh_token on a code-only app');
    await refused(bogusExchange(codeOnlyConfig), 'unauthorized_client', 400, 'token exchange on a code-only app');
  });

  test('client_credentials for an app (only machine users have it) is unauthorized_client', async () => {
    await refused(client.clientCredentialsGrant(configs.client_secret_basic, { scope: 'openid' }), 'unauthorized_client', 400);
  });

  test('authorization_code for a machine user is unauthorized_client', async () => {
    await refused(bogusCode(world.clients.config(machine.clientId, client.ClientSecretBasic(machine.clientSecret))), 'unauthorized_client', 400);
  });

  test('an unknown grant_type is unsupported_grant_type', async () => {
    await refused(client.genericGrantRequest(configs.client_secret_basic, 'urn:example:unknown-grant', {}), 'unsupported_grant_type', 400);
    await refused(client.genericGrantRequest(configs.client_secret_basic, 'password', { username: 'a', password: 'b' }), 'unsupported_grant_type', 400);
  });

  test('a missing grant_type is 400 invalid_request (raw request: a library always sends one)', async () => {
    const app = apps.client_secret_post;
    const answer = await postForm(
      `${world.issuer}/oauth/v2/token`,
      new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret!, code: 'x' }),
    );
    assert.equal(answer.status, 400, answer.text);
    assert.equal(answer.json?.error, 'invalid_request');
  });
});
