import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testServer, type InProcessServer } from '../support/server.ts';

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').pop()) : undefined;
}

describe('GET /metrics', () => {
  let server: InProcessServer;
  let pat: string;
  before(async () => {
    server = await testServer();
    pat = readFileSync(join(server.config.dataDir, 'admin.pat'), 'utf8').trim();
  });
  after(() => server.stop());

  const metrics = async () => {
    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    return response.text();
  };

  it('counts requests by route, method and status, with unknown paths folded into "other"', async () => {
    await fetch(`${server.url}/.well-known/openid-configuration`);
    for (const path of ['/random-1', '/random-2', '/random-3']) await fetch(`${server.url}${path}`);
    const text = await metrics();
    assert.ok((sample(text, 'portcullis_http_requests_total', { route: '/.well-known/openid-configuration', method: 'GET', status: '200' }) ?? 0) >= 1);
    assert.ok((sample(text, 'portcullis_http_requests_total', { route: 'other', status: '404' }) ?? 0) >= 3);
    assert.doesNotMatch(text, /random-1/);
    assert.match(text, /portcullis_http_request_duration_seconds_bucket\{/);
  });

  it('keeps route labels bounded: paths under engine and login-page prefixes that nothing serves count as "other"', async () => {
    const junk = [
      '/oidc/v1/end_session/junk-a1',
      '/oauth/v2/authorize/uid/junk-b2',
      '/ui/login/uid/junk-c3',
      '/ui/login/junk-d4/password/more',
      '/oauth/v2/TOKEN',
    ];
    for (const path of junk) await fetch(`${server.url}${path}`);
    const text = await metrics();
    for (const marker of ['junk-a1', 'junk-b2', 'junk-c3', 'junk-d4', 'TOKEN']) assert.doesNotMatch(text, new RegExp(marker));
    assert.ok((sample(text, 'portcullis_http_requests_total', { route: 'other', status: '404' }) ?? 0) >= junk.length);
  });

  it('counts admin API calls by their route pattern, not by ids', async () => {
    await fetch(`${server.url}/management/v1/users/123456`, { headers: { authorization: `Bearer ${pat}` } });
    const text = await metrics();
    assert.ok((sample(text, 'portcullis_http_requests_total', { route: '/management/v1/users/:userId', status: '404' }) ?? 0) >= 1);
    assert.doesNotMatch(text, /123456/);
  });

  it('counts access tokens issued by grant type', async () => {
    const headers = { authorization: `Bearer ${pat}`, 'content-type': 'application/json' };
    const machine = (await (
      await fetch(`${server.url}/management/v1/users/machine`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ userName: 'metrics-bot', name: 'Metrics bot' }),
      })
    ).json()) as { userId: string };
    const secret = (await (await fetch(`${server.url}/management/v1/users/${machine.userId}/secret`, { method: 'PUT', headers })).json()) as {
      clientId: string;
      clientSecret: string;
    };
    const before = sample(await metrics(), 'portcullis_tokens_issued_total', { grant_type: 'client_credentials' }) ?? 0;
    const basic = Buffer.from(`${secret.clientId}:${secret.clientSecret}`).toString('base64');
    const token = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=openid',
    });
    assert.equal(token.status, 200);
    assert.equal(sample(await metrics(), 'portcullis_tokens_issued_total', { grant_type: 'client_credentials' }), before + 1);
  });

  it('reports the age of the current signing key and never a secret', async () => {
    const text = await metrics();
    const age = Number(
      text
        .split('\n')
        .find((l) => l.startsWith('portcullis_signing_key_age_seconds '))
        ?.split(' ')[1],
    );
    assert.ok(age >= 0 && age < 3600, `key age ${age}`);
    assert.ok(!text.includes(pat));
  });
});
