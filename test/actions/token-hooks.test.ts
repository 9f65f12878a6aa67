import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jwtVerify } from 'jose';
import * as client from 'openid-client';
import { interactionPage, LOGIN_FORM_REDIRECT, passwordFormAppWithSecret, postStep } from '../support/login-form.ts';
import { assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';
import { deriveKey, resolveMasterKey } from '../../src/keys/master-key.ts';
import { hookTargets } from '../../src/queries/token-hook-targets.ts';
import { discoverClients, type Clients } from '../support/tokens.ts';
import { startReceiver, trustInThisProcess, type Answer, type Receiver } from './receiver.ts';

// Token hooks (docs/actions.md, "Token hooks"): preaccesstoken and
// preuserinfo call restCall targets, HTTPS receivers started here that
// check every signature, at token issuance; openid-client is the app.

let server: TestServer;
let clients: Clients;
const receivers: Receiver[] = [];
const PASSWORD = 'Token-Hooks-Passw0rd';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const json = (body: unknown): Answer => ({ status: 200, body: JSON.stringify(body) });

let machine: { userId: string; config: client.Configuration };
let human: { userId: string; loginName: string };
let app: client.Configuration;

before(async () => {
  trustInThisProcess();
  server = await testServer({ captureLog: true });
  clients = await discoverClients(server.issuer);
  const created = await server.api('POST', '/management/v1/users/machine', {
    body: { userName: 'hooked-machine', name: 'Hooked machine', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' },
  });
  assert.equal(created.status, 200, created.text);
  const secret = await server.api('PUT', `/management/v1/users/${created.body.userId}/secret`, { body: {} });
  assert.equal(secret.status, 200, secret.text);
  machine = { userId: created.body.userId, config: clients.config(secret.body.clientId, client.ClientSecretBasic(secret.body.clientSecret)) };
  const person = await server.api('POST', '/management/v1/users/human', {
    body: {
      userName: 'hooked-human',
      profile: { firstName: 'Ada', lastName: 'Hook' },
      email: { email: 'hooked-human@example.com', isEmailVerified: true },
      password: PASSWORD,
    },
  });
  assert.equal(person.status, 200, person.text);
  const read = await server.api('GET', `/management/v1/users/${person.body.userId}`);
  human = { userId: person.body.userId, loginName: read.body.user.preferredLoginName };
  const web = await passwordFormAppWithSecret(server.api, 'Token hooks');
  app = clients.config(web.clientId, client.ClientSecretBasic(web.clientSecret));
});

after(async () => {
  await server?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  for (const receiver of receivers) {
    assert.equal(receiver.checked, receiver.attempts.length);
    assert.deepEqual(receiver.badSignatures, [], 'every hook call carried a valid signature');
  }
});

/** A receiver and a restCall target pointing at it. */
async function hookTarget(name: string, options: { interruptOnError?: boolean; timeout?: string } = {}): Promise<{ id: string; receiver: Receiver }> {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const res = await server.api('POST', '/v2beta/actions/targets', {
    body: { name, endpoint: receiver.url, timeout: options.timeout ?? '5s', restCall: { interruptOnError: options.interruptOnError ?? false } },
  });
  assert.equal(res.status, 200, res.text);
  receiver.key = res.body.signingKey;
  return { id: res.body.id, receiver };
}

async function setHooks(name: 'preaccesstoken' | 'preuserinfo', targets: string[]): Promise<void> {
  const res = await server.api('PUT', '/v2beta/actions/executions', {
    body: { condition: { function: { name } }, targets: targets.map((target) => ({ target })) },
  });
  assert.equal(res.status, 200, res.text);
}

/** A client_credentials JWT access token of the machine user, its verified claims and its introspection. */
async function machineToken(): Promise<{ token: string; claims: Record<string, unknown>; introspection: Record<string, unknown> }> {
  const tokens = await client.clientCredentialsGrant(machine.config, { scope: 'openid' });
  const { payload } = await jwtVerify(tokens.access_token, clients.jwks, { issuer: server.issuer, typ: 'at+jwt' });
  const introspection = await client.tokenIntrospection(machine.config, tokens.access_token);
  return { token: tokens.access_token, claims: payload, introspection };
}

/** The code flow of `app` for the human, the login forms posted as a browser would; openid-client redeems the code. */
async function signIn(scope: string) {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const expectedNonce = client.randomNonce();
  const page = await interactionPage(server.url, app.clientMetadata().client_id, {
    scope,
    state: expectedState,
    nonce: expectedNonce,
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
  });
  let answer = await postStep(page, 'password', { loginName: human.loginName, password: PASSWORD });
  let cookie = [page.cookie, ...answer.headers.getSetCookie().map((c) => c.split(';')[0])].join('; ');
  for (let hop = 0; hop < 5; hop++) {
    assert.equal(answer.status, 303, answer.text.slice(0, 300));
    const location = new URL(answer.headers.get('location')!, server.url);
    if (location.href.startsWith(LOGIN_FORM_REDIRECT)) {
      return client.authorizationCodeGrant(app, location, { pkceCodeVerifier, expectedState, expectedNonce });
    }
    const next = await fetch(location, { redirect: 'manual', headers: { cookie } });
    cookie = [cookie, ...next.headers.getSetCookie().map((c) => c.split(';')[0])].join('; ');
    answer = { status: next.status, headers: next.headers, text: await next.text(), body: undefined, json: undefined };
  }
  assert.fail('the sign-in did not reach the redirect_uri');
}

/** openid-client refuses a 500 as no OAuth answer; the answer itself must be RFC 6749 5.2's `server_error`. */
async function serverError(promise: Promise<unknown>, what: string): Promise<void> {
  const err = await promise.then(
    () => assert.fail(`${what}: the request succeeded`),
    (caught: unknown) => caught,
  );
  const response = (err as { cause?: unknown }).cause;
  assert.ok(response instanceof Response, `${what}: ${String(err)}`);
  assert.equal(response.status, 500, what);
  assert.equal(((await response.json()) as { error: string }).error, 'server_error', what);
}

describe('preaccesstoken', () => {
  it('adds claims to the JWT access token and its introspection, in target order, never a reserved claim', async () => {
    const first = await hookTarget('access-first');
    const second = await hookTarget('access-second');
    const order: string[] = [];
    first.receiver.answer = () => {
      order.push('first');
      return json({
        append_claims: [
          { key: 'tenant', value: 'acme' },
          { key: 'groups', value: ['a', 'b'] },
          { key: 'sub', value: 'someone-else' },
          { key: 'aud', value: 'elsewhere' },
          { key: 'client_id', value: 'other-client' },
          { key: 'scope', value: 'everything' },
          { key: 'active', value: false },
          { key: 'urn:service:iam:org:project:roles', value: { admin: {} } },
        ],
      });
    };
    second.receiver.answer = () => {
      order.push('second');
      return json({
        append_claims: [
          { key: 'tenant', value: 'acme-2' },
          { key: 'level', value: 2 },
        ],
      });
    };
    await setHooks('preaccesstoken', [first.id, second.id]);
    const { claims, introspection } = await machineToken();
    assert.deepEqual(order, ['first', 'second']);
    assert.equal(claims.tenant, 'acme-2', 'a later target wins');
    assert.deepEqual(claims.groups, ['a', 'b']);
    assert.equal(claims.level, 2);
    assert.equal(claims.sub, machine.userId);
    assert.ok(Array.isArray(claims.aud) && !claims.aud.includes('elsewhere'));
    assert.equal(claims.client_id, machine.config.clientMetadata().client_id);
    assert.equal(claims.scope, 'openid');
    assert.equal(claims.active, undefined);
    assert.equal(claims['urn:service:iam:org:project:roles'], undefined);
    assert.equal(introspection.active, true);
    assert.equal(introspection.tenant, 'acme-2');
    assert.deepEqual(introspection.groups, ['a', 'b']);
    assert.equal(introspection.sub, machine.userId);
    assert.equal(introspection.client_id, machine.config.clientMetadata().client_id);
    assert.ok(!('portcullis:hook_claims' in introspection));

    const body = first.receiver.attempts[0]!.body;
    assert.deepEqual(Object.keys(body).sort(), ['clientId', 'function', 'org', 'scopes', 'user', 'userGrants', 'userMetadata', 'userinfo']);
    assert.equal(body.function, 'preaccesstoken');
    assert.equal(body.user.id, machine.userId);
    assert.equal(body.user.machine.name, 'Hooked machine');
    assert.equal(body.userinfo.sub, machine.userId);
    assert.equal(body.clientId, machine.config.clientMetadata().client_id);
    assert.ok(Array.isArray(body.scopes));
    assert.deepEqual(body.userMetadata, []);
    assert.deepEqual(body.userGrants, []);
    assert.ok(body.org.id && body.org.primaryDomain);
    assert.equal(second.receiver.attempts[0]!.raw, first.receiver.attempts[0]!.raw, 'every target gets the same body');
    assert.match(server.logText(), /token hook claims dropped: reserved/);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`portcullis_token_hook_duration_seconds_count\\{target="${first.id}",outcome="ok"\\} 1`));
    await setHooks('preaccesstoken', []);
    const without = await machineToken();
    assert.equal(without.claims.tenant, undefined, 'no execution, no claims');
    assert.equal(first.receiver.attempts.length, 1);
  });

  it('writes set_user_metadata as the metadata API stores it, base64 values', async () => {
    const target = await hookTarget('metadata-writer');
    target.receiver.answer = () => json({ set_user_metadata: [{ key: 'seen-by-hook', value: b64('yes') }] });
    await setHooks('preaccesstoken', [target.id]);
    await machineToken();
    const stored = await server.api('GET', `/management/v1/users/${machine.userId}/metadata/seen-by-hook`);
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.body.metadata.value, b64('yes'));
    // The next call is told the metadata written.
    await machineToken();
    assert.deepEqual(target.receiver.attempts[1]!.body.userMetadata, [{ key: 'seen-by-hook', value: b64('yes') }]);
    // A value that is no base64 fails the hook: nothing is written.
    target.receiver.answer = () =>
      json({
        set_user_metadata: [
          { key: 'seen-by-hook', value: 'not base64!' },
          { key: 'other', value: b64('x') },
        ],
      });
    await machineToken();
    const after = await server.api('GET', `/management/v1/users/${machine.userId}/metadata/seen-by-hook`);
    assert.equal(after.body.metadata.value, b64('yes'));
    assert.equal((await server.api('GET', `/management/v1/users/${machine.userId}/metadata/other`)).status, 404);
    await setHooks('preaccesstoken', []);
  });

  it('skips a failing hook without interruptOnError: slow, not 2xx, not JSON, 10 MB, wrong types', async () => {
    const target = await hookTarget('hostile', { timeout: '0.5s' });
    await setHooks('preaccesstoken', [target.id]);
    const claim = { key: 'hostile', value: 'got through' };
    const answers: Array<[string, Answer]> = [
      ['slow', 'hang'],
      ['500', { status: 500, body: JSON.stringify({ append_claims: [claim] }) }],
      ['not JSON', { status: 200, body: `{"append_claims": [${JSON.stringify(claim)}]` }],
      ['10 MB', json({ append_claims: [claim, { key: 'padding', value: 'x'.repeat(10 * 1024 * 1024) }] })],
      ['a list', json([{ append_claims: [claim] }])],
      ['claims not a list', json({ append_claims: claim })],
      ['a key not a string', json({ append_claims: [claim, { key: 7, value: 'x' }] })],
      ['no value', json({ append_claims: [claim, { key: 'novalue' }] })],
      ['metadata value not a string', json({ append_claims: [claim], set_user_metadata: [{ key: 'k', value: 7 }] })],
      ['metadata key not a key', json({ append_claims: [claim], set_user_metadata: [{ key: '_x y', value: b64('x') }] })],
    ];
    for (const [what, answer] of answers) {
      target.receiver.answer = () => answer;
      const { claims, introspection } = await machineToken();
      assert.equal(claims.hostile, undefined, what);
      assert.equal(introspection.hostile, undefined, what);
      assert.equal(introspection.active, true, what);
    }
    assert.equal(target.receiver.attempts.length, answers.length);
    const log = server.logText();
    for (const outcome of ['timeout', 'http_error', 'invalid_answer']) assert.match(log, new RegExp(`"outcome":"${outcome}"[^\\n]*token hook failed; skipped`));
    assert.ok(!log.includes('got through'), 'the answer is never logged');
    await setHooks('preaccesstoken', []);
  });

  it('fails the token request with server_error when a hook with interruptOnError fails', async () => {
    const target = await hookTarget('interrupting', { interruptOnError: true, timeout: '0.5s' });
    await setHooks('preaccesstoken', [target.id]);
    for (const answer of ['hang', { status: 200, body: 'no json' }, json({ append_claims: 'x' })] as Answer[]) {
      target.receiver.answer = () => answer;
      await serverError(client.clientCredentialsGrant(machine.config, { scope: 'openid' }), JSON.stringify(answer));
    }
    target.receiver.answer = () => json({ append_claims: [{ key: 'tenant', value: 'fine' }] });
    assert.equal((await machineToken()).claims.tenant, 'fine');
    await setHooks('preaccesstoken', []);
  });
});

describe('the hook targets of a node', () => {
  it('must be restCall targets: a webhook or async target on a function is 400, and a hook target stays restCall', async () => {
    const endpoint = 'https://hooks.example.test/x';
    for (const [name, type] of [
      ['async-target', { restAsync: {} }],
      ['webhook-target', { restWebhook: { interruptOnError: true } }],
    ] as const) {
      const made = await server.api('POST', '/v2beta/actions/targets', { body: { name, endpoint, timeout: '1s', ...type } });
      assert.equal(made.status, 200, made.text);
      for (const fn of ['preaccesstoken', 'preuserinfo']) {
        const set = await server.api('PUT', '/v2beta/actions/executions', {
          body: { condition: { function: { name: fn } }, targets: [{ target: made.body.id }] },
        });
        assertInvalid(set, ['targets[0].target']);
      }
    }
    const hook = await hookTarget('stays-rest-call');
    await setHooks('preaccesstoken', [hook.id]);
    const changed = await server.api('PUT', `/v2beta/actions/targets/${hook.id}`, {
      body: { name: 'stays-rest-call', endpoint: hook.receiver.url, timeout: '1s', restAsync: {} },
    });
    assertInvalid(changed, ['restCall']);
    await setHooks('preaccesstoken', []);
  });

  it('are read once and kept, not per token request, until a change clears them', async () => {
    let queries = 0;
    const query = server.running.db.query.bind(server.running.db) as (...args: unknown[]) => unknown;
    const counted = {
      query: (...args: unknown[]) => {
        queries += 1;
        return query(...args);
      },
    };
    const sealingKey = deriveKey(resolveMasterKey(server.config.masterKey, server.config.dataDir).key, 'action signing key sealing');
    const targets = hookTargets(counted as never, sealingKey, (err) => assert.fail(String(err)));
    for (let i = 0; i < 50; i++) assert.deepEqual(await targets.of('preaccesstoken'), []);
    assert.equal(queries, 1, 'one query for all the look-ups, none of them with an execution');
    const target = await hookTarget('cached');
    await setHooks('preuserinfo', [target.id]);
    assert.deepEqual(await targets.of('preuserinfo'), [], 'kept until cleared');
    targets.clear();
    const [found] = await targets.of('preuserinfo');
    assert.equal(found?.id, target.id);
    assert.equal(found?.signingKey, target.receiver.key);
    await setHooks('preuserinfo', []);
  });
});

describe('preuserinfo', () => {
  it('adds claims to the ID token and userinfo, not to introspection; reserved claims stay', async () => {
    const target = await hookTarget('userinfo');
    target.receiver.answer = () =>
      json({
        append_claims: [
          { key: 'department', value: 'R&D' },
          { key: 'nonce', value: 'forged' },
          { key: 'iss', value: 'https://evil.example' },
          { key: 'sub', value: 'someone-else' },
          { key: 'urn:service:iam:user:resourceowner:id', value: 'other-org' },
        ],
      });
    await setHooks('preuserinfo', [target.id]);
    const tokens = await signIn('openid profile');
    const idToken = tokens.claims()!;
    assert.equal(idToken.department, 'R&D');
    assert.equal(idToken.sub, human.userId);
    assert.equal(idToken.iss, server.issuer);
    assert.notEqual(idToken.nonce, 'forged');
    assert.notEqual(idToken['urn:service:iam:user:resourceowner:id'], 'other-org');
    const userinfo = await client.fetchUserInfo(app, tokens.access_token, human.userId);
    assert.equal(userinfo.department, 'R&D');
    assert.equal(userinfo.sub, human.userId);
    assert.equal(userinfo.given_name, 'Ada');
    assert.equal(target.receiver.attempts.length, 2, 'one call for the ID token, one for userinfo');
    const body = target.receiver.attempts[0]!.body;
    assert.equal(body.function, 'preuserinfo');
    assert.equal(body.user.id, human.userId);
    assert.equal(body.user.human.email.email, 'hooked-human@example.com');
    assert.equal(body.userinfo.sub, human.userId);
    assert.equal(body.clientId, app.clientMetadata().client_id);
    assert.deepEqual(body.scopes, ['openid', 'profile']);
    const introspection = await client.tokenIntrospection(app, tokens.access_token);
    assert.equal(introspection.active, true);
    assert.equal(introspection.department, undefined);
    assert.equal(target.receiver.attempts.length, 2, 'introspection calls no preuserinfo hook');

    // With interruptOnError, a failing hook fails userinfo with server_error.
    const strict = await hookTarget('userinfo-strict', { interruptOnError: true });
    strict.receiver.answer = () => 500;
    await setHooks('preuserinfo', [strict.id]);
    await serverError(client.fetchUserInfo(app, tokens.access_token, human.userId), 'userinfo');
    await setHooks('preuserinfo', []);
  });
});
