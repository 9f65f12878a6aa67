import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { basicHeader, readResponse, type ApiResponse } from '../support/api.ts';
import { sleep } from '../support/server.ts';
import { needsRedisServer, startOwnRedis, type OwnRedis } from '../support/own-stores.ts';
import { API_SCOPE, eventually, startTokenWorld, type TokenWorld } from '../support/tokens.ts';
import { closeRedis, connectRedis, logConnectionChanges } from '../../src/storage/redis.ts';

// docs/operations.md, "Failure modes": Redis killed (SIGKILL) under client_credentials load. Every answer
// is a token or a 503 temporarily_unavailable with Retry-After, within 2 s;
// /readyz turns 503 within 5 s; what does not need Redis keeps working; once
// Redis answers again, tokens are issued again within 5 s, without a restart.
// The Redis is this test's own, on a private port.

const REDIRECT_URI = 'http://localhost:3999/callback';
const WORKERS = 4;

interface Sample {
  startedAt: number;
  ms: number;
  answer: ApiResponse;
}

function cookiesOf(response: ApiResponse): string {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

function assertUnavailable(answer: ApiResponse, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  assert.equal(answer.headers.get('retry-after'), '5', `${what}: Retry-After`);
}

describe('Redis outage', { skip: needsRedisServer }, () => {
  let redis: OwnRedis;
  let world: TokenWorld;
  let machine: { clientId: string; clientSecret: string };
  let app: { clientId: string };

  before(async () => {
    redis = await startOwnRedis();
    world = await startTokenWorld({ REDIS_URL: redis.url, REDIS_PREFIX: 'faults:' });
    const user = await world.createMachine('redis-outage-machine');
    machine = await world.machineSecret(user.userId);
    const projectId = await world.createProject('redis outage');
    app = await world.createApp(projectId, {
      redirectUris: [REDIRECT_URI],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      devMode: true,
    });
  });

  after(async () => {
    await world?.stop();
    await redis?.cleanup();
  });

  const tokenRequest = async (): Promise<Sample> => {
    const startedAt = Date.now();
    const response = await fetch(`${world.issuer}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(machine.clientId, machine.clientSecret) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: API_SCOPE }).toString(),
    });
    const answer = await readResponse(response);
    return { startedAt, ms: Date.now() - startedAt, answer };
  };

  const get = async (path: string, headers: Record<string, string> = {}) =>
    readResponse(await fetch(`${world.issuer}${path}`, { headers, redirect: 'manual' }));

  const startLogin = async () => {
    const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid', state: 'abc' });
    return get(`/oauth/v2/authorize?${params}`);
  };

  test('client_credentials under load: 503 temporarily_unavailable with Retry-After within 2 s while Redis is down, tokens again within 5 s of its return', async () => {
    // A login started before the outage: its interaction lives in Redis.
    const authorize = await startLogin();
    assert.equal(authorize.status, 303, authorize.text);
    const loginPath = new URL(authorize.headers.get('location')!, world.issuer).pathname;
    const loginCookies = cookiesOf(authorize);
    const page = await get(loginPath, { cookie: loginCookies });
    assert.equal(page.status, 200, 'the login page answers while Redis is up');

    const samples: Sample[] = [];
    let running = true;
    const workers = Array.from({ length: WORKERS }, async () => {
      while (running) samples.push(await tokenRequest());
    });

    let recoveredIn = Infinity;
    let killedAt = 0;
    try {
      await sleep(800);
      const beforeKill = samples.length;
      assert.ok(
        samples.every((s) => s.answer.status === 200),
        'tokens are issued before the outage',
      );
      killedAt = Date.now();
      await redis.kill('SIGKILL');

      // Readiness says so within 5 s.
      assert.ok(await eventually(async () => (await get('/readyz')).status === 503, 5000, 100), '/readyz turns 503 within 5 s');
      const ready = await get('/readyz');
      assert.equal(ready.body.checks.redis, 'unreachable');
      assert.equal(Date.now() - killedAt < 5500, true, '/readyz 503 within 5 s of the kill');

      // The load meets 503s, each with the documented body.
      assert.ok(
        await eventually(async () => samples.slice(beforeKill).some((s) => s.answer.status === 503), 3000, 50),
        'the token endpoint answers 503 during the outage',
      );

      // Every other kind of request that needs Redis answers 503 in its own format…
      const introspection = await readResponse(
        await fetch(`${world.issuer}/oauth/v2/introspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(machine.clientId, machine.clientSecret) },
          body: new URLSearchParams({ token: 'some-opaque-token-value-0123456789' }).toString(),
        }),
      );
      assertUnavailable(introspection, 'introspection');
      assert.deepEqual({ error: introspection.body.error }, { error: 'temporarily_unavailable' });

      const management = await get(`/management/v1/users/${world.adminKey.userId}`, { authorization: 'Bearer an-opaque-access-token-of-this-service' });
      assertUnavailable(management, 'management API with an access token');
      assert.equal(management.body.code, 14);
      assert.equal(management.body.details[0].reason, 'UNAVAILABLE');

      const loginPage = await get(loginPath, { cookie: loginCookies, 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' });
      assertUnavailable(loginPage, 'login page');
      assert.match(loginPage.headers.get('content-type') ?? '', /text\/html/);
      assert.match(loginPage.text, /<html lang="de">/);
      assert.match(loginPage.text, /vorübergehend nicht verfügbar/);

      const newLogin = await startLogin();
      assertUnavailable(newLogin, 'authorization endpoint');
      assert.match(newLogin.text, /temporarily unavailable/);

      // …and what does not need Redis keeps working: discovery, keys, the API with a PAT.
      assert.equal((await get('/.well-known/openid-configuration')).status, 200);
      assert.equal((await get('/oauth/v2/keys')).status, 200);
      assert.equal((await get('/healthz')).status, 200);
      assert.equal(
        (await get(`/management/v1/users/${world.adminKey.userId}`, { authorization: `Bearer ${world.pat}` })).status,
        200,
        'the API with a PAT works without Redis',
      );

      await sleep(1000);
      const backAt = Date.now();
      await redis.start();
      assert.ok(await eventually(async () => (await tokenRequest()).answer.status === 200, 5000, 100), 'tokens are issued again within 5 s of Redis answering');
      recoveredIn = Date.now() - backAt;
    } finally {
      running = false;
      await Promise.all(workers);
    }

    assert.ok(recoveredIn <= 5000, `recovered in ${recoveredIn} ms`);
    assert.equal((await get('/readyz')).status, 200, '/readyz is ready again');
    const duringOutage = samples.filter((s) => s.startedAt >= killedAt);
    assert.ok(duringOutage.length > 20, `the load went on during the outage (${duringOutage.length} requests)`);
    for (const { answer, ms } of duringOutage) {
      assert.ok(answer.status === 200 || answer.status === 503, `only tokens and 503s, got ${answer.status}: ${answer.text.slice(0, 300)}`);
      assert.ok(ms < 2000, `every request answered within 2 s (one took ${ms} ms)`);
      if (answer.status === 503) {
        assert.deepEqual(answer.body.error, 'temporarily_unavailable');
        assert.equal(answer.headers.get('retry-after'), '5');
      }
    }
    // The login page of an interaction lost with Redis (no persistence here) says the sign-in expired.
    const lost = await get(loginPath, { cookie: loginCookies });
    assert.equal(lost.status, 400);
  });
});

describe('Redis connection log', { skip: needsRedisServer }, () => {
  test('says once that Redis was lost, however many reconnect attempts follow, and once that it is back', async () => {
    const redis = await startOwnRedis();
    const client = await connectRedis({ redisUrl: redis.url, redisPrefix: 'log:' });
    const lines: Array<[string, string]> = [];
    logConnectionChanges(client, { warn: (msg: string) => lines.push(['warn', msg]), info: (msg: string) => lines.push(['info', msg]) } as never);
    try {
      await redis.kill('SIGKILL');
      assert.ok(await eventually(async () => lines.length === 1, 3000, 50), 'the loss is logged');
      // A few reconnect attempts later, still one line.
      await sleep(1500);
      assert.deepEqual(lines, [['warn', 'Redis connection lost; requests that need Redis answer 503 until it is back']]);
      await redis.start();
      assert.ok(await eventually(async () => lines.length === 2, 5000, 50), 'the return is logged');
      assert.deepEqual(lines[1], ['info', 'Redis connection restored']);
      assert.equal(await client.ping(), 'PONG');
      await closeRedis(client);
      await sleep(300);
      assert.equal(lines.length, 2, 'closing the client logs nothing');
    } finally {
      client.disconnect();
      await redis.cleanup();
    }
  });
});
