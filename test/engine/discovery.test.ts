import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { allowInsecureRequests, discovery } from 'openid-client';
import { REDIS_URL } from '../support/stores.ts';
import { testServer, type InProcessServer } from '../support/server.ts';

const PATHS = {
  authorization_endpoint: '/oauth/v2/authorize',
  token_endpoint: '/oauth/v2/token',
  introspection_endpoint: '/oauth/v2/introspect',
  revocation_endpoint: '/oauth/v2/revoke',
  jwks_uri: '/oauth/v2/keys',
  userinfo_endpoint: '/oidc/v1/userinfo',
  end_session_endpoint: '/oidc/v1/end_session',
} as const;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

type Json = Record<string, unknown>;

/** One HTTP/1.1 request written by hand, for headers fetch refuses to send; resolves with the raw response. */
function rawRequest(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (response += chunk));
    socket.on('end', () => resolve(response));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('raw request timed out')));
    socket.write(text);
  });
}

/** GET with an arbitrary Host header (fetch does not let us choose it). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('discovery, keys and operational endpoints', () => {
  let server: InProcessServer;
  let issuer: string;
  let metadata: Json;

  before(async () => {
    server = await testServer();
    issuer = server.issuer;
    const res = await fetch(`${server.url}/.well-known/openid-configuration`);
    assert.equal(res.status, 200);
    metadata = (await res.json()) as Json;
  });
  after(async () => {
    await server?.stop();
  });

  it('is accepted by openid-client discovery for the configured issuer', async () => {
    assert.equal(issuer, server.url, 'the test server issuer is http://127.0.0.1:PORT');
    const config = await discovery(new URL(issuer), 'some-client', undefined, undefined, { execute: [allowInsecureRequests] });
    const discovered = config.serverMetadata();
    assert.equal(discovered.issuer, issuer);
    assert.equal(discovered.token_endpoint, `${issuer}/oauth/v2/token`);
  });

  it('advertises every endpoint at exactly the issuer plus the path of docs/oidc.md', () => {
    assert.equal(metadata.issuer, issuer);
    for (const [name, path] of Object.entries(PATHS)) assert.equal(metadata[name], `${issuer}${path}`, name);
  });

  it('builds endpoint URLs from the ISSUER, not from the Host header of the request', async () => {
    for (const host of [`localhost:${new URL(issuer).port}`, 'evil.example']) {
      const res = await getWithHost(`${server.url}/.well-known/openid-configuration`, host);
      assert.equal(res.status, 200);
      const doc = JSON.parse(res.body) as Json;
      for (const [name, path] of Object.entries(PATHS)) assert.equal(doc[name], `${issuer}${path}`, `${name} with Host: ${host}`);
    }
  });

  it('supports exactly the response types code, id_token and id_token token', () => {
    assert.deepEqual(metadata.response_types_supported, ['code', 'id_token', 'id_token token']);
  });

  it('supports only S256 as PKCE code challenge method', () => {
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
  });

  it('advertises the four token endpoint authentication methods of docs/oidc.md', () => {
    assert.deepEqual([...(metadata.token_endpoint_auth_methods_supported as string[])].sort(), [
      'client_secret_basic',
      'client_secret_post',
      'none',
      'private_key_jwt',
    ]);
  });

  it('advertises only client_secret_basic and private_key_jwt for introspection', () => {
    assert.deepEqual([...(metadata.introspection_endpoint_auth_methods_supported as string[])].sort(), ['client_secret_basic', 'private_key_jwt']);
  });

  it('advertises the four authentication methods for revocation', () => {
    assert.deepEqual([...(metadata.revocation_endpoint_auth_methods_supported as string[])].sort(), [
      'client_secret_basic',
      'client_secret_post',
      'none',
      'private_key_jwt',
    ]);
  });

  it('advertises public subjects only and RS256 ID tokens', () => {
    assert.deepEqual(metadata.subject_types_supported, ['public']);
    assert.ok((metadata.id_token_signing_alg_values_supported as string[]).includes('RS256'));
  });

  it('supports the claims parameter (OIDC Core 5.5) and says which acr values a login achieves', () => {
    assert.equal(metadata.claims_parameter_supported, true);
    assert.deepEqual(metadata.acr_values_supported, ['pwd', 'mfa']);
    assert.ok((metadata.claims_supported as string[]).includes('acr'));
  });

  it('serves discovery with CORS open to any origin', async () => {
    const res = await fetch(`${server.url}/.well-known/openid-configuration`, { headers: { origin: 'https://app.example.org' } });
    await res.arrayBuffer();
    const allowed = res.headers.get('access-control-allow-origin');
    assert.ok(allowed === '*' || allowed === 'https://app.example.org', `Access-Control-Allow-Origin: ${allowed}`);
  });

  it('does not serve /.well-known/oauth-authorization-server (404)', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    await res.arrayBuffer();
    assert.equal(res.status, 404);
  });

  it('publishes the signing keys at /oauth/v2/keys, each with a kid, cacheable for 300 s, without private members', async () => {
    const res = await fetch(`${server.url}/oauth/v2/keys`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    const { keys } = (await res.json()) as { keys: Json[] };
    assert.ok(keys.length >= 1);
    for (const key of keys) {
      assert.equal(typeof key.kid, 'string');
      assert.ok((key.kid as string).length > 0);
      for (const member of PRIVATE_MEMBERS) assert.ok(!(member in key), `JWK ${key.kid as string} exposes ${member}`);
    }
    const { rows } = await server.running.db.query<{ kid: string }>('SELECT kid FROM signing_keys WHERE retires_at IS NULL');
    assert.ok(rows.length >= 1);
    for (const row of rows)
      assert.ok(
        keys.some((k) => k.kid === row.kid),
        `stored key ${row.kid} is published`,
      );
  });

  it('answers /healthz with 200', async () => {
    const res = await fetch(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });

  it('answers /readyz with 200 and a check per storage dependency', async () => {
    const res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { status: string; checks: Record<string, string> };
    assert.equal(body.status, 'ready');
    const expected: Record<string, string> = server.running.db.kind === 'postgres' ? { postgres: 'ok' } : { database: 'ok' };
    if (REDIS_URL) expected.redis = 'ok';
    assert.deepEqual(body.checks, expected);
  });

  it('gives every response an X-Request-Id', async () => {
    const requests: Array<[string, RequestInit?]> = [
      ['/healthz'],
      ['/readyz'],
      ['/.well-known/openid-configuration'],
      ['/oauth/v2/keys'],
      ['/.well-known/oauth-authorization-server'],
      ['/no/such/path'],
      ['/oauth/v2/token', { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['/oidc/v1/userinfo'],
    ];
    const seen = new Set<string>();
    for (const [path, init] of requests) {
      const res = await fetch(`${server.url}${path}`, init);
      await res.arrayBuffer();
      const id = res.headers.get('x-request-id');
      assert.ok(id && /^[A-Za-z0-9._-]{1,64}$/.test(id), `${path} has X-Request-Id (${id})`);
      seen.add(id);
    }
    assert.equal(seen.size, requests.length, 'each request gets its own id');
  });

  it('echoes a sane incoming X-Request-Id', async () => {
    const res = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'lb-7f3a.91_b-2' } });
    await res.arrayBuffer();
    assert.equal(res.headers.get('x-request-id'), 'lb-7f3a.91_b-2');
  });

  it('replaces an X-Request-Id that is too long or carries odd characters', async () => {
    for (const bad of ['a'.repeat(200), 'abc def', '<script>alert(1)</script>', 'id;rm -rf /', '"quoted"']) {
      const res = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': bad } });
      await res.arrayBuffer();
      const id = res.headers.get('x-request-id');
      assert.ok(id, 'has an id');
      assert.notEqual(id, bad);
      assert.match(id, /^[A-Za-z0-9._-]{1,64}$/);
    }
  });

  it('never reflects a line break smuggled into X-Request-Id as a response header', async () => {
    const response = await rawRequest(server.url, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: abc\nInjected: yes\r\nConnection: close\r\n\r\n');
    const head = response.split('\r\n\r\n')[0]!;
    assert.match(head, /^HTTP\/1\.1 [24]\d\d /);
    assert.doesNotMatch(head, /^injected:/im);
    const id = /^x-request-id: (.*)$/im.exec(head)?.[1];
    if (id !== undefined) assert.match(id, /^[A-Za-z0-9._-]{1,64}$/);
  });

  it('answers garbage POSTed to the token, introspection and revocation endpoints with a 4xx JSON error, never 500', async () => {
    const bodies: Array<[string, string | Uint8Array]> = [
      ['application/x-www-form-urlencoded', 'garbage%%%&&=='],
      ['application/x-www-form-urlencoded', '%E0%A4%A'],
      ['application/x-www-form-urlencoded', new Uint8Array([0xff, 0xfe, 0x00, 0x01, 0x25])],
      ['application/x-www-form-urlencoded', ''],
      ['application/x-www-form-urlencoded', 'grant_type=authorization_code&grant_type=refresh_token&code=x'],
      ['application/x-www-form-urlencoded', `grant_type=${'x'.repeat(50_000)}`],
      ['application/json', '{"grant_type": '],
      ['text/plain', 'hello'],
      ['multipart/form-data; boundary=zzz', '--zzz\r\nbroken'],
    ];
    for (const path of ['/oauth/v2/token', '/oauth/v2/introspect', '/oauth/v2/revoke']) {
      for (const [type, body] of bodies) {
        // A copy of the bytes on its own ArrayBuffer: what the DOM typings (which xml-crypto's types load) call a BodyInit.
        const res = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': type },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        });
        const text = await res.text();
        const label = `${path} ${type} ${typeof body === 'string' ? body.slice(0, 40) : '<bytes>'} → ${res.status} ${text.slice(0, 200)}`;
        assert.ok(res.status >= 400 && res.status < 500, label);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/, label);
        const json = JSON.parse(text) as Json;
        assert.equal(typeof json.error, 'string', label);
      }
    }
  });

  it('answers a NUL in a form field, percent-encoded or as a raw byte, with 400 invalid_request', async () => {
    const bodies = [
      'grant_type=client_credentials&scope=openid%00',
      'token=abc%00def',
      new Uint8Array([...Buffer.from('token=abc'), 0, ...Buffer.from('def')]),
    ];
    for (const path of ['/oauth/v2/token', '/oauth/v2/introspect', '/oauth/v2/revoke']) {
      for (const body of bodies) {
        const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        const json = (await res.json()) as Json;
        assert.equal(res.status, 400, `${path} ${String(body)}`);
        assert.equal(json.error, 'invalid_request');
        assert.match(String(json.error_description), /NUL/);
      }
    }
  });

  it('answers a form body far over the limit with 400 and closes the connection instead of reading it all', async () => {
    for (const path of ['/oauth/v2/token', '/oauth/v2/introspect', '/oauth/v2/revoke']) {
      const { status, connection, body } = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
        const req = httpRequest(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text }));
        });
        // Once the server has answered and hung up, the rest of the body cannot be written.
        req.on('error', (err: NodeJS.ErrnoException) => (['EPIPE', 'ECONNRESET'].includes(err.code ?? '') ? undefined : reject(err)));
        req.setTimeout(10_000, () => req.destroy(new Error(`${path}: no answer to an oversized body`)));
        const chunk = `token=${'x'.repeat(64 * 1024)}`;
        let sent = 0;
        const pump = () => {
          while (sent < 128 && !req.destroyed) {
            sent += 1;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      assert.equal(status, 400, `${path}: ${body.slice(0, 200)}`);
      assert.equal((JSON.parse(body) as Json).error, 'invalid_request');
      assert.equal(connection, 'close', path);
    }
  });
});

describe('configurable key set caching', () => {
  let server: InProcessServer;
  before(async () => {
    server = await testServer({ env: { JWKS_MAX_AGE: '60' }, sharedStores: false });
  });
  after(async () => {
    await server?.stop();
  });

  it('serves /oauth/v2/keys with the max-age of JWKS_MAX_AGE', async () => {
    const res = await fetch(`${server.url}/oauth/v2/keys`);
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=60');
  });

  it('answers /readyz with 503 naming the database once the database is gone', async () => {
    await server.running.db.close();
    const res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 503);
    const body = (await res.json()) as { status: string; checks: Record<string, string> };
    assert.equal(body.status, 'unavailable');
    assert.equal(body.checks.database, 'unreachable');
    const health = await fetch(`${server.url}/healthz`);
    await health.arrayBuffer();
    assert.equal(health.status, 200, 'the process itself is still alive');
  });
});
