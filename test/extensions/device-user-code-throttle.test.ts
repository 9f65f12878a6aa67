import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testServer, type TestServer } from '../support/server.ts';

// A device user code is a short secret (RFC 8628 5.1: the server must guard
// against guessing): every wrong code counts as a failed authentication of
// the address, and past AUTH_FAILURE_LIMIT the page answers 429 with
// Retry-After (docs/security.md, throttling).

describe('wrong device user codes are throttled per client address', () => {
  let server: TestServer;
  before(async () => {
    server = await testServer({ env: { AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW: '60' } });
  });
  after(async () => {
    await server?.stop();
  });

  interface CodeForm {
    action: string;
    xsrf: string;
    cookie: string;
  }

  /** The form on a user-code page: where it posts and its anti-forgery field (renewed on every page). */
  function formOn(html: string, cookie: string): CodeForm {
    const action = /action="([^"]*)"/.exec(html)?.[1];
    const xsrf = /name="xsrf" value="([^"]*)"/.exec(html)?.[1];
    assert.ok(action && xsrf, `the user-code form in ${html.slice(0, 300)}`);
    return { action: new URL(action.replaceAll('&amp;', '&'), server.url).href, xsrf, cookie };
  }

  async function openCodePage(): Promise<CodeForm> {
    const res = await fetch(`${server.url}/ui/login/device`);
    assert.equal(res.status, 200);
    return formOn(
      await res.text(),
      res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; '),
    );
  }

  const submit = (form: CodeForm, code: string) =>
    fetch(form.action, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: form.xsrf, user_code: code }),
    });

  test('four wrong codes (more than the limit of 3) get the form back with a message; the next attempt, even another code, is 429 with Retry-After', async () => {
    let form = await openCodePage();
    for (const code of ['BCDF-GHJK', 'bcdfghjm', 'XXXX-XXXX', 'bcdf-ghjn']) {
      const res = await submit(form, code);
      assert.equal(res.status, 200, code);
      const html = await res.text();
      assert.match(html, /not valid/);
      form = formOn(html, form.cookie);
    }
    const blocked = await submit(form, 'BCDF-GHJL');
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    assert.match(await blocked.text(), /Too many failed sign-in attempts/);
    // Other surfaces see the same block: the address is blocked, not the page.
    const token = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=openid&client_id=x&client_secret=y',
    });
    assert.equal(token.status, 429);
  });
});
