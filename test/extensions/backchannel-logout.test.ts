import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import type { Browser, BrowserContext } from 'playwright-core';
import {
  codeLogin,
  landedOn,
  launchBrowser,
  needsChromium,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  rpConfig,
} from '../support/browser.ts';
import { freePort } from '../support/server.ts';
import { apiClient } from '../support/api.ts';
import { eventually } from '../support/tokens.ts';
import { loopbackNames } from '../support/loopback-names.ts';

// OIDC Back-Channel Logout 1.0: apps signed in to in one browser session
// get a logout token POSTed to their backChannelLogoutUri when the user
// logs out (end_session) or an administrator ends the user's sessions
// (DELETE /management/v1/users/{id}/sessions, or …/sessions/{sessionId}
// for one of them). A local HTTP server receives them; each is verified
// with the JWKS. A failing app is retried in the background while the
// user's logout goes on, and counted when it keeps failing. Deliveries
// go through the outbound client: the receivers here are on loopback,
// which apps reach only with OUTBOUND_ALLOW_PRIVATE (local development);
// without it, and for link-local or metadata addresses always, nothing is
// sent and no connection is opened.

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

interface Received {
  path: string;
  token: string;
  at: number;
}

/** The apps' servers: every POST is recorded; `/flaky` fails its first attempt, `/down` always. */
async function startReceiver(): Promise<{
  base: string;
  port: number;
  received: Received[];
  /** TCP connections accepted (a TLS ClientHello needs one too). */
  connections(): number;
  waitFor(path: string, count: number): Promise<Received[]>;
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  let flakyCalls = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const token = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('logout_token') ?? '';
      received.push({ path, token, at: Date.now() });
      const fail = path === '/down' || (path === '/flaky' && ++flakyCalls === 1);
      res.writeHead(fail ? 500 : 200, { 'cache-control': 'no-store' });
      res.end();
    });
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    received,
    connections: () => connections,
    async waitFor(path, count) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const got = received.filter((r) => r.path === path);
        if (got.length >= count) return got;
        if (Date.now() > deadline) throw new Error(`only ${got.length} of ${count} logout tokens at ${path}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Signs `user` in to each app in one browser context (one session: single sign-on after the first); answers the ID tokens. */
async function signInToEach(context: BrowserContext, rp: RelyingParty, user: TestUser, configs: client.Configuration[]): Promise<string[]> {
  const page = await context.newPage();
  const idTokens: string[] = [];
  for (const [i, config] of configs.entries()) {
    if (i === 0) {
      idTokens.push((await codeLogin(page, config, rp, user, 'openid')).tokens.id_token!);
      continue;
    }
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: rp.callback,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    await page.goto(url.href);
    const landed = await landedOn(page, rp.callback);
    idTokens.push((await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier, expectedState: 's' })).id_token!);
  }
  return idTokens;
}

/** The lines of a captured log with this message. */
function logLines(text: string, msg: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.includes(msg))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

describe('in Chromium', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let user: TestUser;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  const apps: Record<'withSid' | 'withoutSid' | 'flaky' | 'down', { clientId: string; clientSecret?: string; config?: client.Configuration }> = {} as never;

  before(async () => {
    [world, rp, browser, receiver] = await Promise.all([
      // Local development: the apps' receivers are on loopback.
      startSignInWorld({ OUTBOUND_ALLOW_PRIVATE: 'true' }, { captureLog: true }),
      startRelyingParty(),
      launchBrowser(),
      startReceiver(),
    ]);
    const web = (name: string, path: string, sessionRequired: boolean) =>
      world.createApp({
        name,
        redirectUris: [rp.callback],
        postLogoutRedirectUris: [rp.loggedOut],
        backChannelLogoutUri: `${receiver.base}${path}`,
        backChannelLogoutSessionRequired: sessionRequired,
      } as never);
    [apps.withSid, apps.withoutSid, apps.flaky, apps.down, user] = await Promise.all([
      web('With sid', '/with-sid', true),
      web('Without sid', '/without-sid', false),
      web('Flaky', '/flaky', true),
      web('Down', '/down', true),
      world.createUser('logan'),
    ]);
    for (const app of Object.values(apps)) {
      app.config = await rpConfig(world, app);
    }
    jwks = createRemoteJWKSet(new URL(apps.withSid.config!.serverMetadata().jwks_uri!));
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    await rp?.close();
    await world?.stop();
  });

  /** OIDC Back-Channel Logout 2.6: what an app checks before it trusts a logout token. */
  async function verifyLogoutToken(token: string, clientId: string): Promise<JWTPayload> {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: world.issuer, audience: clientId, maxTokenAge: '2 minutes' });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.deepEqual(payload.events, { [EVENT]: {} });
    assert.equal(payload.nonce, undefined, 'a logout token never carries a nonce');
    assert.ok(typeof payload.jti === 'string' && payload.jti.length > 0);
    assert.equal(payload.sub, user.userId);
    return payload;
  }

  /** Signs the user in to every named app in one browser context (one session); answers each app's ID token. */
  async function signInEverywhere(context: BrowserContext, names: (keyof typeof apps)[]): Promise<Record<string, string>> {
    const idTokens = await signInToEach(
      context,
      rp,
      user,
      names.map((name) => apps[name].config!),
    );
    return Object.fromEntries(names.map((name, i) => [name, idTokens[i]!]));
  }

  async function metric(result: string): Promise<number> {
    const text = await (await fetch(`${world.server.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`portcullis_backchannel_logouts_total{result="${result}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  test('discovery advertises back-channel logout with sid', async () => {
    const metadata = apps.withSid.config!.serverMetadata();
    assert.equal(metadata.backchannel_logout_supported, true);
    assert.equal(metadata.backchannel_logout_session_supported, true);
  });

  test('end_session: every app of the session gets a verified logout token; the logout does not wait for a failing app, which is retried', async () => {
    const context = await browser.newContext();
    const idTokens = await signInEverywhere(context, ['withSid', 'withoutSid', 'flaky', 'down']);
    const failedBefore = await metric('failed');
    const page = context.pages()[0]!;
    const logout = client.buildEndSessionUrl(apps.withSid.config!, { id_token_hint: idTokens.withSid!, post_logout_redirect_uri: rp.loggedOut, state: 'bye' });
    const started = Date.now();
    await page.goto(logout.href);
    await landedOn(page, rp.loggedOut);
    const loggedOutAt = Date.now();
    await context.close();

    const [withSid] = await receiver.waitFor('/with-sid', 1);
    const payload = await verifyLogoutToken(withSid!.token, apps.withSid.clientId);
    assert.equal(payload.sid, decodeJwt(idTokens.withSid!).sid, 'the sid of the ID token the app holds');
    const [withoutSid] = await receiver.waitFor('/without-sid', 1);
    const other = await verifyLogoutToken(withoutSid!.token, apps.withoutSid.clientId);
    assert.equal(other.sid, undefined, 'no sid for an app that did not ask for it');

    // The flaky app answered 500 once, then 200 to a second, new token.
    const flaky = await receiver.waitFor('/flaky', 2);
    assert.notEqual(flaky[0]!.token, flaky[1]!.token);
    await verifyLogoutToken(flaky[1]!.token, apps.flaky.clientId);
    assert.ok(flaky[1]!.at >= loggedOutAt, 'the retry came after the user was already logged out');
    assert.ok(loggedOutAt - started < 2500, `logout took ${loggedOutAt - started} ms`);

    // The app that is down: three attempts, then logged and counted.
    await receiver.waitFor('/down', 3);
    const deadline = Date.now() + 5000;
    while ((await metric('failed')) <= failedBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await metric('failed'), failedBefore + 1);
    assert.ok((await metric('delivered')) >= 3);
  });

  test('DELETE /management/v1/users/{id}/sessions ends every session of the user, with a logout token for each', async () => {
    const before = receiver.received.filter((r) => r.path === '/with-sid').length;
    const first = await browser.newContext();
    const second = await browser.newContext();
    const [one, two] = [await signInEverywhere(first, ['withSid']), await signInEverywhere(second, ['withSid'])];
    const sids = [decodeJwt(one.withSid!).sid, decodeJwt(two.withSid!).sid];
    assert.notEqual(sids[0], sids[1]);

    const ended = await world.api('DELETE', `/management/v1/users/${user.userId}/sessions`);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.ok(ended.body.details.sequence);
    const tokens = (await receiver.waitFor('/with-sid', before + 2)).slice(before);
    const received = await Promise.all(tokens.map((t) => verifyLogoutToken(t.token, apps.withSid.clientId)));
    assert.deepEqual(received.map((p) => p.sid).sort(), [...sids].sort());

    // Both browsers are signed out: a silent authorization needs a login.
    for (const context of [first, second]) {
      const page = context.pages()[0]!;
      const url = client.buildAuthorizationUrl(apps.withSid.config!, {
        redirect_uri: rp.callback,
        scope: 'openid',
        prompt: 'none',
        state: 'x',
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      await page.goto(url.href);
      const landed = await landedOn(page, rp.callback);
      assert.equal(landed.searchParams.get('error'), 'login_required');
      await context.close();
    }
    const again = await world.api('DELETE', `/management/v1/users/${user.userId}/sessions`);
    assert.equal(again.status, 200, 'no session left is no error');
    const unknown = await world.api('DELETE', '/management/v1/users/999999999/sessions');
    assert.equal(unknown.status, 404);
  });

  test('DELETE /management/v1/users/{id}/sessions/{sessionId} ends that one session: one logout token, for its sid', async () => {
    const sessionIds = async (): Promise<string[]> => {
      const listed = await world.api('GET', `/management/v1/users/${user.userId}/sessions`);
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      return listed.body.result.map((session: { id: string }) => session.id);
    };
    const first = await browser.newContext();
    const second = await browser.newContext();
    const known = await sessionIds();
    const one = await signInEverywhere(first, ['withSid']);
    const [firstId] = (await sessionIds()).filter((id) => !known.includes(id));
    assert.ok(firstId, 'the sign-in is listed');
    await signInEverywhere(second, ['withSid']);
    const before = receiver.received.filter((r) => r.path === '/with-sid').length;

    const ended = await world.api('DELETE', `/management/v1/users/${user.userId}/sessions/${firstId}`);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    const [token] = (await receiver.waitFor('/with-sid', before + 1)).slice(before);
    assert.equal((await verifyLogoutToken(token!.token, apps.withSid.clientId)).sid, decodeJwt(one.withSid!).sid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(receiver.received.filter((r) => r.path === '/with-sid').length, before + 1, 'the other session gets no logout token');
    const left = await sessionIds();
    assert.ok(!left.includes(firstId));
    assert.equal(left.length, known.length + 1, 'the other browser is still signed in');
    await first.close();
    await second.close();
  });

  test('a metadata address stored before this check is refused at send time, even with OUTBOUND_ALLOW_PRIVATE, and not retried', async () => {
    const app = await world.createApp({ name: 'Legacy', redirectUris: [rp.callback], backChannelLogoutUri: `${receiver.base}/legacy` } as never);
    // An app saved before link-local addresses were refused at registration.
    await world.server.running.db.query('UPDATE apps SET backchannel_logout_uri = $1 WHERE client_id = $2', [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      app.clientId,
    ]);
    const config = await rpConfig(world, app);
    const context = await browser.newContext();
    await signInToEach(context, rp, user, [config]);
    await context.close();

    assert.equal((await world.api('DELETE', `/management/v1/users/${user.userId}/sessions`)).status, 200);
    const failedOf = () => logLines(world.server.logText(), 'back-channel logout delivery failed').filter((line) => line.clientId === app.clientId);
    assert.ok(await eventually(async () => failedOf().length > 0), 'the delivery failed');
    const [failed] = failedOf();
    assert.equal(failed!.attempts, 1, 'a refused address is not tried again');
    assert.match(String(failed!.reason), /169\.254\.169\.254 is refused: link-local, metadata or multicast address/);
    const refused = logLines(world.server.logText(), 'outbound call failed').filter((line) => line.host === '169.254.169.254');
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!.error, 'refused');
    assert.ok(!world.server.logText().includes('security-credentials'), 'the path is never logged');
  });

  describe('backChannelLogoutUri is validated', () => {
    // App names are unique within a project: each app made here has its own.
    let made = 0;
    const create = (fields: Record<string, unknown>) =>
      world.api('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, {
        name: `v ${++made}`,
        redirectUris: ['https://app.example.com/cb'],
        ...fields,
      });
    for (const [uri, devMode] of [
      ['http://app.example.com/logout', false],
      ['https://127.0.0.1/logout', false],
      ['https://10.1.2.3/logout', false],
      ['https://192.168.0.5/logout', false],
      ['https://[::1]/logout', false],
      ['https://localhost/logout', false],
      ['https://[::ffff:127.0.0.1]/logout', false],
      ['https://100.64.1.1/logout', false],
      ['https://0.0.0.0/logout', false],
      ['http://169.254.169.254/latest/meta-data/', true],
      ['http://[::ffff:169.254.169.254]/latest/meta-data/', true],
      ['http://[fd00:ec2::254]/latest/meta-data/', true],
      ['http://[fe80::1]/logout', true],
      ['https://app.example.com/logout#frag', true],
      ['not a uri', true],
      ['javascript:alert(1)', true],
    ] as const) {
      test(`${uri}${devMode ? ' (devMode)' : ''}: 400 naming the field`, async () => {
        const res = await create({ backChannelLogoutUri: uri, devMode });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(JSON.stringify(res.body), /backChannelLogoutUri/);
      });
    }
    test('https on a public name is accepted; so is http on loopback in devMode, which is reached only with OUTBOUND_ALLOW_PRIVATE', async () => {
      assert.equal((await create({ backChannelLogoutUri: 'https://app.example.com/logout', devMode: false })).status, 200);
      assert.equal((await create({ backChannelLogoutUri: 'http://localhost:3000/logout', devMode: true })).status, 200);
      assert.equal((await create({ backChannelLogoutUri: 'http://127.0.0.1:9998/internal-admin?x=1', devMode: true })).status, 200);
    });
    test('backChannelLogoutSessionRequired needs a URI', async () => {
      const res = await create({ backChannelLogoutSessionRequired: true, devMode: false });
      assert.equal(res.status, 400);
      assert.match(JSON.stringify(res.body), /backChannelLogoutSessionRequired/);
    });
  });
});

// The reproduction: an org owner gives its own devMode app a
// back-channel logout URI on an internal address, then ends one of its
// users' sessions. With the default settings nothing may reach the
// listener: not a POST, not a TCP connection.
describe('an org owner cannot make the server call internal addresses (default settings)', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let listener: Awaited<ReturnType<typeof startReceiver>>;
  let owner: ReturnType<typeof apiClient>;

  before(async () => {
    [world, rp, browser, listener] = await Promise.all([startSignInWorld({}, { captureLog: true }), startRelyingParty(), launchBrowser(), startReceiver()]);
    const machine = await world.api('POST', '/management/v1/users/machine', { userName: 'acme-owner', name: 'ACME owner' });
    assert.equal(machine.status, 200, JSON.stringify(machine.body));
    const member = await world.api('POST', '/management/v1/orgs/me/members', { userId: machine.body.userId, roles: ['ORG_OWNER'] });
    assert.equal(member.status, 200, JSON.stringify(member.body));
    const pat = await world.api('POST', `/management/v1/users/${machine.body.userId}/pats`, {});
    assert.equal(pat.status, 200, JSON.stringify(pat.body));
    owner = apiClient(world.server.url, pat.body.token, { strictJson: true });
  });

  after(async () => {
    await browser?.close();
    await listener?.close();
    await rp?.close();
    await world?.stop();
  });

  test('devMode app on 127.0.0.1, and names resolving to loopback: the session ends, the listener gets no request and no connection', async () => {
    const uris = [
      `http://127.0.0.1:${listener.port}/internal-admin?x=1`,
      ...(await loopbackNames()).flatMap((name) => [`http://${name}:${listener.port}/internal-admin`, `https://${name}:${listener.port}/internal-admin`]),
    ];
    const apps: { clientId: string; config: client.Configuration }[] = [];
    for (const [i, uri] of uris.entries()) {
      const created = await owner('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, {
        body: { name: `Internal ${i}`, redirectUris: [rp.callback], devMode: true, backChannelLogoutUri: uri },
      });
      assert.equal(created.status, 200, created.text);
      const config = await client.discovery(new URL(world.issuer), created.body.clientId, undefined, client.ClientSecretBasic(created.body.clientSecret), {
        execute: [client.allowInsecureRequests],
      });
      apps.push({ clientId: created.body.clientId, config });
    }
    // Without devMode an https URI on a name is accepted at registration: what it resolves to is checked at every send.
    const named = uris.find((uri) => uri.startsWith('https://') && !uri.includes('localhost'));
    if (named) {
      const plain = await owner('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, {
        body: { name: 'Named', redirectUris: ['https://app.example.com/cb'], backChannelLogoutUri: named },
      });
      assert.equal(plain.status, 200, plain.text);
    }

    const user = await world.createUser('victim');
    const context = await browser.newContext();
    await signInToEach(
      context,
      rp,
      user,
      apps.map((app) => app.config),
    );
    await context.close();

    const ended = await owner('DELETE', `/management/v1/users/${user.userId}/sessions`);
    assert.equal(ended.status, 200, ended.text);
    const failed = () => logLines(world.server.logText(), 'back-channel logout delivery failed');
    assert.ok(await eventually(async () => failed().length >= apps.length), `${failed().length} of ${apps.length} deliveries failed`);
    assert.deepEqual(
      failed()
        .map((line) => line.clientId)
        .sort(),
      apps.map((app) => app.clientId).sort(),
    );
    for (const line of failed()) {
      assert.equal(line.attempts, 1);
      assert.match(String(line.reason), /is refused: loopback or private address/);
    }
    assert.equal(listener.received.length, 0, 'no POST reached the listener');
    assert.equal(listener.connections(), 0, 'no connection was opened to it, not even a TLS ClientHello');
    assert.ok(!world.server.logText().includes('internal-admin'), 'the URI path is never logged');
  });

  test('a devMode app cannot register a link-local or metadata address', async () => {
    for (const uri of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      const res = await owner('POST', `/management/v1/projects/${world.projectId}/apps/oidc`, {
        body: { name: 'Metadata', redirectUris: [rp.callback], devMode: true, backChannelLogoutUri: uri },
      });
      assert.equal(res.status, 400, res.text);
      assert.match(res.text, /backChannelLogoutUri/);
    }
  });
});
