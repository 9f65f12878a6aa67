import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { needsPostgres } from '../support/stores.ts';
import { apiClient, basicHeader, request, type Api, type ApiResponse } from '../support/api.ts';
import { freePort, sharedStorageEnv, sleep } from '../support/server.ts';
import { authorize, startChild, wentToLogin, type ChildServer } from '../support/apps.ts';

// docs/api/projects-apps.md: a change or removal of an app takes effect on
// the node that made it at once and on every other node within seconds
// (docs/api/projects-apps.md: 3 s; the test allows 5 s); so does a change
// of a policy (docs/api/policies.md). Two real server processes share one
// PostgreSQL schema.

const CB = 'https://app.example.com/cb';
const KEPT = 'https://app.example.com/kept';
const LIMIT_MS = 5000;

function refused(res: ApiResponse): boolean {
  return res.status === 400 && res.headers.get('location') === null;
}

describe('app changes reach every node', { skip: needsPostgres }, () => {
  const storage = sharedStorageEnv();
  let a: ChildServer | undefined;
  let b: ChildServer | undefined;
  let api: Api;
  let projectId: string;
  let app: { appId: string; clientId: string; clientSecret: string };

  const params = (redirectUri: string) => ({ client_id: app.clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'x' });

  before(async () => {
    const portA = await freePort();
    const env = { ...storage.env, ISSUER: `http://127.0.0.1:${portA}`, INSTANCE_DOMAIN: 'example.test' };
    // One after the other: the first start creates the instance, the second finds it.
    a = await startChild({ ...env, PORT: String(portA) });
    b = await startChild(env);
    api = apiClient(a.url, readFileSync(join(a.dataDir, 'admin.pat'), 'utf8').trim());
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await storage.cleanup();
  });

  test('an app created through node A is accepted by node B', async () => {
    const project = await api('POST', '/management/v1/projects', { body: { name: 'Shared' } });
    assert.equal(project.status, 200, project.text);
    projectId = project.json.id;
    const created = await api('POST', `/management/v1/projects/${projectId}/apps/oidc`, { body: { name: 'Shared app', redirectUris: [CB, KEPT] } });
    assert.equal(created.status, 200, created.text);
    app = created.json;

    const started = Date.now();
    let last: ApiResponse;
    do {
      last = await authorize(b!.url, params(CB));
      if (wentToLogin(last, b!.url)) break;
      await sleep(250);
    } while (Date.now() - started < LIMIT_MS);
    assert.ok(wentToLogin(last, b!.url), `node B never accepted the new app: ${last.status} ${last.text.slice(0, 200)}\n${b!.output()}`);
  });

  test('a redirect URI removed through node A is refused by node B within 5 seconds', async () => {
    // B serves the app from its cache now.
    assert.ok(wentToLogin(await authorize(b!.url, params(CB)), b!.url), 'B accepts the redirect URI before the change');

    const started = Date.now();
    const changed = await api('PUT', `/management/v1/projects/${projectId}/apps/${app.appId}`, { body: { redirectUris: [KEPT] } });
    assert.equal(changed.status, 200, changed.text);
    assert.ok(refused(await authorize(a!.url, params(CB))), 'node A refuses it at once');

    let elapsed = 0;
    for (;;) {
      const res = await authorize(b!.url, params(CB));
      elapsed = Date.now() - started;
      if (refused(res)) break;
      assert.ok(wentToLogin(res, b!.url), `until then B still accepts it: ${res.status} ${res.text.slice(0, 200)}`);
      if (elapsed > 2 * LIMIT_MS) break;
      await sleep(250);
    }
    assert.ok(elapsed < LIMIT_MS, `node B refused the removed redirect URI only after ${elapsed} ms`);
    assert.ok(wentToLogin(await authorize(b!.url, params(KEPT)), b!.url), 'the remaining redirect URI still works on B');
  });

  test('a login policy changed through node A reaches the login page of node B within 5 seconds', async () => {
    // The login page offers "Register" while the policy allows it (the default).
    const loginPage = async (base: string) => {
      const started = await authorize(base, params(KEPT));
      assert.ok(wentToLogin(started, base), `${started.status} ${started.text.slice(0, 200)}`);
      const cookie = started.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const page = await request(new URL(started.headers.get('location')!, base).href, { headers: { cookie } });
      assert.equal(page.status, 200, page.text.slice(0, 300));
      return page.text;
    };
    const offersRegister = (html: string) => html.includes('No account yet? Register');
    assert.ok(offersRegister(await loginPage(a!.url)), 'A offers registration before the change (its policy now cached)');
    assert.ok(offersRegister(await loginPage(b!.url)), 'so does B');

    const started = Date.now();
    const closed = await api('PUT', '/admin/v1/policies/login', { body: { allowRegister: false } });
    assert.equal(closed.status, 200, closed.text);
    assert.ok(!offersRegister(await loginPage(a!.url)), 'node A stops offering it at once');

    let elapsed = 0;
    while (offersRegister(await loginPage(b!.url))) {
      elapsed = Date.now() - started;
      if (elapsed > 2 * LIMIT_MS) break;
      await sleep(250);
    }
    elapsed = Date.now() - started;
    assert.ok(elapsed < LIMIT_MS, `node B stopped offering registration only after ${elapsed} ms`);

    const reopened = await api('PUT', '/admin/v1/policies/login', { body: { allowRegister: true } });
    assert.equal(reopened.status, 200, reopened.text);
    assert.ok(offersRegister(await loginPage(a!.url)), 'node A offers it again at once');
  });

  /** A refresh with a bogus token on `base`: 401 while the client's authentication fails, 400 once it passes. */
  const tokenStatus = async (base: string, secret: string) =>
    (
      await request(`${base}/oauth/v2/token`, {
        method: 'POST',
        headers: { authorization: basicHeader(app.clientId, secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=bogus',
      })
    ).status;

  /** Milliseconds until `check` holds on node B, or more than twice the limit. */
  async function untilOnB(started: number, check: () => Promise<boolean>): Promise<number> {
    for (;;) {
      const elapsed = Date.now() - started;
      if ((await check()) || elapsed > 2 * LIMIT_MS) return Date.now() - started;
      await sleep(250);
    }
  }

  test('a client secret regenerated through node A: node B refuses the old one within 5 seconds', async () => {
    assert.equal(await tokenStatus(b!.url, app.clientSecret), 400, 'B authenticates the client with its secret before');
    const started = Date.now();
    const regenerated = await api('POST', `/management/v1/projects/${projectId}/apps/${app.appId}/_regenerate_secret`, { body: {} });
    assert.equal(regenerated.status, 200, regenerated.text);
    assert.equal(await tokenStatus(a!.url, app.clientSecret), 401, 'node A refuses the old secret at once');
    const elapsed = await untilOnB(started, async () => (await tokenStatus(b!.url, app.clientSecret)) === 401);
    assert.ok(elapsed < LIMIT_MS, `node B refused the old secret only after ${elapsed} ms`);
    assert.equal(await tokenStatus(b!.url, regenerated.json.clientSecret), 400, 'and accepts the new one');
  });

  test('a project removed through node A: node B refuses its app within 5 seconds', async () => {
    const doomed = await api('POST', '/management/v1/projects', { body: { name: 'Doomed' } });
    assert.equal(doomed.status, 200, doomed.text);
    const created = await api('POST', `/management/v1/projects/${doomed.json.id}/apps/oidc`, { body: { name: 'Doomed app', redirectUris: [CB] } });
    assert.equal(created.status, 200, created.text);
    const doomedParams = { ...params(CB), client_id: created.json.clientId };
    const acceptedOnB = await untilOnB(Date.now(), async () => wentToLogin(await authorize(b!.url, doomedParams), b!.url));
    assert.ok(acceptedOnB < LIMIT_MS, 'B accepts the app before the removal');
    const started = Date.now();
    const removed = await api('DELETE', `/management/v1/projects/${doomed.json.id}`);
    assert.equal(removed.status, 200, removed.text);
    assert.ok(refused(await authorize(a!.url, doomedParams)), 'node A refuses it at once');
    const elapsed = await untilOnB(started, async () => refused(await authorize(b!.url, doomedParams)));
    assert.ok(elapsed < LIMIT_MS, `node B refused the removed project's app only after ${elapsed} ms`);
  });

  test('an app removed through node A is refused by node B within 5 seconds', async () => {
    assert.ok(wentToLogin(await authorize(b!.url, params(KEPT)), b!.url), 'B accepts the app before the removal');
    const started = Date.now();
    const removed = await api('DELETE', `/management/v1/projects/${projectId}/apps/${app.appId}`);
    assert.equal(removed.status, 200, removed.text);
    assert.ok(refused(await authorize(a!.url, params(KEPT))), 'node A refuses it at once');

    let elapsed = 0;
    for (;;) {
      const res = await authorize(b!.url, params(KEPT));
      elapsed = Date.now() - started;
      if (refused(res)) break;
      if (elapsed > 2 * LIMIT_MS) break;
      await sleep(250);
    }
    assert.ok(elapsed < LIMIT_MS, `node B refused the removed app only after ${elapsed} ms`);
  });
});
