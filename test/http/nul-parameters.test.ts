import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startTokenWorld, type TokenWorld } from '../support/tokens.ts';
import { interactionPage, LOGIN_FORM_REDIRECT, loginFormApp, postStep } from '../support/login-form.ts';

// A NUL in any parameter (docs/security.md, hostile input): PostgreSQL and
// PGlite refuse \u0000 in text, so a NUL that reached a stored record (an
// interaction holding the nonce or acr_values, a login name looked up) was a
// 500. At the door of every engine endpoint it is invalid_request; a login
// form drops such a field, and the page answers as for an empty one. Run it
// on both stores: with DATABASE_URL and REDIS_URL, and without (embedded).

const REDIRECT = LOGIN_FORM_REDIRECT;
const HTML = { accept: 'text/html' };

describe('a NUL in a parameter', () => {
  let world: TokenWorld;
  let clientId: string;
  let clientSecret: string;
  const password = 'Nul-Passw0rd!';

  before(async () => {
    world = await startTokenWorld({ AUTH_FAILURE_LIMIT: '0' });
    ({ clientId, clientSecret } = await loginFormApp(world, 'nul'));
    await ok(
      world.api('POST', '/management/v1/users/human', {
        userName: 'nully',
        profile: { firstName: 'Nu', lastName: 'Ll' },
        email: { email: 'nully@example.test', isEmailVerified: true },
        password,
      }),
      'human',
    );
  });

  after(async () => {
    await world?.stop();
  });

  function authorizeUrl(extra: Record<string, string> = {}): string {
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 's',
      nonce: 'n',
      ...extra,
    });
    return `${world.server.url}/oauth/v2/authorize?${params}`;
  }

  describe('at the authorization endpoint', () => {
    for (const name of ['nonce', 'acr_values', 'state', 'login_hint', 'claims']) {
      test(`in ${name}: invalid_request (the error page for a browser, JSON otherwise), not 500`, async () => {
        const page = await fetch(authorizeUrl({ [name]: 'a\u0000b' }), { headers: HTML, redirect: 'manual' });
        assert.equal(page.status, 400);
        assert.match(page.headers.get('content-type') ?? '', /text\/html/);
        assert.match(await page.text(), /invalid_request/);
        assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
        const json = await fetch(authorizeUrl({ [name]: 'a\u0000b' }), { redirect: 'manual' });
        assert.equal(json.status, 400);
        assert.equal(((await json.json()) as { error?: string }).error, 'invalid_request');
      });
    }

    test('without the NUL the same request goes on to the login page', async () => {
      const answer = await fetch(authorizeUrl({ nonce: 'ab', acr_values: 'pwd' }), { redirect: 'manual' });
      assert.equal(answer.status, 303);
      assert.match(answer.headers.get('location') ?? '', /^\/ui\/login\//);
    });
  });

  test('at end_session, userinfo and the token endpoint: invalid_request', async () => {
    const endSession = await fetch(`${world.server.url}/oidc/v1/end_session?state=a%00b`, { headers: HTML });
    assert.equal(endSession.status, 400);
    assert.match(await endSession.text(), /invalid_request/);
    const userinfo = await fetch(`${world.server.url}/oidc/v1/userinfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'access_token=abc%00def',
    });
    assert.equal(userinfo.status, 400);
    assert.equal(((await userinfo.json()) as { error?: string }).error, 'invalid_request');
    const token = await fetch(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
      body: 'grant_type=authorization_code&code=a%00b&redirect_uri=x',
    });
    assert.equal(token.status, 400);
    assert.equal(((await token.json()) as { error?: string }).error, 'invalid_request');
  });

  describe('on the login pages', () => {
    async function post(step: string, fields: Record<string, string>) {
      const answer = await postStep(await interactionPage(world.server.url, clientId), step, fields);
      return { status: answer.status, text: answer.text };
    }

    test('a NUL in the login name posted to the password step: the page says the credentials are wrong, not 500', async () => {
      const answer = await post('password', { loginName: 'nully\u0000', password });
      assert.equal(answer.status, 200);
      assert.match(answer.text, /The login name or password is wrong\./);
    });

    test('a NUL in the login name step: the field counts as empty', async () => {
      const answer = await post('login-name', { loginName: 'nul\u0000ly' });
      assert.equal(answer.status, 200);
      assert.match(answer.text, /This field is required\./);
    });

    test('the right login name and password still sign in', async () => {
      const answer = await post('password', { loginName: 'nully', password });
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
    });
  });
});
