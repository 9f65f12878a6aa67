import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startTokenWorld, type TokenWorld } from '../support/tokens.ts';

// Self-registration's "this login name is not available" says an account
// exists: it counts towards the per-address throttle like a failed login
// (docs/security.md), so after AUTH_FAILURE_LIMIT of them the address gets
// the 429 page, on the registration and the login page alike.

const LIMIT = 3;
const REDIRECT = 'http://localhost:1/cb';

describe('registration answers and the address throttle', () => {
  let world: TokenWorld;
  let clientId: string;

  before(async () => {
    world = await startTokenWorld({ AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW: '600' });
    const projectId = await world.createProject('signup');
    const app = await world.createApp(projectId, {
      redirectUris: [REDIRECT],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      devMode: true,
    });
    clientId = app.clientId;
    await ok(
      world.api('POST', '/management/v1/users/human', {
        userName: 'taken@example.test',
        profile: { firstName: 'Ta', lastName: 'Ken' },
        email: { email: 'taken@example.test', isEmailVerified: true },
        password: 'Taken-Passw0rd',
      }),
      'human',
    );
  });

  after(async () => {
    await world?.stop();
  });

  /** The registration form of a fresh authorization with prompt=create: where it posts, its cookies and CSRF token. */
  async function registrationForm(): Promise<{ action: string; cookie: string; csrf: string }> {
    const params = new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', prompt: 'create', state: 's' });
    const start = await fetch(`${world.server.url}/oauth/v2/authorize?${params}`, { redirect: 'manual' });
    assert.equal(start.status, 303);
    const location = start.headers.get('location')!;
    const cookie = start.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const page = await fetch(`${world.server.url}${location}`, { headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    return { action: `${world.server.url}${location}`, cookie, csrf };
  }

  async function register(email: string): Promise<{ status: number; text: string; retryAfter: string | null }> {
    const { action, cookie, csrf } = await registrationForm();
    const answer = await fetch(`${action}/register`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, givenName: 'Eve', familyName: 'Probe', email, password: 'Probe-Passw0rd', passwordRepeat: 'Probe-Passw0rd' }),
    });
    return { status: answer.status, text: await answer.text(), retryAfter: answer.headers.get('retry-after') };
  }

  test('a registration with a free login name goes through and counts nothing', async () => {
    const answer = await register('fresh@example.test');
    assert.equal(answer.status, 303, answer.text.slice(0, 300));
  });

  test(`after ${LIMIT} "not available" answers (and the one that crosses the limit) the address gets the 429 page, on the login page too`, async () => {
    for (let i = 1; i <= LIMIT + 1; i += 1) {
      const answer = await register('taken@example.test');
      assert.equal(answer.status, 200, `answer ${i}`);
      assert.match(answer.text, /This login name is not available\./, `answer ${i}`);
    }
    const blocked = await register('taken@example.test');
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.retryAfter) >= 1, `Retry-After ${blocked.retryAfter}`);
    assert.match(blocked.text, /Too many failed sign-in attempts/);
    assert.doesNotMatch(blocked.text, /not available/, 'no more oracle answers');

    const other = await register('also-free@example.test');
    assert.equal(other.status, 429, 'a blocked address registers nothing, whatever the name');

    const { action, cookie, csrf } = await registrationForm();
    const login = await fetch(`${action}/password`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, loginName: 'taken@example.test', password: 'Taken-Passw0rd' }),
    });
    assert.equal(login.status, 429, 'the same throttle as failed logins');
  });
});
