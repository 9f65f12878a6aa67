import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { apiClient, request } from '../support/api.ts';
import {
  codeLogin,
  confidentialAppFor,
  landedOn,
  launchBrowser,
  needsChromium,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
} from '../support/browser.ts';
import { readAdminPat, testServer } from '../support/server.ts';

// Browser hardening of every HTML page the service renders (the login pages,
// and the engine's error, logout and form_post pages): a Content Security
// Policy without inline script or eval and with frame-ancestors 'none',
// nosniff, no referrer, no caching; cookies HttpOnly, SameSite=Lax, and
// Secure when the issuer is https. In Chromium the pages still work under
// that policy: not one violation on the way through login and logout.

let world: SignInWorld;
let rp: RelyingParty;
let user: TestUser;
let app: { clientId: string; clientSecret?: string };
let config: client.Configuration;

before(async () => {
  [world, rp] = await Promise.all([startSignInWorld(), startRelyingParty()]);
  app = await world.createApp({ ...confidentialAppFor(rp), name: 'Hardened' });
  user = await world.createUser('hedda', { firstName: 'Hedda', lastName: 'Hard' });
  config = await client.discovery(new URL(world.issuer), app.clientId, app.clientSecret, client.ClientSecretBasic(app.clientSecret!), {
    execute: [client.allowInsecureRequests],
  });
});

after(async () => {
  await rp?.close();
  await world?.stop();
});

function directives(csp: string | null): Map<string, string[]> {
  assert.ok(csp, 'a Content-Security-Policy header');
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

/** The headers docs/security.md names for every HTML page, and no inline script or style in the page itself. */
function assertHardened(headers: Headers | Record<string, string>, html: string, what: string): void {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] ?? null));
  assert.match(get('content-type') ?? '', /^text\/html/, what);
  const csp = directives(get('content-security-policy'));
  const scripts = csp.get('script-src') ?? csp.get('default-src') ?? [];
  assert.ok(!scripts.includes("'unsafe-inline'") && !scripts.includes("'unsafe-eval'"), `${what}: script-src ${scripts.join(' ')}`);
  assert.ok(!scripts.some((s) => /^'(sha256|sha384|sha512|nonce)-/.test(s)), `${what}: no inline script is allowed by hash or nonce`);
  assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], what);
  assert.equal(get('x-content-type-options'), 'nosniff', what);
  assert.equal(get('referrer-policy'), 'no-referrer', what);
  assert.equal(get('cache-control'), 'no-store', what);
  assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/i, `${what}: an inline <script>`);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, `${what}: inline style or event handler`);
}

async function startLogin(params: Record<string, string> = {}): Promise<{ location: string; cookies: string }> {
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: rp.callback,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    ...params,
  });
  const answer = await request(url.href);
  assert.equal(answer.status, 303, answer.text);
  return {
    location: new URL(answer.headers.get('location')!, world.server.url).href,
    cookies: answer.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; '),
  };
}

describe('headers of every HTML page', () => {
  test('login name, password and registration pages, and the page of an expired login', async () => {
    const { location, cookies } = await startLogin();
    const loginName = await request(location, { headers: { cookie: cookies } });
    assert.equal(loginName.status, 200);
    assertHardened(loginName.headers, loginName.text, 'login name page');
    const csrf = /name="csrf" value="([^"]+)"/.exec(loginName.text)![1]!;
    const password = await request(`${location}/login-name`, {
      method: 'POST',
      headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, loginName: user.loginName }),
    });
    assertHardened(password.headers, password.text, 'password page');
    const wrong = await request(`${location}/password`, {
      method: 'POST',
      headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, loginName: user.loginName, password: 'wrong' }),
    });
    assertHardened(wrong.headers, wrong.text, 'password page with an error');
    const register = await request(`${location}/register`, { headers: { cookie: cookies } });
    assertHardened(register.headers, register.text, 'registration page');
    const gone = await request(`${world.server.url}/ui/login/no-such-interaction`);
    assert.equal(gone.status, 400);
    assertHardened(gone.headers, gone.text, 'expired login page');
  });

  test("the engine's error page (an unregistered redirect_uri is never redirected to)", async () => {
    const answer = await request(
      `${world.server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: 'https://evil.example/cb', response_type: 'code', scope: 'openid' })}`,
    );
    assert.equal(answer.status, 400);
    assertHardened(answer.headers, answer.text, 'engine error page');
  });

  test("the engine's self-submitting logout form (end_session without a session) loads the served script", async () => {
    const answer = await request(`${world.server.url}/oidc/v1/end_session`);
    assert.equal(answer.status, 200, answer.text);
    assertHardened(answer.headers, answer.text, 'end_session form');
    const src = /<script src="([^"]+)"/.exec(answer.text)?.[1];
    assert.ok(src, 'the page loads a script from our origin');
    const script = await request(`${world.server.url}${src}`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type')!, /^text\/javascript/);
    assert.equal(script.headers.get('x-content-type-options'), 'nosniff');
    assert.match(script.text, /forms\[0\]\.submit\(\)/);
  });

  test('the style sheet is served with its type and nosniff; an unknown asset is 404', async () => {
    const { location, cookies } = await startLogin();
    const page = await request(location, { headers: { cookie: cookies } });
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(page.text)?.[1];
    assert.ok(href?.startsWith('/ui/assets/'), page.text.slice(0, 400));
    const css = await request(`${world.server.url}${href}`);
    assert.equal(css.status, 200);
    assert.match(css.headers.get('content-type')!, /^text\/css/);
    assert.equal(css.headers.get('x-content-type-options'), 'nosniff');
    assert.match(css.text, /\.brand/);
    assert.equal((await request(`${world.server.url}/ui/assets/pages.000000000000.css`)).status, 404);
  });
});

describe('cookie attributes', () => {
  function attributesOf(setCookies: string[]): Map<string, Set<string>> {
    return new Map(
      setCookies.map((c) => {
        const [pair, ...attrs] = c.split(';').map((p) => p.trim());
        return [
          pair!.split('=')[0]!,
          new Set(attrs.map((a) => a.split('=')[0]!.toLowerCase() + (a.toLowerCase().startsWith('samesite=') ? `=${a.split('=')[1]!.toLowerCase()}` : ''))),
        ];
      }),
    );
  }

  test('with an http issuer: HttpOnly and SameSite=Lax, not Secure (a browser would drop them)', async () => {
    const answer = await request(
      `${world.server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: rp.callback, response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
    );
    const cookies = attributesOf(answer.headers.getSetCookie());
    assert.ok(cookies.size >= 2, [...cookies.keys()].join());
    for (const [name, attrs] of cookies) {
      assert.ok(attrs.has('httponly'), `${name} is HttpOnly`);
      assert.ok(attrs.has('samesite=lax'), `${name} is SameSite=Lax`);
      assert.ok(!attrs.has('secure'), `${name} is not Secure`);
    }
  });

  test('with an https issuer every cookie is Secure, HttpOnly and SameSite=Lax, through the whole login', async () => {
    const https = await testServer({ env: { ISSUER: 'https://id.example.test' }, sharedStores: false });
    try {
      const api = apiClient(https.url, readAdminPat(https.dataDir));
      const project = await api('POST', '/management/v1/projects', { body: { name: 'P' } });
      const created = await api('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, { body: { name: 'A', ...confidentialAppFor(rp) } });
      const human = await api('POST', '/management/v1/users/human', {
        body: { userName: 'sec', profile: { firstName: 'S', lastName: 'C' }, email: { email: 'sec@example.test' }, password: 'Secure-Passw0rd' },
      });
      assert.equal(human.status, 200, human.text);
      const seen: string[] = [];
      const authorize = await request(
        `${https.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: created.body.clientId, redirect_uri: rp.callback, response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
      );
      seen.push(...authorize.headers.getSetCookie());
      const jar = authorize.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const location = authorize.headers.get('location')!;
      const page = await request(`${https.url}${new URL(location, https.url).pathname}`, { headers: { cookie: jar } });
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
      const login = await request(`${https.url}${new URL(location, https.url).pathname}/password`, {
        method: 'POST',
        headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, loginName: 'sec', password: 'Secure-Passw0rd' }),
      });
      assert.equal(login.status, 303, login.text);
      seen.push(...login.headers.getSetCookie());
      const resumed = await request(`${https.url}${new URL(login.headers.get('location')!).pathname}`, { headers: { cookie: jar } });
      seen.push(...resumed.headers.getSetCookie());
      const cookies = attributesOf(seen);
      assert.ok(
        [...cookies.keys()].some((name) => name.startsWith('_session')),
        `the session cookie was set: ${[...cookies.keys()].join()}`,
      );
      for (const [name, attrs] of cookies) {
        assert.ok(attrs.has('secure'), `${name} is Secure`);
        assert.ok(attrs.has('httponly'), `${name} is HttpOnly`);
        assert.ok(attrs.has('samesite=lax'), `${name} is SameSite=Lax`);
      }
    } finally {
      await https.stop();
    }
  });
});

describe('in Chromium: the pages work under their policy', { skip: needsChromium }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  /** A page that records every CSP violation the browser reports and every HTML document our server sent. */
  async function watchedPage(): Promise<{
    page: Page;
    violations: string[];
    documents: Array<Promise<{ url: string; headers: Record<string, string>; html?: string }>>;
    close(): Promise<void>;
  }> {
    const context = await browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const violations: string[] = [];
    const documents: Array<Promise<{ url: string; headers: Record<string, string>; html?: string }>> = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (load|execute|apply)/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (err) => violations.push(`page error: ${err.message}`));
    page.on('response', (response) => {
      if (response.request().resourceType() !== 'document' || !response.url().startsWith(world.issuer) || response.status() >= 300) return;
      // A self-submitting page may be gone before its body is read: its headers still count.
      documents.push(
        Promise.all([response.allHeaders(), response.text().catch(() => undefined)]).then(([headers, html]) => ({ url: response.url(), headers, html })),
      );
    });
    return { page, violations, documents, close: () => context.close() };
  }

  async function assertDocumentsHardened(documents: Array<Promise<{ url: string; headers: Record<string, string>; html?: string }>>): Promise<void> {
    assert.ok(documents.length > 0);
    for (const { url, headers, html } of await Promise.all(documents)) assertHardened(headers, html ?? '', url);
  }

  test('code login, then logout through the self-submitting logout page: styled pages, no violation', async () => {
    const { page, violations, documents, close } = await watchedPage();
    try {
      await page.goto(
        client.buildAuthorizationUrl(config, {
          redirect_uri: rp.callback,
          scope: 'openid',
          code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
          code_challenge_method: 'S256',
        }).href,
      );
      // The style sheet applied: the card is white on the grey page.
      assert.equal(await page.evaluate("getComputedStyle(document.querySelector('main')).backgroundColor"), 'rgb(255, 255, 255)');
      await page.goto('about:blank');
      const { tokens } = await codeLogin(page, config, rp, user, 'openid');
      await page.goto(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: rp.loggedOut, state: 'bye' }).href);
      assert.equal((await landedOn(page, rp.loggedOut)).searchParams.get('state'), 'bye', 'the logout form submitted itself');
      assert.deepEqual(violations, []);
      await assertDocumentsHardened(documents);
    } finally {
      await close();
    }
  });

  test('response_mode=form_post: the engine form submits itself to the app with the served script', async () => {
    const { page, violations, documents, close } = await watchedPage();
    try {
      const posted = new Promise<string>((resolve) => {
        page.on('request', (req) => {
          if (req.url().startsWith(rp.callback) && req.method() === 'POST') resolve(req.postData() ?? '');
        });
      });
      await page.goto(
        client.buildAuthorizationUrl(config, {
          redirect_uri: rp.callback,
          scope: 'openid',
          response_mode: 'form_post',
          state: 'fp',
          code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
          code_challenge_method: 'S256',
        }).href,
      );
      await signIn(page, user);
      const form = new URLSearchParams(await posted);
      assert.ok(form.get('code'), `a code was posted: ${form}`);
      assert.equal(form.get('state'), 'fp');
      assert.deepEqual(violations, []);
      await assertDocumentsHardened(documents);
    } finally {
      await close();
    }
  });

  test('a page of ours cannot be framed', async () => {
    const { page, close } = await watchedPage();
    try {
      const { location } = await startLogin();
      await page.setContent(`<iframe src="${location}"></iframe>`);
      const frame = await (await page.waitForSelector('iframe')).contentFrame();
      await page.waitForTimeout(1000);
      const content = frame ? await frame.content().catch(() => '') : '';
      assert.ok(!content.includes('id="loginName"'), 'the login page did not render in a frame');
    } finally {
      await close();
    }
  });
});
