import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { PASSWORD_COMPLEXITY_POLICY } from '../../src/domain/policies/password-complexity.ts';
import { firstStart } from '../../src/commands/first-start.ts';
import { CONSOLE_CLIENT_ID, consoleRedirectUri, ensureConsoleApp } from '../../src/commands/console-app.ts';
import { openTestDatabase, type TestDatabase } from '../support/stores.ts';
import { freePort, tempDir, testServer, type TestServer } from '../support/server.ts';
import { apiClient } from '../support/api.ts';
import { codeLogin, launchBrowser, needsChromium } from '../support/browser.ts';

// The built-in console app (docs/security.md): a public PKCE app of the
// first org that may obtain the API scope, there after the first start and
// after an upgrade, written once however many nodes start; and the access
// token of a browser login through it opens the admin and management API
// with the user's own roles, like a PAT.

const ISSUER = 'https://id.example.test';

async function consoleApps(db: TestDatabase['db']) {
  const { rows } = await db.query<{
    org_id: string;
    client_id: string;
    app_type: string;
    auth_method: string;
    iam_api_access: boolean;
    redirect_uris: string[];
    secret_digest: unknown;
    dev_mode: boolean;
  }>('SELECT org_id, client_id, app_type, auth_method, iam_api_access, redirect_uris, secret_digest, dev_mode FROM apps WHERE client_id = $1', [
    CONSOLE_CLIENT_ID,
  ]);
  return rows;
}

describe('the console app in the database', () => {
  let store: TestDatabase;
  let dataDir: string;
  let firstOrgId: string;

  before(async () => {
    store = await openTestDatabase();
    dataDir = tempDir();
    await firstStart(store.db, {
      instanceDomain: 'example.test',
      passwordComplexity: PASSWORD_COMPLEXITY_POLICY,
      instanceOrgName: 'Default',
      dataDir,
      secretKey: randomBytes(32),
    });
    firstOrgId = (await store.db.query<{ default_org_id: string }>('SELECT default_org_id FROM instance')).rows[0]!.default_org_id;
  });
  after(async () => {
    await store?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is created once when several nodes start together on an instance without it (an upgrade): public, PKCE, first org, API access', async () => {
    assert.deepEqual(await consoleApps(store.db), []);
    const results = await Promise.all([1, 2, 3].map(() => ensureConsoleApp(store.db, ISSUER)));
    assert.deepEqual(results.sort(), ['created', 'unchanged', 'unchanged']);
    const apps = await consoleApps(store.db);
    assert.equal(apps.length, 1);
    assert.deepEqual(
      { ...apps[0] },
      {
        org_id: firstOrgId,
        client_id: CONSOLE_CLIENT_ID,
        app_type: 'OIDC_APP_TYPE_USER_AGENT',
        auth_method: 'OIDC_AUTH_METHOD_TYPE_NONE',
        iam_api_access: true,
        redirect_uris: [`${ISSUER}/ui/console/callback`],
        secret_digest: null,
        dev_mode: false,
      },
    );
  });

  it('a later start changes nothing; another ISSUER moves its redirect URI (devMode only for http)', async () => {
    const events = async () => (await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
    const before = await events();
    assert.equal(await ensureConsoleApp(store.db, ISSUER), 'unchanged');
    assert.equal(await events(), before);
    assert.equal(await ensureConsoleApp(store.db, 'http://127.0.0.1:8080'), 'updated');
    const [app] = await consoleApps(store.db);
    assert.deepEqual(app!.redirect_uris, ['http://127.0.0.1:8080/ui/console/callback']);
    assert.equal(app!.dev_mode, true);
    assert.equal(await events(), before + 1);
  });

  it('is put back after an org owner changed it', async () => {
    await store.db.query('UPDATE apps SET iam_api_access = false, redirect_uris = $2 WHERE client_id = $1', [
      CONSOLE_CLIENT_ID,
      ['https://elsewhere.example/cb'],
    ]);
    assert.equal(await ensureConsoleApp(store.db, ISSUER), 'updated');
    const [app] = await consoleApps(store.db);
    assert.equal(app!.iam_api_access, true);
    assert.deepEqual(app!.redirect_uris, [consoleRedirectUri(ISSUER)]);
  });
});

describe('in Chromium: a browser login through the console app on the API', { skip: needsChromium }, () => {
  const ADMIN_PASSWORD = 'Console-Admin-Passw0rd';
  let server: TestServer;
  let browser: Browser;
  let config: client.Configuration;
  let adminLogin: string;
  let owner: { loginName: string; password: string; orgId: string };

  before(async () => {
    const port = await freePort();
    [server, browser] = await Promise.all([testServer({ env: { PORT: String(port), ISSUER: `http://localhost:${port}`, ADMIN_PASSWORD } }), launchBrowser()]);
    adminLogin = 'admin@default.example.test';
    const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'ACME', domain: 'acme.example.test' },
        human: { userName: 'owner', profile: { firstName: 'O', lastName: 'Wner' }, email: { email: 'owner@acme.example.test' }, password: 'Owner-Passw0rd' },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    owner = { loginName: 'owner@acme.example.test', password: 'Owner-Passw0rd', orgId: setup.body.orgId };
    config = await client.discovery(new URL(server.issuer), CONSOLE_CLIENT_ID, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Signs in through the console app, the code redeemed here: the console page itself never sees it. */
  async function tokenOf(user: { loginName: string; password: string }, scope: string): Promise<string> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.route(`${server.issuer}/ui/console/**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'callback' }));
      const { tokens } = await codeLogin(page, config, { callback: consoleRedirectUri(server.issuer) }, user, scope);
      return tokens.access_token;
    } finally {
      await context.close();
    }
  }

  it("the first-start admin's token carries the API scope and acts with IAM_OWNER", async () => {
    const token = await tokenOf({ loginName: adminLogin, password: ADMIN_PASSWORD }, 'openid profile urn:service:iam:api');
    const api = apiClient(server.url, token);
    const orgs = await api('POST', '/admin/v1/orgs/_search', { body: {} });
    assert.equal(orgs.status, 200, orgs.text);
    assert.equal(orgs.body.details.totalResult, '2');
    const users = await api('POST', '/management/v1/users/_search', { body: {}, orgId: owner.orgId });
    assert.equal(users.status, 200, users.text);
    const rotate = await api('POST', '/admin/v1/signing_keys/_rotate', { body: {} });
    assert.equal(rotate.status, 200, rotate.text);
    // A write names the signed-in admin as its editor.
    const project = await api('POST', '/management/v1/projects', { body: { name: 'By the console' } });
    assert.equal(project.status, 200, project.text);
    const { rows } = await server.running.db.query<{ user_name: string }>(
      "SELECT u.user_name FROM events e JOIN users u ON u.id = e.creator WHERE e.event_type = 'project.added' AND e.aggregate_id = $1",
      [project.body.id],
    );
    assert.deepEqual(rows, [{ user_name: 'admin' }]);
  });

  it("an org owner's token acts with the org owner's roles only", async () => {
    const token = await tokenOf(owner, 'openid urn:service:iam:api');
    const api = apiClient(server.url, token);
    const users = await api('POST', '/management/v1/users/_search', { body: {} });
    assert.equal(users.status, 200, users.text);
    assert.deepEqual(
      users.body.result.map((u: { userName: string }) => u.userName),
      ['owner'],
    );
    assert.equal((await api('POST', '/admin/v1/orgs/_search', { body: {} })).status, 403);
    assert.equal((await api('POST', '/admin/v1/signing_keys/_rotate', { body: {} })).status, 403);
  });

  it('a token of the console app without the API scope is refused with 401', async () => {
    const token = await tokenOf({ loginName: adminLogin, password: ADMIN_PASSWORD }, 'openid profile');
    const answer = await apiClient(server.url, token)('POST', '/admin/v1/orgs/_search', { body: {} });
    assert.equal(answer.status, 401);
  });
});

describe('who may change the console app', () => {
  let server: TestServer;
  let admin: ReturnType<typeof apiClient>;
  let firstOrgOwner: ReturnType<typeof apiClient>;
  let app: { appId: string; projectId: string };

  before(async () => {
    server = await testServer();
    admin = server.api;
    const { rows } = await server.running.db.query<{ id: string; project_id: string }>('SELECT id, project_id FROM apps WHERE client_id = $1', [
      CONSOLE_CLIENT_ID,
    ]);
    app = { appId: rows[0]!.id, projectId: rows[0]!.project_id };
    // An ORG_OWNER of the first org who is no instance owner.
    const machine = await admin('POST', '/management/v1/users/machine', { body: { userName: 'first-org-owner', name: 'First org owner' } });
    assert.equal((await admin('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles: ['ORG_OWNER'] } })).status, 200);
    const pat = await admin('POST', `/management/v1/users/${machine.body.userId}/pats`, { body: {} });
    firstOrgOwner = apiClient(server.url, pat.body.token);
  });
  after(() => server?.stop());

  it('an org owner of the first org may read it but neither redirect it elsewhere, give it keys nor remove it', async () => {
    const path = `/management/v1/projects/${app.projectId}/apps/${app.appId}`;
    const read = await firstOrgOwner('GET', path);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.app.iamApiAccess, true);
    assert.equal((await firstOrgOwner('PUT', path, { body: { redirectUris: ['https://attacker.example/cb'] } })).status, 403);
    assert.equal((await firstOrgOwner('POST', `${path}/keys`, { body: { type: 'KEY_TYPE_JSON' } })).status, 403);
    assert.equal((await firstOrgOwner('DELETE', path)).status, 403);
    assert.deepEqual((await admin('GET', path)).body.app.redirectUris, [consoleRedirectUri(server.issuer)]);
  });

  it('the instance owner may', async () => {
    const path = `/management/v1/projects/${app.projectId}/apps/${app.appId}`;
    const changed = await admin('PUT', path, { body: { idTokenRoleAssertion: true } });
    assert.equal(changed.status, 200, changed.text);
  });
});
