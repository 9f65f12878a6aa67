import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testServer, type TestServer } from '../support/server.ts';

// The code pages against the address throttle (docs/security.md): a wrong
// code is a failed authentication of the client address like a wrong
// password, and a blocked address gets the 429 page with the right code too.

describe('the code pages and the address throttle', () => {
  let server: TestServer;
  let orgId: string;

  before(async () => {
    server = await testServer({ env: { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_WINDOW: '600' } });
    const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'ACME', domain: 'acme.example.test' },
        human: { userName: 'owner', profile: { firstName: 'O', lastName: 'W' }, email: { email: 'owner@acme.example.test' }, password: 'Owner-Passw0rd' },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    orgId = setup.body.orgId;
  });
  after(() => server?.stop());

  /** The page's form cookie and CSRF token, as a browser gets them. */
  async function openForm(path: string): Promise<{ cookie: string; csrf: string }> {
    const page = await fetch(`${server.url}${path}`);
    assert.equal(page.status, 200);
    const cookie = page.headers
      .getSetCookie()
      .find((c) => c.startsWith('_codeform='))!
      .split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    return { cookie, csrf };
  }

  test('wrong codes on the reset page block the address; then even the right code gets 429 with Retry-After', async () => {
    const user = await server.api('POST', '/management/v1/users/human', {
      body: {
        userName: 'tess',
        profile: { firstName: 'T', lastName: 'T' },
        email: { email: 'tess@acme.example.test', isEmailVerified: true },
        password: 'Tess-Passw0rd',
      },
      orgId,
    });
    const userId: string = user.body.userId;
    const issued = await server.api('POST', `/management/v1/users/${userId}/password/_reset`, { body: { returnCode: true }, orgId });
    assert.equal(issued.status, 200, issued.text);
    const { cookie, csrf } = await openForm(`/ui/login/password/init?userID=${userId}`);
    const post = (code: string) =>
      fetch(`${server.url}/ui/login/password/init`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, userID: userId, code, password: 'Tess-New-Passw0rd', passwordRepeat: 'Tess-New-Passw0rd' }),
      });
    for (const code of ['WRONG00001', 'WRONG00002', 'WRONG00003']) assert.equal((await post(code)).status, 400);
    const blocked = await post(issued.body.verificationCode);
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    // The block holds on every surface of the address, the admin API included.
    const api = await server.api('GET', `/management/v1/users/${userId}`, { orgId });
    assert.equal(api.status, 429);
    assert.equal(api.body.code, 8);
  });

  test('a POST without the form cookie or with another token is the "form expired" page, and changes nothing', async () => {
    const { cookie } = await openForm('/ui/login/mail/verification');
    const answer = await fetch(`${server.url}/ui/login/mail/verification`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'forged', userID: 'someone', code: 'ABCDE12345' }),
    });
    assert.equal(answer.status, 403);
    const bare = await fetch(`${server.url}/ui/login/mail/verification`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ userID: 'someone', code: 'ABCDE12345' }),
    });
    assert.equal(bare.status, 403);
  });
});
