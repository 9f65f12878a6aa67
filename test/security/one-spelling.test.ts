import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { DISCOVERY_PATH, ROUTES } from '../../src/engine/routes.ts';
import { canonicalPath, engineDoor, methodsIfNotAllowed } from '../../src/http/engine-paths.ts';
import { ENGINE_PATHS } from '../../src/engine/routes.ts';
import { startExchangeWorld, type ExchangeWorld } from '../support/exchange.ts';

// One spelling per endpoint (docs/security.md): the engine's router folds
// case and trailing slashes, our per-endpoint rules do not; so only the exact
// paths reach the engine, and every other spelling of them is a 404.

/** Other spellings the engine would route to the same endpoint, or that canonicalise to it. */
function variants(path: string): string[] {
  const last = path.lastIndexOf('/');
  const letter = path.search(/[a-z]/);
  return [
    path.toUpperCase(),
    `${path.slice(0, last + 1)}${path[last + 1]!.toUpperCase()}${path.slice(last + 2)}`,
    `${path}/`,
    `${path}//`,
    `/${path}`,
    path.replace('/', '//').replace(/\/(?=[^/]*$)/, '//'),
    `${path.slice(0, letter)}%${path.charCodeAt(letter).toString(16)}${path.slice(letter + 1)}`,
    `${path.slice(0, letter)}%${path.charCodeAt(letter).toString(16).toUpperCase()}${path.slice(letter + 1)}`,
    `${path.slice(0, last)}/./${path.slice(last + 1)}`,
    `${path.slice(0, last)}/x/../${path.slice(last + 1)}`,
    `${path}%2F`,
    `${path}%00`,
  ];
}

/** A request with the path exactly as given (fetch would normalise dot segments). */
function raw(url: string, method: string, path: string, form?: Record<string, string>): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  const body = form ? new URLSearchParams(form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { hostname, port, method, path, headers: body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the door: which spelling reaches the engine', () => {
  test('exact engine paths, with or without a query, go to the engine', () => {
    for (const path of ENGINE_PATHS) {
      assert.equal(engineDoor(path), 'engine', path);
      assert.equal(engineDoor(`${path}?a=b`), 'engine', path);
    }
    assert.equal(engineDoor(`${ROUTES.authorization}/abcDEF_123-x`), 'engine');
  });

  test('every other spelling of an engine path is not found', () => {
    for (const path of ENGINE_PATHS) {
      for (const variant of variants(path)) assert.equal(engineDoor(variant), 'not-found', variant);
    }
    for (const path of [
      '/oauth',
      '/OIDC/',
      '/.well-known/oauth-authorization-server',
      `${ROUTES.authorization}/uid/more`,
      `${ROUTES.authorization}/a%2Fb`,
      'http://evil.example/oauth/v2/introspect',
    ]) {
      assert.equal(engineDoor(path), 'not-found', path);
    }
  });

  test('every exact engine path knows its methods: another one is refused', () => {
    for (const path of ENGINE_PATHS) assert.ok(methodsIfNotAllowed('PATCH', path)?.length, path);
  });

  test('our own paths are ours, whatever their spelling', () => {
    for (const path of ['/admin/v1/members', '/ui/login/abc', '/healthz', '/', '/oauthx', '/ADMIN/v1/orgs/_setup'])
      assert.equal(engineDoor(path), 'ours', path);
  });

  test('canonical form: decoded, lower case, single slashes, no dot segments or trailing slash', () => {
    assert.equal(canonicalPath('/OAuth//v2/./x/../Introspect/'), '/oauth/v2/introspect');
    assert.equal(canonicalPath('/oauth/v2/%2569ntrospect'), '/oauth/v2/introspect');
    assert.equal(canonicalPath('/oauth\\v2\\token'), '/oauth/v2/token');
    assert.equal(canonicalPath('/%E0%A4%A'), '/%e0%a4%a');
  });
});

describe('hole 4: a public client was answered active at another spelling of the introspection endpoint', () => {
  let world: ExchangeWorld;
  let publicClientId: string;
  let token: string;
  before(async () => {
    world = await startExchangeWorld();
    const project = await world.createProject('Spelling');
    const created = await world.admin('POST', `/management/v1/projects/${project}/apps/oidc`, {
      name: 'public spa',
      redirectUris: ['https://spa.example.com/cb'],
      appType: 'OIDC_APP_TYPE_USER_AGENT',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    });
    publicClientId = created.clientId;
    const user = await world.createHuman(`spelling-${randomUUID().slice(0, 6)}`);
    token = await world.tokenIssuedTo({ appId: created.appId, projectId: project, clientId: publicClientId, auth: () => {} }, user, 'openid');
  });
  after(async () => {
    await world?.stop();
  });

  test('/oauth/v2/introspect refuses the public client (401); /oauth/v2/Introspect and /oauth/v2/introspect/ are 404, never active', async () => {
    const form = { client_id: publicClientId, token };
    const exact = await raw(world.server.url, 'POST', '/oauth/v2/introspect', form);
    assert.equal(exact.status, 401, exact.body);
    for (const path of ['/oauth/v2/Introspect', '/oauth/v2/introspect/']) {
      const other = await raw(world.server.url, 'POST', path, form);
      assert.equal(other.status, 404, `${path}: ${other.body}`);
      assert.doesNotMatch(other.body, /"active"/);
    }
  });

  test('every OAuth/OIDC path in every other spelling, GET and POST: 404', async () => {
    const failures: string[] = [];
    for (const path of ENGINE_PATHS) {
      for (const variant of variants(path)) {
        for (const method of ['GET', 'POST']) {
          const answer = await raw(world.server.url, method, variant, method === 'POST' ? { client_id: publicClientId, token } : undefined);
          if (answer.status !== 404) failures.push(`${method} ${variant} → ${answer.status}`);
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  test('a method an endpoint does not take: 405 with Allow, on the exact path', async () => {
    const cases: Array<[string, string, string]> = [
      ['GET', ROUTES.token, 'POST, OPTIONS'],
      ['PUT', ROUTES.introspection, 'POST, OPTIONS'],
      ['DELETE', ROUTES.revocation, 'POST, OPTIONS'],
      ['POST', ROUTES.jwks, 'GET, HEAD, OPTIONS'],
      ['PATCH', DISCOVERY_PATH, 'GET, HEAD, OPTIONS'],
      ['DELETE', ROUTES.userinfo, 'GET, HEAD, POST, OPTIONS'],
      // POST only with ENABLE_HTTP_POST_METHODS (test/http/post-methods.test.ts).
      ['PUT', ROUTES.authorization, 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const answer = await new Promise<{ status: number; allow?: string }>((resolve, reject) => {
        const { hostname, port } = new URL(world.server.url);
        const req = httpRequest({ hostname, port, method, path }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow }));
        });
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual(answer, { status: 405, allow }, `${method} ${path}`);
    }
  });

  test('the exact paths still answer', async () => {
    assert.equal((await raw(world.server.url, 'GET', DISCOVERY_PATH)).status, 200);
    assert.equal((await raw(world.server.url, 'GET', ROUTES.jwks)).status, 200);
    const revoke = await raw(world.server.url, 'POST', ROUTES.revocation, { client_id: publicClientId, token });
    assert.equal(revoke.status, 200, revoke.body);
  });
});
