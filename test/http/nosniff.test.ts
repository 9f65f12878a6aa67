import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testServer, type TestServer } from '../support/server.ts';

// JSON answers carry X-Content-Type-Options: nosniff (docs/security.md), so
// no browser reads an error that echoes a value as HTML or script: the admin
// and management API, the engine's JSON endpoints, the door's own 404 and
// 405, the health checks; answers and errors alike.

describe('X-Content-Type-Options: nosniff', () => {
  let server: TestServer;

  before(async () => {
    server = await testServer();
  });
  after(async () => {
    await server?.stop();
  });

  const cases: Array<[string, () => Promise<Response>, number]> = [
    ['admin API answer', () => fetch(`${server.url}/admin/v1/signing_keys`, { headers: { authorization: `Bearer ${server.pat}` } }), 200],
    ['admin API error (no token)', () => fetch(`${server.url}/admin/v1/signing_keys`), 401],
    [
      'management API validation error',
      () =>
        fetch(`${server.url}/management/v1/users/human`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.pat}`, 'content-type': 'application/json' },
          body: '{"userName": "<script>"}',
        }),
      400,
    ],
    ['discovery', () => fetch(`${server.url}/.well-known/openid-configuration`), 200],
    ['key set', () => fetch(`${server.url}/oauth/v2/keys`), 200],
    [
      'token endpoint error',
      () =>
        fetch(`${server.url}/oauth/v2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=password',
        }),
      401,
    ],
    ['userinfo error', () => fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: 'Bearer nope' } }), 401],
    ['another spelling of an engine path (404)', () => fetch(`${server.url}/oauth/v2/Token`), 404],
    ['a method an engine path does not take (405)', () => fetch(`${server.url}/oauth/v2/keys`, { method: 'DELETE' }), 405],
    ['no route (404)', () => fetch(`${server.url}/nothing/here`), 404],
    ['health', () => fetch(`${server.url}/readyz`), 200],
  ];

  for (const [what, call, status] of cases) {
    test(what, async () => {
      const answer = await call();
      await answer.arrayBuffer();
      assert.equal(answer.status, status);
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
    });
  }
});
