import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { needsPostgres, needsRedis } from '../support/stores.ts';
import { apiClient, request } from '../support/api.ts';
import { runCodeFlow } from '../support/code-flow.ts';
import { passwordForm } from '../support/login-form.ts';
import { postForm, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';

// docs/security.md, "What ends a token": the tokens of a user locked (by
// failures or by an admin) or deactivated on one node are refused on every other node within 5 seconds — introspection
// {"active": false}, userinfo and the admin API 401 — although each node
// reads users through its own cache (cleared on every node through Redis
// when a user is locked, unlocked, deactivated or removed).

const LIMIT_MS = 5000;
const POLL_MS = 100;
const REDIRECT_URI = 'http://localhost:1/cb';
const API_SCOPE = 'urn:service:iam:api';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('tokens end with their user on every node', { skip: needsPostgres || needsRedis }, () => {
  let cluster: Cluster;
  let A: ClusterNode;
  let B: ClusterNode;
  let app: { clientId: string; clientSecret: string };

  const api = (node: ClusterNode, method: string, path: string, body?: unknown) => cluster.api(node, method, path, body);

  before(async () => {
    cluster = await startCluster(2);
    [A, B] = cluster.nodes as [ClusterNode, ClusterNode];
    const policy = await api(A, 'PUT', '/admin/v1/policies/lockout', { maxPasswordAttempts: 1, lockoutDurationSeconds: 0 });
    assert.equal(policy.status, 200, policy.text);
    const project = await api(A, 'POST', '/management/v1/projects', { name: 'Console-like' });
    assert.equal(project.status, 200, project.text);
    const created = await api(A, 'POST', `/management/v1/projects/${project.json.id}/apps/oidc`, {
      name: 'API app',
      redirectUris: [REDIRECT_URI],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      devMode: true,
      iamApiAccess: true,
    });
    assert.equal(created.status, 200, created.text);
    app = { clientId: created.json.clientId, clientSecret: created.json.clientSecret };
  });

  after(async () => {
    await cluster?.stop();
  });

  /**
   * Signs a new org owner in through the code flow, lets node B read them as
   * active, ends them on node A with `end` and waits for node B to refuse
   * their access token everywhere; `expectedState` is what the API then shows.
   */
  async function tokensEndOnB(userName: string, end: (userId: string, loginName: string) => Promise<void>, expectedState: string) {
    const password = 'Locked-Passw0rd!';
    const human = await api(A, 'POST', '/management/v1/users/human', {
      userName,
      profile: { firstName: 'Lou', lastName: 'Locked' },
      email: { email: `${userName}@example.test`, isEmailVerified: true },
      password,
    });
    assert.equal(human.status, 200, human.text);
    const userId = human.json.userId as string;
    const member = await api(A, 'POST', '/management/v1/orgs/me/members', { userId, roles: ['ORG_OWNER'] });
    assert.equal(member.status, 200, member.text);
    const loginName = (await api(A, 'GET', `/management/v1/users/${userId}`)).json.user.preferredLoginName as string;
    const tokens = await runCodeFlow(
      // The issuer is node A's localhost address: the flow's redirects name it.
      { baseUrl: A.browserUrl, clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: REDIRECT_URI, scope: `openid profile ${API_SCOPE}` },
      { loginName, password },
    );

    const introspectAtB = async () => (await postForm(`${B.url}/oauth/v2/introspect`, { token: tokens.access_token }, app)).json;
    const userinfoAtB = async () => (await request(`${B.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status;
    const adminApiAtB = async () => (await apiClient(B.url, tokens.access_token)('GET', `/management/v1/users/${userId}`)).status;
    // Node B has read the user (its cache holds them as active) before the lock.
    assert.equal((await introspectAtB()).active, true);
    assert.equal(await userinfoAtB(), 200);
    assert.equal(await adminApiAtB(), 200);

    await end(userId, loginName);
    const locked = Date.now();
    const state = await api(A, 'GET', `/management/v1/users/${userId}`);
    assert.equal(state.json.user.state, expectedState, state.text);

    let seen: { introspection: unknown; userinfo: number; adminApi: number } | undefined;
    for (;;) {
      const [introspection, userinfo, adminApi] = await Promise.all([introspectAtB(), userinfoAtB(), adminApiAtB()]);
      seen = { introspection, userinfo, adminApi };
      const refused = JSON.stringify(introspection) === '{"active":false}' && userinfo === 401 && adminApi === 401;
      if (refused || Date.now() - locked > 3 * LIMIT_MS) break;
      await sleep(POLL_MS);
    }
    const elapsed = Date.now() - locked;
    assert.deepEqual(seen, { introspection: { active: false }, userinfo: 401, adminApi: 401 }, `node B after ${elapsed} ms\n${cluster.output()}`);
    assert.ok(elapsed < LIMIT_MS, `node B refused the ended user's token only after ${elapsed} ms`);
  }

  test('a user locked on node A: node B refuses their tokens within 5 seconds (introspection, userinfo, admin API)', async () => {
    const lockByFailure = async (_userId: string, loginName: string) => {
      const form = await passwordForm(A.url, app.clientId);
      const wrong = await form(loginName, 'not-the-password');
      assert.ok(wrong.status < 500, wrong.text);
    };
    await tokensEndOnB('lou', lockByFailure, 'USER_STATE_LOCKED');
  });

  test('a user deactivated on node A: node B refuses their tokens within 5 seconds', async () => {
    const deactivate = async (userId: string) => {
      const res = await api(A, 'POST', `/management/v1/users/${userId}/_deactivate`, {});
      assert.equal(res.status, 200, res.text);
    };
    await tokensEndOnB('dee', deactivate, 'USER_STATE_INACTIVE');
  });

  test('a user locked by an admin on node A: node B refuses their tokens within 5 seconds', async () => {
    const lock = async (userId: string) => {
      const res = await api(A, 'POST', `/management/v1/users/${userId}/_lock`, {});
      assert.equal(res.status, 200, res.text);
    };
    await tokensEndOnB('lock', lock, 'USER_STATE_LOCKED');
  });
});
