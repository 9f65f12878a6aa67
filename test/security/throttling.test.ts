import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { basicHeader, request, type ApiResponse } from '../support/api.ts';
import { JWT_BEARER, jwtProfileAssertion, ok, startTokenWorld, type KeyFile, type TokenWorld } from '../support/tokens.ts';
import { startCluster, type Cluster } from '../support/cluster.ts';
import { sleep } from '../support/server.ts';
import { passwordForm } from '../support/login-form.ts';
import { REDIS_URL, needsPostgres, needsRedis } from '../support/stores.ts';

// Throttling of failed authentication per client address (docs/security.md):
// more than AUTH_FAILURE_LIMIT failures within AUTH_FAILURE_WINDOW block
// every authentication attempt of that address, on every surface, correct
// ones included, with 429 and Retry-After, until the window has room again.
// Each test speaks for its own address (X-Forwarded-For, TRUST_PROXY=true).

const LIMIT = 3;
const WINDOW = 2;
const TOO_MANY = { error: 'invalid_request', error_description: 'too many failed authentication attempts' };

let addressCounter = 0;
function newAddress(): string {
  return `203.0.113.${++addressCounter}`;
}

interface Scene {
  world: TokenWorld;
  secret: { clientId: string; clientSecret: string };
  app: { clientId: string; clientSecret: string };
  key: KeyFile;
  accessToken: string;
  human: { loginName: string; password: string };
}

async function setScene(world: TokenWorld): Promise<Scene> {
  const machine = await world.createMachine('throttled-robot');
  const secret = await world.machineSecret(machine.userId);
  const key = await world.machineKey(machine.userId);
  const projectId = await world.createProject('throttle');
  const app = await world.createApp(projectId, {
    redirectUris: ['http://localhost:1/cb'],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
    devMode: true,
  });
  await ok(
    world.api('POST', '/management/v1/users/human', {
      userName: 'tina',
      profile: { firstName: 'Ti', lastName: 'Na' },
      email: { email: 'tina@example.test' },
      password: 'Tina-Passw0rd',
    }),
    'human',
  );
  const token = await tokenRequest(world, newAddress(), secret.clientSecret, secret.clientId);
  assert.equal(token.status, 200, token.text);
  return {
    world,
    secret,
    app: { clientId: app.clientId, clientSecret: app.clientSecret! },
    key,
    accessToken: token.body.access_token,
    human: { loginName: 'tina', password: 'Tina-Passw0rd' },
  };
}

function form(url: string, address: string, body: Record<string, string>, authorization?: string): Promise<ApiResponse> {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address, ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(body),
  });
}

function tokenRequest(world: TokenWorld | { server: { url: string } }, address: string, secret: string, clientId: string): Promise<ApiResponse> {
  return form(`${world.server.url}/oauth/v2/token`, address, { grant_type: 'client_credentials', scope: 'openid' }, basicHeader(clientId, secret));
}

function adminCall(url: string, address: string, token: string): Promise<ApiResponse> {
  return request(`${url}/admin/v1/signing_keys`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address } });
}

function assertThrottledOAuth(answer: ApiResponse, what: string, window = WINDOW): void {
  assert.equal(answer.status, 429, `${what}: ${answer.status} ${answer.text}`);
  assert.deepEqual(answer.body, TOO_MANY, what);
  const retryAfter = Number(answer.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= window, `${what}: Retry-After ${answer.headers.get('retry-after')}`);
}

function assertThrottledApi(answer: ApiResponse, what: string): void {
  assert.equal(answer.status, 429, `${what}: ${answer.status} ${answer.text}`);
  assert.equal(answer.body.code, 8, what);
  assert.equal(answer.body.message, 'too many failed authentication attempts');
  assert.ok(answer.body.details.some((d: { reason?: string }) => d.reason === 'RESOURCE_EXHAUSTED'));
  assert.ok(Number(answer.headers.get('retry-after')) >= 1, what);
}

/** The password form of a new login, posted from `address`. */
async function loginForm(scene: Scene, address: string): Promise<(password: string, loginName?: string) => Promise<ApiResponse>> {
  const post = await passwordForm(scene.world.server.url, scene.app.clientId, { 'x-forwarded-for': address });
  return (password, loginName = scene.human.loginName) => post(loginName, password);
}

for (const stores of ['configured', 'embedded'] as const) {
  describe(`throttling on every surface (${stores} stores)`, () => {
    let scene: Scene;
    before(async () => {
      const world = await startTokenWorld({
        AUTH_FAILURE_LIMIT: String(LIMIT),
        AUTH_FAILURE_WINDOW: String(WINDOW),
        TRUST_PROXY: 'true',
        ...(stores === 'embedded' ? { DATABASE_URL: '', REDIS_URL: '' } : {}),
      });
      scene = await setScene(world);
    });
    after(async () => {
      await scene?.world.stop();
    });

    test('token endpoint: wrong secrets count; past the limit even the right secret is 429 until the window has room', async () => {
      const address = newAddress();
      for (let i = 0; i < LIMIT + 1; i++)
        assert.equal((await tokenRequest(scene.world, address, 'wrong', scene.secret.clientId)).status, 401, `failure ${i + 1}`);
      assertThrottledOAuth(await tokenRequest(scene.world, address, scene.secret.clientSecret, scene.secret.clientId), 'the right secret while blocked');
      assert.equal(
        (await tokenRequest(scene.world, newAddress(), scene.secret.clientSecret, scene.secret.clientId)).status,
        200,
        'another address is unaffected',
      );
      await sleep(WINDOW * 1000 + 100);
      assert.equal((await tokenRequest(scene.world, address, scene.secret.clientSecret, scene.secret.clientId)).status, 200, 'the window has room again');
    });

    test('introspection and revocation: unknown clients and wrong secrets count, and the block covers every surface', async () => {
      const address = newAddress();
      const url = scene.world.server.url;
      assert.equal((await form(`${url}/oauth/v2/introspect`, address, { token: scene.accessToken }, basicHeader(scene.app.clientId, 'wrong'))).status, 401);
      assert.equal((await form(`${url}/oauth/v2/revoke`, address, { token: 'x' }, basicHeader('no-such-client', 'x'))).status, 401);
      assert.equal((await form(`${url}/oauth/v2/introspect`, address, { token: 'x' }, basicHeader('no-such-client', 'x'))).status, 401);
      assert.equal((await form(`${url}/oauth/v2/revoke`, address, { token: 'x' }, basicHeader(scene.app.clientId, 'wrong'))).status, 401);
      assertThrottledOAuth(
        await form(`${url}/oauth/v2/introspect`, address, { token: scene.accessToken }, basicHeader(scene.app.clientId, scene.app.clientSecret)),
        'introspection',
      );
      assertThrottledOAuth(
        await form(`${url}/oauth/v2/revoke`, address, { token: 'x' }, basicHeader(scene.app.clientId, scene.app.clientSecret)),
        'revocation',
      );
      assertThrottledOAuth(await tokenRequest(scene.world, address, scene.secret.clientSecret, scene.secret.clientId), 'token');
      assertThrottledApi(await adminCall(url, address, scene.world.pat), 'admin API with a valid PAT');
      const login = await loginForm(scene, address);
      assert.equal((await login(scene.human.password)).status, 429, 'the login page');
    });

    test('JWT profile: invalid assertions count (garbage, unknown user, wrong audience); the valid one is then 429', async () => {
      const address = newAddress();
      const url = `${scene.world.server.url}/oauth/v2/token`;
      const bad = [
        'a.b.c',
        await jwtProfileAssertion({ ...scene.key, userId: '123456789' }, scene.world.issuer),
        await jwtProfileAssertion(scene.key, scene.world.issuer, { aud: 'https://elsewhere.example' }),
        await jwtProfileAssertion(scene.key, scene.world.issuer, { exp: Math.floor(Date.now() / 1000) - 3600 }),
      ];
      for (const assertion of bad) {
        const answer = await form(url, address, { grant_type: JWT_BEARER, assertion, scope: 'openid' });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.body.error, 'invalid_grant');
      }
      assertThrottledOAuth(
        await form(url, address, { grant_type: JWT_BEARER, assertion: await jwtProfileAssertion(scene.key, scene.world.issuer), scope: 'openid' }),
        'a valid assertion',
      );
      const other = await form(url, newAddress(), {
        grant_type: JWT_BEARER,
        assertion: await jwtProfileAssertion(scene.key, scene.world.issuer),
        scope: 'openid',
      });
      assert.equal(other.status, 200, other.text);
    });

    test('admin and management API: unknown or invalid bearer tokens count; no token at all does not', async () => {
      const address = newAddress();
      const url = scene.world.server.url;
      for (let i = 0; i < 10; i++) assert.equal((await request(`${url}/admin/v1/signing_keys`, { headers: { 'x-forwarded-for': address } })).status, 401);
      assert.equal((await adminCall(url, address, scene.world.pat)).status, 200, 'requests without a token are not authentication attempts');
      for (const token of ['unknown-token', 'a.b.c', `${scene.world.pat}x`, scene.accessToken])
        assert.equal((await adminCall(url, address, token)).status, 401, token);
      assertThrottledApi(await adminCall(url, address, scene.world.pat), 'a valid PAT while blocked');
      const management = await request(`${url}/management/v1/users/123`, {
        headers: { authorization: `Bearer ${scene.world.pat}`, 'x-forwarded-for': address },
      });
      assertThrottledApi(management, 'management');
      assert.equal((await adminCall(url, newAddress(), scene.world.pat)).status, 200, 'another address is unaffected');
    });

    test('login page: wrong passwords and unknown login names count; then the right password gets the 429 page', async () => {
      const address = newAddress();
      const login = await loginForm(scene, address);
      for (const [password, name] of [
        ['wrong', undefined],
        ['wrong-again', undefined],
        ['x', 'nobody'],
        ['y', 'nobody@example.test'],
      ] as const) {
        const answer = await login(password, name);
        assert.equal(answer.status, 200);
        assert.match(answer.text, /login name or password is wrong/);
      }
      const blocked = await login(scene.human.password);
      assert.equal(blocked.status, 429);
      assert.match(blocked.headers.get('content-type')!, /^text\/html/);
      assert.match(blocked.text, /Too many failed sign-in attempts/);
      assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
      assert.equal(blocked.headers.get('cache-control'), 'no-store');
      const elsewhere = await (await loginForm(scene, newAddress()))(scene.human.password);
      assert.equal(elsewhere.status, 303, 'the right password from another address signs in');
    });

    test('successful requests never count: hundreds of them, then the limit still holds exactly', async () => {
      const address = newAddress();
      const url = scene.world.server.url;
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          i % 2 ? tokenRequest(scene.world, address, scene.secret.clientSecret, scene.secret.clientId) : adminCall(url, address, scene.world.pat),
        ),
      );
      assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
      const redis = scene.world.server.running.redis;
      if (redis) assert.equal(await redis.exists(`auth-failures:{${address}}`), 0, 'no counter was written for this address');
      if (stores === 'embedded') assert.equal(redis, undefined, 'the embedded default counts in memory');
      for (let i = 0; i < LIMIT; i++) assert.equal((await tokenRequest(scene.world, address, 'wrong', scene.secret.clientId)).status, 401);
      assert.equal((await tokenRequest(scene.world, address, scene.secret.clientSecret, scene.secret.clientId)).status, 200, 'at the limit, not over it');
    });
  });
}

describe('AUTH_FAILURE_LIMIT=0 turns throttling off', () => {
  test('a hundred wrong secrets, then the right one works', async () => {
    const world = await startTokenWorld({ AUTH_FAILURE_LIMIT: '0' });
    try {
      const machine = await world.createMachine('unthrottled');
      const secret = await world.machineSecret(machine.userId);
      const address = newAddress();
      for (let i = 0; i < 100; i++) assert.equal((await tokenRequest(world, address, 'wrong', secret.clientId)).status, 401);
      assert.equal((await tokenRequest(world, address, secret.clientSecret, secret.clientId)).status, 200);
    } finally {
      await world.stop();
    }
  });
});

describe('without TRUST_PROXY, X-Forwarded-For is ignored: the socket address counts', () => {
  test('failures from "different" forwarded addresses block the one real address', async () => {
    const world = await startTokenWorld({ AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW: String(WINDOW) });
    try {
      const machine = await world.createMachine('proxied');
      const secret = await world.machineSecret(machine.userId);
      for (let i = 0; i < LIMIT + 1; i++) assert.equal((await tokenRequest(world, newAddress(), 'wrong', secret.clientId)).status, 401);
      assertThrottledOAuth(await tokenRequest(world, newAddress(), secret.clientSecret, secret.clientId), 'a new forged address');
    } finally {
      await world.stop();
    }
  });
});

describe('two server processes sharing one Redis', { skip: needsPostgres || needsRedis }, () => {
  let cluster: Cluster;
  let secret: { clientId: string; clientSecret: string };
  before(async () => {
    cluster = await startCluster(2, { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW: '30', TRUST_PROXY: 'true' });
    const [a] = cluster.nodes;
    const machine = await cluster.api(a!, 'POST', '/management/v1/users/machine', { userName: 'shared-robot', name: 'r' });
    assert.equal(machine.status, 200, machine.text);
    const created = await cluster.api(a!, 'PUT', `/management/v1/users/${machine.body.userId}/secret`, {});
    assert.equal(created.status, 200, created.text);
    secret = { clientId: created.body.clientId, clientSecret: created.body.clientSecret };
  });
  after(async () => {
    await cluster?.stop();
  });

  const on = (i: number) => ({ server: { url: cluster.nodes[i]!.url } });

  /** The right secret on node `i`, asked again for up to a second while pub/sub carries a block there. */
  async function rightSecretSoon(i: number, address: string): Promise<ApiResponse> {
    let answer = await tokenRequest(on(i), address, secret.clientSecret, secret.clientId);
    for (let tries = 0; tries < 20 && answer.status !== 429; tries++) {
      await sleep(50);
      answer = await tokenRequest(on(i), address, secret.clientSecret, secret.clientId);
    }
    return answer;
  }

  test('failures split between the nodes add up to one count', async () => {
    const address = newAddress();
    for (let i = 0; i < LIMIT + 1; i++) assert.equal((await tokenRequest(on(i % 2), address, 'wrong', secret.clientId)).status, 401, cluster.output());
    // Node 1 recorded the failure over the limit; node 0 hears of it.
    assertThrottledOAuth(await tokenRequest(on(1), address, secret.clientSecret, secret.clientId), 'node 1', 30);
    assertThrottledOAuth(await rightSecretSoon(0, address), 'node 0', 30);
  });

  test('a block reached on one node reaches the other, which saw no failure of that address', async () => {
    const address = newAddress();
    for (let i = 0; i < LIMIT + 1; i++) assert.equal((await tokenRequest(on(0), address, 'wrong', secret.clientId)).status, 401);
    assertThrottledOAuth(await rightSecretSoon(1, address), 'the other node', 30);
    const admin = await request(`${cluster.nodes[1]!.url}/admin/v1/signing_keys`, {
      headers: { authorization: `Bearer ${cluster.adminPat}`, 'x-forwarded-for': address },
    });
    assertThrottledApi(admin, 'the other node, admin API');
    assert.equal((await tokenRequest(on(1), newAddress(), secret.clientSecret, secret.clientId)).status, 200);
  });

  test("the counters live in Redis under the nodes' prefix", async () => {
    const plain = new Redis(REDIS_URL!, { lazyConnect: true });
    await plain.connect();
    try {
      const prefix = cluster.nodes[0]!.server.env.REDIS_PREFIX!;
      const keys = await plain.keys(`${prefix}auth-failures:*`);
      assert.ok(keys.length >= 2, keys.join());
    } finally {
      plain.disconnect();
    }
  });
});
