import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPrivateKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import * as client from 'openid-client';
import { apiClient, request, type Api, type ApiResponse } from '../support/api.ts';
import { assertInvalid } from '../support/assertions.ts';
import { authorize, wentToLogin } from '../support/apps.ts';
import { insertPat, testServer, type TestServer } from '../support/server.ts';

// docs/api/projects-apps.md: projects, their roles and OIDC apps
// through the management API, and the apps as clients of the OIDC engine.

let server: TestServer;
let api: Api;

before(async () => {
  server = await testServer();
  api = apiClient(server.url, server.pat);
});
after(async () => {
  await server?.stop();
});

const PROJECTS = '/management/v1/projects';
const WEB_CB = 'https://app.example.com/cb';
const OTHER_CB = 'https://app.example.com/other';

function assertDetails(details: unknown): void {
  const d = details as Record<string, unknown>;
  assert.equal(typeof d?.sequence, 'string', 'details.sequence is a string');
  assert.match(d.sequence as string, /^\d+$/);
  assert.ok(!Number.isNaN(Date.parse(d.creationDate as string)), 'details.creationDate is a date');
  assert.ok(!Number.isNaN(Date.parse(d.changeDate as string)), 'details.changeDate is a date');
  assert.equal(typeof d.resourceOwner, 'string');
}

async function newProject(name = 'Shop', headers?: Record<string, string>): Promise<string> {
  const res = await api('POST', PROJECTS, { body: { name }, ...(headers ? { headers } : {}) });
  assert.equal(res.status, 200, res.text);
  return res.json.id as string;
}

function appsPath(projectId: string, appId = ''): string {
  return `${PROJECTS}/${projectId}/apps${appId ? `/${appId}` : '/oidc'}`;
}

/** App names are unique within a project: each app made here gets its own unless the test names it. */
let appNumber = 0;
const nextAppName = (prefix: string) => `${prefix} ${++appNumber}`;

async function newApp(projectId: string, body: Record<string, unknown>): Promise<{ appId: string; clientId: string; clientSecret?: string }> {
  const res = await api('POST', appsPath(projectId), { body: { name: nextAppName('App'), ...body } });
  assert.equal(res.status, 200, `create app ${JSON.stringify(body)}: ${res.text}`);
  return res.json;
}

/** The OAuth error of a failed openid-client call, whatever shape the library gave it. */
function oauthError(err: unknown): { error?: string; status?: number } {
  const e = err as { error?: string; status?: number; cause?: unknown };
  if (typeof e.error === 'string') return { error: e.error, status: e.status };
  const challenges = e.cause as Array<{ parameters?: { error?: string } }> | undefined;
  if (Array.isArray(challenges)) return { error: challenges[0]?.parameters?.error, status: e.status };
  return {};
}

async function refreshWith(config: client.Configuration): Promise<{ error?: string; status?: number }> {
  try {
    await client.refreshTokenGrant(config, 'bogus-refresh-token');
  } catch (err) {
    return oauthError(err);
  }
  assert.fail('a bogus refresh token was accepted');
}

describe('projects', () => {
  let projectId: string;

  test('creating a project answers its id and the write details', async () => {
    const res = await api('POST', PROJECTS, { body: { name: 'Shop' } });
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.id, /^\d+$/);
    assertDetails(res.json.details);
    projectId = res.json.id;
  });

  test('reading a project shows its name and (no) roles', async () => {
    const res = await api('GET', `${PROJECTS}/${projectId}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.project.id, projectId);
    assert.equal(res.json.project.name, 'Shop');
    assert.deepEqual(res.json.project.roles, []);
    assertDetails(res.json.project.details);
  });

  test('adding roles answers details; the display name defaults to the key', async () => {
    const added = await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey: 'admin', displayName: 'Administrator' } });
    assert.equal(added.status, 200, added.text);
    assertDetails(added.json.details);
    assert.deepEqual(Object.keys(added.json), ['details']);
    const plain = await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey: 'reader' } });
    assert.equal(plain.status, 200, plain.text);
    const res = await api('GET', `${PROJECTS}/${projectId}`);
    assert.deepEqual(
      [...res.json.project.roles].sort((a: { roleKey: string }, b: { roleKey: string }) => a.roleKey.localeCompare(b.roleKey)),
      [
        { roleKey: 'admin', displayName: 'Administrator' },
        { roleKey: 'reader', displayName: 'reader' },
      ],
    );
  });

  test('a role key that exists already is 409', async () => {
    const res = await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey: 'admin', displayName: 'Again' } });
    assert.equal(res.status, 409, res.text);
    assert.equal(res.json.code, 6);
  });

  test('role keys with whitespace, empty or over 200 characters are 400 naming roleKey', async () => {
    for (const roleKey of ['two words', 'tab\tkey', ' ', '', 'k'.repeat(201)]) {
      assertInvalid(await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey } }), ['roleKey'], { what: JSON.stringify(roleKey) });
    }
    assertInvalid(await api('POST', `${PROJECTS}/${projectId}/roles`, { body: {} }), ['roleKey'], { what: 'missing roleKey' });
    assertInvalid(await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey: 'x', displayName: 'd'.repeat(201) } }), ['displayName'], {
      what: 'long displayName',
    });
    assert.equal((await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey: 'k'.repeat(200) } })).status, 200, '200 characters are fine');
  });

  test('an unknown project is 404, for reading and for adding a role', async () => {
    assert.equal((await api('GET', `${PROJECTS}/123456789012345678`)).status, 404);
    const res = await api('POST', `${PROJECTS}/123456789012345678/roles`, { body: { roleKey: 'x' } });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.json.code, 5);
  });

  test('a project name that is empty, missing or over 200 characters is 400 naming name', async () => {
    assertInvalid(await api('POST', PROJECTS, { body: { name: '' } }), ['name'], { what: 'empty' });
    assertInvalid(await api('POST', PROJECTS, { body: {} }), ['name'], { what: 'missing' });
    assertInvalid(await api('POST', PROJECTS, { body: { name: 'n'.repeat(201) } }), ['name'], { what: '201 chars' });
    assertInvalid(await api('POST', PROJECTS, { body: { name: 42 } }), ['name'], { what: 'number' });
    assert.equal((await api('POST', PROJECTS, { body: { name: 'n'.repeat(200) } })).status, 200);
  });

  test('an unknown field or malformed JSON is 400', async () => {
    assertInvalid(await api('POST', PROJECTS, { body: { name: 'X', colour: 'red' } }), ['colour'], { what: 'unknown field' });
    assertInvalid(await api('POST', `${PROJECTS}/${projectId}/roles`, { body: { roleKey: 'x', extra: 1 } }), ['extra'], { what: 'unknown role field' });
    const res = await api('POST', PROJECTS, { raw: '{"name": ' });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.code, 3);
  });
});

describe('OIDC apps', () => {
  let projectId: string;
  let appId: string;
  let clientId: string;
  let clientSecret: string;

  before(async () => {
    projectId = await newProject('Apps');
  });

  test('creating a web app with defaults answers appId, clientId, a url-safe secret and details', async () => {
    const res = await api('POST', appsPath(projectId), { body: { name: 'Web', redirectUris: [WEB_CB] } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['appId', 'clientId', 'clientSecret', 'details']);
    assert.match(res.json.clientSecret, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(res.json.appId, res.json.clientId);
    assertDetails(res.json.details);
    ({ appId, clientId, clientSecret } = res.json);
  });

  test('reading the app shows its defaults and never the secret', async () => {
    const res = await api('GET', appsPath(projectId, appId));
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes(clientSecret), 'the secret must not be shown again');
    const { details, ...app } = res.json.app;
    assertDetails(details);
    assert.deepEqual(app, {
      appId,
      projectId,
      clientId,
      name: 'Web',
      redirectUris: [WEB_CB],
      postLogoutRedirectUris: [],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      accessTokenType: 'OIDC_TOKEN_TYPE_BEARER',
      idTokenUserinfoAssertion: false,
      accessTokenRoleAssertion: false,
      idTokenRoleAssertion: false,
      devMode: false,
      iamApiAccess: false,
      requirePushedAuthorizationRequests: false,
      dpopBoundAccessTokens: false,
      backChannelLogoutUri: '',
      backChannelLogoutSessionRequired: false,
    });
  });

  test('PUT changes only the fields it is given', async () => {
    const before = (await api('GET', appsPath(projectId, appId))).json.app;
    const res = await api('PUT', appsPath(projectId, appId), {
      body: { name: 'Web renamed', idTokenRoleAssertion: true, postLogoutRedirectUris: ['https://app.example.com/bye'] },
    });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details);
    assert.equal(res.json.clientSecret, undefined, 'the app keeps its secret');
    const after = (await api('GET', appsPath(projectId, appId))).json.app;
    assert.deepEqual(
      { ...after, details: undefined },
      { ...before, name: 'Web renamed', idTokenRoleAssertion: true, postLogoutRedirectUris: ['https://app.example.com/bye'], details: undefined },
    );
    assert.ok(BigInt(after.details.sequence) > BigInt(before.details.sequence), 'the sequence moves on');
  });

  test('PUT validates the result as a whole and refuses empty or unknown bodies', async () => {
    const dev = await newApp(projectId, { redirectUris: ['http://dev.example.com/cb'], devMode: true });
    assertInvalid(await api('PUT', appsPath(projectId, dev.appId), { body: { devMode: false } }), ['redirectUris[0]'], {
      what: 'devMode off with an http URI',
    });
    assertInvalid(await api('PUT', appsPath(projectId, dev.appId), { body: { redirectUris: [] } }), ['redirectUris'], {
      what: 'code flow without redirect URIs',
    });
    assert.equal((await api('PUT', appsPath(projectId, dev.appId), { body: {} })).status, 400, 'empty body');
    assertInvalid(await api('PUT', appsPath(projectId, dev.appId), { body: { clientSecret: 'mine' } }), ['clientSecret'], { what: 'unknown field' });
    assert.equal((await api('GET', appsPath(projectId, dev.appId))).json.app.devMode, true, 'refused changes leave the app alone');
  });

  test('an app moved to a secret method without a secret gets one, once', async () => {
    const pub = await newApp(projectId, { redirectUris: [WEB_CB], authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' });
    assert.equal(pub.clientSecret, undefined, 'no secret for NONE');
    const moved = await api('PUT', appsPath(projectId, pub.appId), { body: { authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST' } });
    assert.equal(moved.status, 200, moved.text);
    assert.match(moved.json.clientSecret, /^[A-Za-z0-9_-]{43}$/);
    const again = await api('PUT', appsPath(projectId, pub.appId), { body: { authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC' } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.clientSecret, undefined, 'it has a secret already');
  });

  test('an app of an unknown project, or unknown in its project, is 404', async () => {
    assert.equal((await api('GET', appsPath('123456789012345678', appId))).status, 404);
    assert.equal((await api('POST', appsPath('123456789012345678'), { body: { name: 'x', redirectUris: [WEB_CB] } })).status, 404);
    assert.equal((await api('GET', appsPath(projectId, '123456789012345678'))).status, 404);
    const otherProject = await newProject('Other');
    assert.equal((await api('GET', appsPath(otherProject, appId))).status, 404, 'an app is found only under its own project');
    assert.equal((await api('PUT', appsPath(otherProject, appId), { body: { name: 'x' } })).status, 404);
    assert.equal((await api('DELETE', appsPath(otherProject, appId))).status, 404);
  });

  test('DELETE removes the app: reading it afterwards is 404', async () => {
    const doomed = await newApp(projectId, { redirectUris: [WEB_CB] });
    const res = await api('DELETE', appsPath(projectId, doomed.appId));
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details);
    assert.equal((await api('GET', appsPath(projectId, doomed.appId))).status, 404);
    assert.equal((await api('DELETE', appsPath(projectId, doomed.appId))).status, 404);
  });
});

describe('app validation (400 naming the field)', () => {
  let projectId: string;
  before(async () => {
    projectId = await newProject('Validation');
  });
  const create = (body: Record<string, unknown>) => api('POST', appsPath(projectId), { body: { name: nextAppName('V'), ...body } });
  const NATIVE = { appType: 'OIDC_APP_TYPE_NATIVE', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' };

  test('redirect URIs: https without fragment, not localhost, unless devMode', async () => {
    assertInvalid(await create({ redirectUris: ['http://app.example.com/cb'] }), ['redirectUris[0]'], { what: 'http without devMode' });
    assert.equal((await create({ redirectUris: ['http://app.example.com/cb'], devMode: true })).status, 200, 'http with devMode');
    assertInvalid(await create({ redirectUris: ['https://localhost/cb'] }), ['redirectUris[0]'], { what: 'https://localhost without devMode' });
    assertInvalid(await create({ redirectUris: ['https://127.0.0.1/cb'] }), ['redirectUris[0]'], { what: 'https://127.0.0.1 without devMode' });
    assert.equal((await create({ redirectUris: ['https://localhost/cb'], devMode: true })).status, 200, 'localhost with devMode');
    assertInvalid(await create({ redirectUris: ['https://app.example.com/cb#frag'] }), ['redirectUris[0]'], { what: 'fragment' });
    assertInvalid(await create({ redirectUris: ['https://app.example.com/cb#'], devMode: true }), ['redirectUris[0]'], {
      what: 'empty fragment, even in devMode',
    });
    assertInvalid(await create({ redirectUris: ['/cb'] }), ['redirectUris[0]'], { what: 'relative' });
    assertInvalid(await create({ redirectUris: ['app.example.com/cb'] }), ['redirectUris[0]'], { what: 'no scheme' });
    assertInvalid(await create({ redirectUris: ['javascript:alert(1)'], devMode: true }), ['redirectUris[0]'], { what: 'javascript:' });
    assertInvalid(await create({ redirectUris: [WEB_CB, 'http://app.example.com/cb'] }), ['redirectUris[1]'], { what: 'the index of the bad URI is named' });
  });

  test('custom schemes are for native apps; native http only on loopback', async () => {
    assertInvalid(await create({ redirectUris: ['com.example.app:/cb'] }), ['redirectUris[0]'], { what: 'custom scheme for a web app' });
    assertInvalid(await create({ redirectUris: ['com.example.app:/cb'], devMode: true }), ['redirectUris[0]'], {
      what: 'custom scheme for a web app in devMode',
    });
    assert.equal((await create({ redirectUris: ['com.example.app:/cb'], ...NATIVE })).status, 200, 'custom scheme for a native app');
    assert.equal((await create({ redirectUris: ['http://127.0.0.1:8765/cb'], ...NATIVE })).status, 200, 'native http on 127.0.0.1');
    assertInvalid(await create({ redirectUris: ['http://app.example.com/cb'], ...NATIVE }), ['redirectUris[0]'], { what: 'native http on a public host' });
    for (const uri of ['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd']) {
      assertInvalid(await create({ redirectUris: [uri], ...NATIVE }), ['redirectUris[0]'], { what: `native ${uri}` });
    }
  });

  test('post-logout redirect URIs follow the same rules', async () => {
    const base = { redirectUris: [WEB_CB] };
    assertInvalid(await create({ ...base, postLogoutRedirectUris: ['http://app.example.com/bye'] }), ['postLogoutRedirectUris[0]'], { what: 'http' });
    assert.equal((await create({ ...base, postLogoutRedirectUris: ['http://app.example.com/bye'], devMode: true })).status, 200, 'http in devMode');
    assertInvalid(await create({ ...base, postLogoutRedirectUris: ['https://localhost/bye'] }), ['postLogoutRedirectUris[0]'], { what: 'localhost' });
    assertInvalid(await create({ ...base, postLogoutRedirectUris: ['https://app.example.com/bye#x'] }), ['postLogoutRedirectUris[0]'], { what: 'fragment' });
    assertInvalid(await create({ ...base, postLogoutRedirectUris: ['/bye'] }), ['postLogoutRedirectUris[0]'], { what: 'relative' });
    assertInvalid(await create({ ...base, postLogoutRedirectUris: ['javascript:alert(1)'] }), ['postLogoutRedirectUris[0]'], { what: 'javascript:' });
    assertInvalid(await create({ ...base, postLogoutRedirectUris: ['com.example.app:/bye'] }), ['postLogoutRedirectUris[0]'], {
      what: 'custom scheme for web',
    });
    assert.equal(
      (await create({ redirectUris: ['com.example.app:/cb'], postLogoutRedirectUris: ['com.example.app:/bye'], ...NATIVE })).status,
      200,
      'custom scheme for native',
    );
  });

  test('response types and grant types must match each other', async () => {
    const cb = { redirectUris: [WEB_CB] };
    assertInvalid(await create({ ...cb, responseTypes: ['OIDC_RESPONSE_TYPE_CODE'], grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT'] }), ['grantTypes'], {
      what: 'CODE without AUTHORIZATION_CODE',
    });
    assertInvalid(await create({ ...cb, responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN'], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'] }), ['grantTypes'], {
      what: 'ID_TOKEN without IMPLICIT',
    });
    assertInvalid(
      await create({ ...cb, responseTypes: ['OIDC_RESPONSE_TYPE_CODE'], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_IMPLICIT'] }),
      ['responseTypes'],
      { what: 'IMPLICIT without an implicit response type' },
    );
    assertInvalid(
      await create({ ...cb, responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN'], grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] }),
      ['grantTypes'],
      { what: 'REFRESH_TOKEN without AUTHORIZATION_CODE' },
    );
    assert.equal(
      (
        await create({
          ...cb,
          responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 'OIDC_RESPONSE_TYPE_ID_TOKEN'],
          grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_IMPLICIT', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
        })
      ).status,
      200,
      'a consistent hybrid set is fine',
    );
  });

  test('user-agent and native apps must use auth method NONE', async () => {
    assertInvalid(
      await create({ redirectUris: [WEB_CB], appType: 'OIDC_APP_TYPE_USER_AGENT', authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC' }),
      ['authMethodType'],
      { what: 'USER_AGENT with BASIC' },
    );
    assertInvalid(await create({ redirectUris: [WEB_CB], appType: 'OIDC_APP_TYPE_USER_AGENT' }), ['authMethodType'], {
      what: 'USER_AGENT with the default BASIC',
    });
    assertInvalid(
      await create({ redirectUris: ['com.example.app:/cb'], appType: 'OIDC_APP_TYPE_NATIVE', authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST' }),
      ['authMethodType'],
      { what: 'NATIVE with POST' },
    );
  });

  test('the code flow needs at least one redirect URI', async () => {
    assertInvalid(await create({}), ['redirectUris'], { what: 'no redirect URIs at all' });
    assertInvalid(await create({ redirectUris: [] }), ['redirectUris'], { what: 'an empty list' });
  });

  test('unknown enum values, duplicate entries, bad names and too many URIs are refused', async () => {
    const cb = { redirectUris: [WEB_CB] };
    assertInvalid(await create({ ...cb, responseTypes: ['OIDC_RESPONSE_TYPE_TOKEN'] }), ['responseTypes[0]'], { what: 'unknown response type' });
    assertInvalid(await create({ ...cb, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_PASSWORD'] }), ['grantTypes[1]'], {
      what: 'unknown grant type',
    });
    assertInvalid(await create({ ...cb, appType: 'OIDC_APP_TYPE_DESKTOP' }), ['appType'], { what: 'unknown app type' });
    assertInvalid(await create({ ...cb, authMethodType: 'OIDC_AUTH_METHOD_TYPE_TLS' }), ['authMethodType'], { what: 'unknown auth method' });
    assertInvalid(await create({ ...cb, accessTokenType: 'OIDC_TOKEN_TYPE_MAC' }), ['accessTokenType'], { what: 'unknown token type' });
    assertInvalid(await create({ ...cb, responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 'OIDC_RESPONSE_TYPE_CODE'] }), ['responseTypes'], {
      what: 'duplicate response type',
    });
    assertInvalid(await create({ ...cb, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_AUTHORIZATION_CODE'] }), ['grantTypes'], {
      what: 'duplicate grant type',
    });
    assertInvalid(await create({ ...cb, responseTypes: [] }), ['responseTypes'], { what: 'no response types' });
    assertInvalid(await create({ ...cb, name: '' }), ['name'], { what: 'empty name' });
    assertInvalid(await create({ ...cb, name: 'n'.repeat(201) }), ['name'], { what: '201-character name' });
    assertInvalid(await api('POST', appsPath(projectId), { body: { redirectUris: [WEB_CB] } }), ['name'], { what: 'missing name' });
    assertInvalid(await create({ ...cb, devMode: 'yes' }), ['devMode'], { what: 'a non-boolean flag' });
    const many = Array.from({ length: 51 }, (_, i) => `https://app.example.com/cb${i}`);
    assertInvalid(await create({ redirectUris: many }), ['redirectUris'], { what: '51 redirect URIs' });
    assertInvalid(await create({ ...cb, postLogoutRedirectUris: many }), ['postLogoutRedirectUris'], { what: '51 post-logout URIs' });
    assert.equal((await create({ redirectUris: many.slice(0, 50) })).status, 200, '50 redirect URIs are fine');
    assertInvalid(await create({ ...cb, clientSecret: 'chosen' }), ['clientSecret'], { what: 'unknown field' });
    const malformed = await api('POST', appsPath(projectId), { raw: '{"name":"x",' });
    assert.equal(malformed.status, 400, malformed.text);
  });
});

describe('permissions', () => {
  let otherOrgId: string;
  let managerToken: string;
  let otherProjectId: string;
  let otherAppId: string;

  before(async () => {
    const setup = await api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Second Org' },
        human: {
          userName: 'manny',
          profile: { firstName: 'Manny', lastName: 'Manager' },
          email: { email: 'manny@second.example.com', isEmailVerified: true },
          password: 'S3cure-Passw0rd!',
        },
        roles: ['ORG_USER_MANAGER'],
      },
    });
    assert.equal(setup.status, 200, setup.text);
    otherOrgId = setup.json.orgId;
    managerToken = await insertPat(server, setup.json.userId);
    otherProjectId = await newProject('Second project', { 'x-service-orgid': otherOrgId });
    const app = await api('POST', appsPath(otherProjectId), {
      body: { name: 'Second app', redirectUris: [WEB_CB] },
      headers: { 'x-service-orgid': otherOrgId },
    });
    assert.equal(app.status, 200, app.text);
    otherAppId = app.json.appId;
  });

  test('no token is 401', async () => {
    for (const [method, path] of [
      ['POST', PROJECTS],
      ['GET', `${PROJECTS}/${otherProjectId}`],
      ['POST', appsPath(otherProjectId)],
      ['DELETE', appsPath(otherProjectId, otherAppId)],
    ] as const) {
      const res = await api(method, path, { token: null, ...(method === 'POST' ? { body: { name: 'x' } } : {}) });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
      assert.equal(res.json.code, 16);
    }
    assert.equal((await api('GET', `${PROJECTS}/${otherProjectId}`, { token: 'not-a-real-token' })).status, 401);
  });

  test('the manager PAT is a valid token (sanity check for the 403s)', async () => {
    // Any authenticated call that is not a permission failure: an unknown org is 404.
    const res = await api('GET', `${PROJECTS}/${otherProjectId}`, { token: managerToken, headers: { 'x-service-orgid': '999999999999999999' } });
    assert.equal(res.status, 404, res.text);
  });

  test('a user without ORG_OWNER is 403, in their own org and in another', async () => {
    const calls: Array<[string, string, unknown]> = [
      ['POST', PROJECTS, { name: 'Mine' }],
      ['GET', `${PROJECTS}/${otherProjectId}`, undefined],
      ['POST', `${PROJECTS}/${otherProjectId}/roles`, { roleKey: 'r' }],
      ['POST', appsPath(otherProjectId), { name: 'x', redirectUris: [WEB_CB] }],
      ['GET', appsPath(otherProjectId, otherAppId), undefined],
      ['PUT', appsPath(otherProjectId, otherAppId), { name: 'taken over' }],
      ['DELETE', appsPath(otherProjectId, otherAppId), undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await api(method, path, { token: managerToken, ...(body === undefined ? {} : { body }) });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      assert.equal(res.json.code, 7);
    }
    const firstOrg = await adminOrgId();
    const res = await api('POST', PROJECTS, { token: managerToken, body: { name: 'Elsewhere' }, headers: { 'x-service-orgid': firstOrg } });
    assert.equal(res.status, 403, res.text);
    const unchanged = await api('GET', appsPath(otherProjectId, otherAppId), { headers: { 'x-service-orgid': otherOrgId } });
    assert.equal(unchanged.json.app.name, 'Second app', 'nothing changed');
  });

  test('a project or app of another org is 404 in the acting org', async () => {
    const own = { 'x-service-orgid': await adminOrgId() };
    assert.equal((await api('GET', `${PROJECTS}/${otherProjectId}`, { headers: own })).status, 404);
    assert.equal((await api('GET', `${PROJECTS}/${otherProjectId}`)).status, 404, 'the caller’s own org by default');
    assert.equal((await api('POST', `${PROJECTS}/${otherProjectId}/roles`, { body: { roleKey: 'r' }, headers: own })).status, 404);
    assert.equal((await api('GET', appsPath(otherProjectId, otherAppId), { headers: own })).status, 404);
    assert.equal((await api('PUT', appsPath(otherProjectId, otherAppId), { body: { name: 'x' }, headers: own })).status, 404);
    assert.equal((await api('DELETE', appsPath(otherProjectId, otherAppId), { headers: own })).status, 404);
    assert.equal((await api('POST', appsPath(otherProjectId), { body: { name: 'x', redirectUris: [WEB_CB] }, headers: own })).status, 404);
    const inOwnOrg = await api('GET', `${PROJECTS}/${otherProjectId}`, { headers: { 'x-service-orgid': otherOrgId } });
    assert.equal(inOwnOrg.status, 200, 'found in the org it belongs to');
    assert.equal(inOwnOrg.json.project.details.resourceOwner, otherOrgId);
  });

  test('an unknown x-service-orgid is 404', async () => {
    for (const orgId of ['999999999999999999', 'x'.repeat(100)]) {
      const res = await api('POST', PROJECTS, { body: { name: 'Nowhere' }, headers: { 'x-service-orgid': orgId } });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json.code, 5);
    }
  });

  async function adminOrgId(): Promise<string> {
    // Project names are unique within an org: each probe has its own.
    const probe = await api('POST', PROJECTS, { body: { name: `Probe ${randomUUID()}` } });
    assert.equal(probe.status, 200, probe.text);
    return probe.json.details.resourceOwner as string;
  }
});

describe('apps as clients of the OIDC engine', () => {
  let projectId: string;
  before(async () => {
    projectId = await newProject('Engine');
  });
  const codeParams = (clientId: string, redirectUri: string) => ({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    state: 'x',
  });

  function assertRefusedWithoutRedirect(res: ApiResponse, what: string): void {
    assert.equal(res.status, 400, `${what}: ${res.status} ${res.text.slice(0, 300)}`);
    assert.equal(res.headers.get('location'), null, `${what}: must not redirect`);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/, `${what}: an HTML error page`);
  }

  test('a registered redirect URI goes to the login page; an unregistered one gets an error page', async () => {
    const app = await newApp(projectId, { redirectUris: [WEB_CB, OTHER_CB] });
    const ok = await authorize(server.url, codeParams(app.clientId, WEB_CB));
    assert.ok(wentToLogin(ok, server.url), `expected 303 to /ui/login/: ${ok.status} ${ok.headers.get('location')}`);
    assertRefusedWithoutRedirect(await authorize(server.url, codeParams(app.clientId, 'https://evil.example.com/cb')), 'unregistered redirect_uri');
  });

  test('removing a redirect URI, then the app, takes effect at once', async () => {
    const app = await newApp(projectId, { redirectUris: [WEB_CB, OTHER_CB] });
    assert.ok(wentToLogin(await authorize(server.url, codeParams(app.clientId, WEB_CB)), server.url), 'accepted first (and now cached)');
    const changed = await api('PUT', appsPath(projectId, app.appId), { body: { redirectUris: [OTHER_CB] } });
    assert.equal(changed.status, 200, changed.text);
    assertRefusedWithoutRedirect(await authorize(server.url, codeParams(app.clientId, WEB_CB)), 'removed redirect_uri');
    assert.ok(wentToLogin(await authorize(server.url, codeParams(app.clientId, OTHER_CB)), server.url), 'the remaining one still works');
    assert.equal((await api('DELETE', appsPath(projectId, app.appId))).status, 200);
    assertRefusedWithoutRedirect(await authorize(server.url, codeParams(app.clientId, OTHER_CB)), 'removed app');
  });

  test('an unknown client_id is refused without a redirect', async () => {
    assertRefusedWithoutRedirect(await authorize(server.url, codeParams('123456789012345678', WEB_CB)), 'unknown client');
  });

  test('a user-agent app in devMode may use implicit id_token token on http://localhost', async () => {
    const app = await newApp(projectId, {
      redirectUris: ['http://localhost:3000/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN'],
      grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT'],
      appType: 'OIDC_APP_TYPE_USER_AGENT',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      devMode: true,
    });
    assert.equal(app.clientSecret, undefined);
    const res = await authorize(server.url, {
      client_id: app.clientId,
      redirect_uri: 'http://localhost:3000/cb',
      response_type: 'id_token token',
      scope: 'openid',
      state: 'x',
      nonce: 'n-1',
    });
    assert.ok(wentToLogin(res, server.url), `expected the login page: ${res.status} ${res.headers.get('location')} ${res.text.slice(0, 300)}`);
  });

  test('a public code app must use PKCE (S256)', async () => {
    const app = await newApp(projectId, {
      redirectUris: ['com.example.app:/cb'],
      appType: 'OIDC_APP_TYPE_NATIVE',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    });
    const plain = await authorize(server.url, codeParams(app.clientId, 'com.example.app:/cb'));
    assert.ok(plain.status >= 300 && plain.status < 400, `an error redirect: ${plain.status} ${plain.text.slice(0, 200)}`);
    const location = new URL(plain.headers.get('location')!);
    assert.equal(`${location.protocol}${location.pathname}`, 'com.example.app:/cb');
    const params = new URLSearchParams(location.search || location.hash.slice(1));
    assert.equal(params.get('error'), 'invalid_request');
    assert.equal(params.get('state'), 'x');
    const verifier = client.randomPKCECodeVerifier();
    const challenge = await client.calculatePKCECodeChallenge(verifier);
    const pkce = await authorize(server.url, { ...codeParams(app.clientId, 'com.example.app:/cb'), code_challenge: challenge, code_challenge_method: 'S256' });
    assert.ok(wentToLogin(pkce, server.url), `with PKCE: ${pkce.status} ${pkce.headers.get('location')}`);
  });
});

describe('client authentication at the token endpoint', () => {
  let projectId: string;
  before(async () => {
    projectId = await newProject('Secrets');
  });
  const refreshable = { redirectUris: [WEB_CB], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] };
  const insecure = { execute: [client.allowInsecureRequests] };

  test('client_secret_basic: the secret is accepted, a wrong one is invalid_client (401)', async () => {
    const app = await newApp(projectId, refreshable);
    const good = await client.discovery(new URL(server.issuer), app.clientId, app.clientSecret, undefined, insecure);
    assert.deepEqual(await refreshWith(good), { error: 'invalid_grant', status: 400 });
    const bad = await client.discovery(new URL(server.issuer), app.clientId, `${app.clientSecret!.slice(0, -1)}x`, undefined, insecure);
    assert.deepEqual(await refreshWith(bad), { error: 'invalid_client', status: 401 });
    // The secret survives a change of other settings.
    assert.equal((await api('PUT', appsPath(projectId, app.appId), { body: { name: 'Renamed' } })).status, 200);
    assert.equal((await refreshWith(good)).error, 'invalid_grant');
  });

  test('client_secret_post: the secret is accepted, a wrong one is invalid_client (401)', async () => {
    const app = await newApp(projectId, { ...refreshable, authMethodType: 'OIDC_AUTH_METHOD_TYPE_POST' });
    const good = await client.discovery(new URL(server.issuer), app.clientId, app.clientSecret, client.ClientSecretPost(), insecure);
    assert.deepEqual(await refreshWith(good), { error: 'invalid_grant', status: 400 });
    const bad = await client.discovery(new URL(server.issuer), app.clientId, 'wrong-secret', client.ClientSecretPost(), insecure);
    assert.deepEqual(await refreshWith(bad), { error: 'invalid_client', status: 401 });
  });

  test('the token endpoint never answers 500 to odd client authentication', async () => {
    const app = await newApp(projectId, refreshable);
    const token = `${server.url}/oauth/v2/token`;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const attempts: RequestInit[] = [
      {
        method: 'POST',
        headers: { ...form, authorization: `Basic ${Buffer.from(`${app.clientId}:`).toString('base64')}` },
        body: 'grant_type=refresh_token&refresh_token=x',
      },
      { method: 'POST', headers: { ...form, authorization: 'Basic !!!' }, body: 'grant_type=refresh_token&refresh_token=x' },
      { method: 'POST', headers: form, body: `grant_type=refresh_token&refresh_token=x&client_id=${app.clientId}&client_secret=${'a'.repeat(5000)}` },
      { method: 'POST', headers: form, body: `grant_type=refresh_token&refresh_token=x&client_id=${'9'.repeat(300)}&client_secret=x` },
      {
        method: 'POST',
        headers: form,
        body: `grant_type=refresh_token&refresh_token=x&client_id=${app.clientId}&client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer&client_assertion=a.b.c`,
      },
    ];
    for (const init of attempts) {
      const res = await request(token, init);
      assert.ok(res.status === 400 || res.status === 401, `${res.status} ${res.text}`);
    }
  });
});

describe('app keys and private_key_jwt', () => {
  let projectId: string;
  let app: { appId: string; clientId: string };
  let keyFile: { type: string; keyId: string; key: string; appId: string; clientId: string };

  before(async () => {
    projectId = await newProject('Keys');
    app = await newApp(projectId, {
      redirectUris: [WEB_CB],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT',
    });
  });

  const keysPath = (appId: string) => `${appsPath(projectId, appId)}/keys`;

  test('a PRIVATE_KEY_JWT app gets no client secret', async () => {
    assert.equal((app as { clientSecret?: string }).clientSecret, undefined);
  });

  test('adding a key answers a key file with the private key, once', async () => {
    const res = await api('POST', keysPath(app.appId), { body: { type: 'KEY_TYPE_JSON' } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.json.details);
    keyFile = JSON.parse(Buffer.from(res.json.keyDetails, 'base64').toString('utf8'));
    assert.deepEqual(Object.keys(keyFile).sort(), ['appId', 'clientId', 'key', 'keyId', 'type']);
    assert.equal(keyFile.type, 'application');
    assert.equal(keyFile.keyId, res.json.id);
    assert.equal(keyFile.appId, app.appId);
    assert.equal(keyFile.clientId, app.clientId);
    assert.match(keyFile.key, /^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n?$/);
    const view = await api('GET', appsPath(projectId, app.appId));
    assert.ok(!view.text.includes('PRIVATE KEY'), 'the private key is not kept');
  });

  test('keys are only for PRIVATE_KEY_JWT apps, and must not expire in the past', async () => {
    const basic = await newApp(projectId, { redirectUris: [WEB_CB] });
    assertInvalid(await api('POST', keysPath(basic.appId), { body: { type: 'KEY_TYPE_JSON' } }), ['authMethodType'], { what: 'key for a BASIC app' });
    assertInvalid(await api('POST', keysPath(app.appId), { body: { type: 'KEY_TYPE_JSON', expirationDate: '2001-01-01T00:00:00Z' } }), ['expirationDate'], {
      what: 'past expiration',
    });
    assertInvalid(await api('POST', keysPath(app.appId), { body: { type: 'KEY_TYPE_JSON', expirationDate: 'tomorrow' } }), ['expirationDate'], {
      what: 'not a date',
    });
    assertInvalid(await api('POST', keysPath(app.appId), { body: { type: 'KEY_TYPE_PEM' } }), ['type'], { what: 'unknown key type' });
    assertInvalid(await api('POST', keysPath(app.appId), { body: {} }), ['type'], { what: 'missing type' });
    const future = await api('POST', keysPath(app.appId), { body: { type: 'KEY_TYPE_JSON', expirationDate: '2099-01-01T00:00:00Z' } });
    assert.equal(future.status, 200, future.text);
    assert.equal(future.json.expirationDate, '2099-01-01T00:00:00.000Z');
    assert.equal((await api('POST', keysPath('123456789012345678'), { body: { type: 'KEY_TYPE_JSON' } })).status, 404);
  });

  async function tokenWithAssertion(key: Parameters<SignJWT['sign']>[0], kid: string): Promise<ApiResponse> {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer(app.clientId)
      .setSubject(app.clientId)
      .setAudience(server.issuer)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(key);
    return request(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'bogus-refresh-token',
        client_id: app.clientId,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
      }).toString(),
    });
  }

  test('an assertion signed with the key authenticates the app', async () => {
    const res = await tokenWithAssertion(createPrivateKey(keyFile.key), keyFile.keyId);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error, 'invalid_grant', 'the client was authenticated; only the refresh token is bad');
  });

  test('an assertion signed by another key is invalid_client', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const res = await tokenWithAssertion(privateKey, keyFile.keyId);
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.error, 'invalid_client');
  });
});

describe('concurrent writes to one app', () => {
  let projectId: string;
  before(async () => {
    projectId = await newProject('Races');
  });

  async function appEvents(appId: string): Promise<string[]> {
    const { rows } = await server.running.db.query<{ event_type: string }>("SELECT event_type FROM events WHERE payload->>'appId' = $1 ORDER BY position", [
      appId,
    ]);
    return rows.map((row) => row.event_type);
  }

  test('adding a key while the app is being deleted answers 200 or 404, never 500', async () => {
    for (let i = 0; i < 5; i++) {
      const app = await newApp(projectId, { redirectUris: [WEB_CB], authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' });
      const [key, removed] = await Promise.all([
        api('POST', `${appsPath(projectId, app.appId)}/keys`, { body: { type: 'KEY_TYPE_JSON' } }),
        api('DELETE', appsPath(projectId, app.appId)),
      ]);
      assert.equal(removed.status, 200, removed.text);
      assert.ok(key.status === 200 || key.status === 404, `key: ${key.status} ${key.text}`);
    }
  });

  test('two concurrent PUTs of different fields both take effect', async () => {
    for (let i = 0; i < 5; i++) {
      const app = await newApp(projectId, { redirectUris: [WEB_CB] });
      const results = await Promise.all([
        api('PUT', appsPath(projectId, app.appId), { body: { name: `renamed ${i}` } }),
        api('PUT', appsPath(projectId, app.appId), { body: { idTokenRoleAssertion: true } }),
      ]);
      for (const res of results) assert.equal(res.status, 200, res.text);
      const { app: got } = (await api('GET', appsPath(projectId, app.appId))).json;
      assert.deepEqual(
        { name: got.name, idTokenRoleAssertion: got.idTokenRoleAssertion },
        { name: `renamed ${i}`, idTokenRoleAssertion: true },
        `round ${i}: one change was lost`,
      );
    }
  });

  test('of two concurrent DELETEs of one app, one succeeds and the other is 404', async () => {
    for (let i = 0; i < 5; i++) {
      const app = await newApp(projectId, { redirectUris: [WEB_CB] });
      const results = await Promise.all([api('DELETE', appsPath(projectId, app.appId)), api('DELETE', appsPath(projectId, app.appId))]);
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 404], `round ${i}`);
      assert.deepEqual(await appEvents(app.appId), ['project.application.added', 'project.application.removed'], `round ${i}: the event log`);
    }
  });

  test('a PUT racing a DELETE never records a change after the removal', async () => {
    for (let i = 0; i < 5; i++) {
      const app = await newApp(projectId, { redirectUris: [WEB_CB] });
      const [removed, changed] = await Promise.all([
        api('DELETE', appsPath(projectId, app.appId)),
        api('PUT', appsPath(projectId, app.appId), { body: { name: 'late' } }),
      ]);
      assert.equal(removed.status, 200, removed.text);
      assert.ok(changed.status === 200 || changed.status === 404, changed.text);
      const events = await appEvents(app.appId);
      assert.equal(events.at(-1), 'project.application.removed', `round ${i}: events ${events.join(', ')}`);
      assert.equal(changed.status === 200, events.includes('project.application.changed'), `round ${i}: a 200 PUT is in the log, a 404 one is not`);
    }
  });
});
