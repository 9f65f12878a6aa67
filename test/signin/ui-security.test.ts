import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { APIResponse, BrowserContext, BrowserContextOptions, Page, Response } from 'playwright-core';
import {
  ARTIFACTS,
  landedOn,
  screenshot,
  signIn,
  startLoginUi,
  type LoginUi,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  needsChromium,
} from '../support/browser.ts';

// The whole file drives Chromium: skipped, with its reason, where it is not installed.
describe('in Chromium', { skip: needsChromium }, () => {
  // The login UI under attack and for everyone: no user enumeration, CSRF and
  // cross-site form posts, dead or garbage requests, cookie attributes, page
  // headers, labels and focus, pages without JavaScript, and screenshots of
  // every page kind for a person to look at.

  let ui: LoginUi<'alice' | 'bob' | 'mallory'>;
  let world: SignInWorld;
  let rp: RelyingParty;
  let app: { clientId: string; clientSecret?: string };
  let alice: TestUser;
  let bob: TestUser;
  let mallory: TestUser;

  before(async () => {
    ui = await startLoginUi({
      alice: { firstName: 'Alice', lastName: 'Anderson' },
      bob: { firstName: 'Bob', lastName: 'Baker' },
      mallory: { firstName: 'Mallory', lastName: 'Mole' },
    });
    ({ world, rp, app } = ui);
    ({ alice, bob, mallory } = ui.users);
  });

  after(async () => {
    await ui?.stop();
  });

  // ---------------------------------------------------------------- helpers

  const freshPage = (options?: BrowserContextOptions) => ui.freshPage(options);
  const closeContexts = () => ui.closeContexts();

  function authorizeUrl(params: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      client_id: app.clientId,
      redirect_uri: rp.callback,
      response_type: 'code',
      scope: 'openid',
      state: randomUUID(),
      ...params,
    });
    return `${world.issuer}/oauth/v2/authorize?${query}`;
  }

  /** Opens the login name page of a new authorization; returns its interaction uid and CSRF token. */
  async function loginPage(page: Page, params: Record<string, string> = {}): Promise<{ uid: string; csrf: string; base: string; response: Response | null }> {
    const response = await page.goto(authorizeUrl(params));
    await page.waitForSelector('#loginName');
    const uid = new URL(page.url()).pathname.split('/').pop()!;
    return { uid, csrf: await page.inputValue('input[name=csrf]'), base: `${world.issuer}/ui/login/${uid}`, response };
  }

  /** Submits the current form and returns the response to its POST. */
  async function submit(page: Page, pathEnd: string): Promise<Response> {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith(pathEnd)),
      page.click('button[type=submit]'),
    ]);
    await page.waitForLoadState();
    return response;
  }

  /** Whether the browser holds a signed-in user: prompt=none answers a code, or login_required. */
  async function signedIn(context: BrowserContext): Promise<string> {
    const page = await context.newPage();
    try {
      await page.goto(authorizeUrl({ prompt: 'none' }));
      const url = await landedOn(page, rp.callback);
      return url.searchParams.get('error') ?? 'signed in';
    } finally {
      await page.close();
    }
  }

  const WRONG_CREDENTIALS = 'The login name or password is wrong.';
  const EXPIRED = 'This sign-in has expired or was already finished.';

  function form(fields: Array<[string, string]>): string {
    return fields.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  }

  async function postRaw(context: BrowserContext, url: string, body: string | Buffer, contentType = 'application/x-www-form-urlencoded'): Promise<APIResponse> {
    return context.request.post(url, { headers: { 'content-type': contentType }, data: body, maxRedirects: 0, failOnStatusCode: false });
  }

  /** A file screenshot() wrote, non-empty. */
  function assertScreenshot(name: string): void {
    const file = join(ARTIFACTS, `${name}.png`);
    assert.ok(existsSync(file) && statSync(file).size > 1000, `screenshot ${file}`);
  }

  // ---------------------------------------------------------------- tests

  describe('wrong credentials', { concurrency: false }, () => {
    after(closeContexts);

    test('a wrong password shows the password page again with an error (HTTP 200, no redirect); the password is nowhere in the HTML', async () => {
      const { page, context } = await freshPage();
      await loginPage(page);
      await page.fill('#loginName', alice.loginName);
      await submit(page, '/login-name');
      const secret = `Wrong-${randomUUID()}`;
      await page.fill('#password', secret);
      const response = await submit(page, '/password');
      assert.equal(response.status(), 200);
      assert.equal(response.request().redirectedFrom(), null);
      assert.ok(page.url().endsWith('/password'), page.url());
      assert.equal((await page.locator('.error').innerText()).trim(), WRONG_CREDENTIALS);
      assert.equal(await page.getAttribute('.error', 'role'), 'alert', 'the error is announced');
      assert.equal(await page.inputValue('#password'), '');
      assert.ok(!(await response.text()).includes(secret), 'the password is not in the HTML');
      assert.ok(!(await page.content()).includes(secret));
      assert.equal(await signedIn(context), 'login_required');

      // The same interaction still signs in with the right password.
      await page.fill('#password', alice.password);
      await page.click('button[type=submit]');
      assert.ok((await landedOn(page, rp.callback)).searchParams.get('code'));
    });

    test('an unknown login name gets the password page and then the very same error text (no user enumeration)', async () => {
      const { page } = await freshPage();
      const pages: Record<string, { step1: string; error: string }> = {};
      for (const name of [alice.loginName, `nobody-${randomUUID().slice(0, 6)}@acme.example.test`]) {
        await loginPage(page);
        await page.fill('#loginName', name);
        const step1 = await submit(page, '/login-name');
        assert.equal(step1.status(), 200);
        assert.equal(await page.locator('#password').count(), 1, `${name}: the password page`);
        const html = (await page.content())
          .replace(/value="[^"]*"/g, '')
          .replaceAll(name, 'NAME')
          .replace(/\/ui\/login\/[\w-]+/g, '/ui/login/UID');
        await page.fill('#password', 'Not-The-Password-1');
        const step2 = await submit(page, '/password');
        assert.equal(step2.status(), 200);
        pages[name] = { step1: html.replace(/>[A-Z]</, '><'), error: (await page.locator('.error').innerText()).trim() };
      }
      const [known, unknown] = Object.values(pages);
      assert.equal(unknown!.error, WRONG_CREDENTIALS);
      assert.equal(unknown!.error, known!.error);
      assert.equal(unknown!.step1, known!.step1, 'the password page does not differ between known and unknown login names');
    });
  });

  describe('CSRF and cross-site posts', { concurrency: false }, () => {
    after(closeContexts);

    test('a POST to /ui/login/{uid}/password without a csrf field answers 403 and signs no one in', async () => {
      const { page, context } = await freshPage();
      const { base } = await loginPage(page);
      const response = await postRaw(
        context,
        `${base}/password`,
        form([
          ['loginName', mallory.loginName],
          ['password', mallory.password],
        ]),
      );
      assert.equal(response.status(), 403);
      assert.match(response.headers()['content-type'] ?? '', /text\/html/);
      assert.match(await response.text(), /The form has expired/);
      assert.equal(await signedIn(context), 'login_required');
    });

    test('a POST with a wrong csrf (a valid token of another interaction, or a made-up one) answers 403 and signs no one in', async () => {
      const { page, context } = await freshPage();
      const { base, csrf } = await loginPage(page);
      const { page: attackerPage } = await freshPage();
      const attacker = await loginPage(attackerPage);
      assert.notEqual(attacker.csrf, csrf);
      for (const token of [attacker.csrf, `${csrf}x`, csrf.slice(0, -1), '']) {
        const response = await postRaw(
          context,
          `${base}/password`,
          form([
            ['csrf', token],
            ['loginName', mallory.loginName],
            ['password', mallory.password],
          ]),
        );
        assert.equal(response.status(), 403, `csrf ${JSON.stringify(token)}`);
      }
      assert.equal(await signedIn(context), 'login_required');
      // The right token does sign in, so the 403s above were about the token.
      const ok = await postRaw(
        context,
        `${base}/password`,
        form([
          ['csrf', csrf],
          ['loginName', alice.loginName],
          ['password', alice.password],
        ]),
      );
      assert.equal(ok.status(), 303);
    });

    test('a page on the RP origin auto-submitting a login form to the login endpoint signs no one in', async () => {
      const { page, context } = await freshPage();
      const victim = await loginPage(page);
      const { page: attackerPage } = await freshPage();
      const attacker = await loginPage(attackerPage);
      rp.serve(
        '/attack',
        `<!doctype html><form method="post" action="${victim.base}/password">
      <input name="csrf" value="${attacker.csrf}"><input name="loginName" value="${mallory.loginName}"><input name="password" value="${mallory.password}">
      </form><script>document.forms[0].submit()</script>`,
      );
      const tab = await context.newPage();
      const [response] = await Promise.all([
        tab.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${victim.base}/password`),
        tab.goto(`${rp.origin}/attack`),
      ]);
      assert.equal(response.status(), 403);
      await tab.close();
      assert.equal(await signedIn(context), 'login_required');
    });

    test("a cross-site page (127.0.0.1) posting the victim's own, leaked csrf token signs no one in: SameSite=Lax keeps the interaction cookie home", async () => {
      const { page, context } = await freshPage();
      const victim = await loginPage(page);
      rp.serve(
        '/attack-leaked',
        `<!doctype html><form method="post" action="${victim.base}/password">
      <input name="csrf" value="${victim.csrf}"><input name="loginName" value="${mallory.loginName}"><input name="password" value="${mallory.password}">
      </form><script>document.forms[0].submit()</script>`,
      );
      const tab = await context.newPage();
      const crossSite = `${rp.origin.replace('localhost', '127.0.0.1')}/attack-leaked`;
      const [response] = await Promise.all([
        tab.waitForResponse((r) => r.request().method() === 'POST' && r.url() === `${victim.base}/password`),
        tab.goto(crossSite),
      ]);
      assert.equal(response.status(), 400, 'without its cookie the interaction is unknown');
      assert.match(await response.text(), new RegExp(EXPIRED));
      await tab.close();
      assert.equal(await signedIn(context), 'login_required');
      // The victim's own sign-in is unharmed.
      await page.fill('#loginName', alice.loginName);
      await page.click('button[type=submit]');
      await page.fill('#password', alice.password);
      await page.click('button[type=submit]');
      assert.ok((await landedOn(page, rp.callback)).searchParams.get('code'));
    });
  });

  describe('dead interactions and garbage requests', { concurrency: false }, () => {
    after(closeContexts);

    test('an unknown interaction uid answers a 400 page saying the sign-in expired (GET and every POST route)', async () => {
      const { page, context } = await freshPage();
      const response = await page.goto(`${world.issuer}/ui/login/${randomUUID()}`);
      assert.equal(response?.status(), 400);
      assert.ok((await page.locator('main').innerText()).includes(EXPIRED));
      for (const route of ['login-name', 'password', 'select', 'register']) {
        const post = await postRaw(
          context,
          `${world.issuer}/ui/login/${randomUUID()}/${route}`,
          form([
            ['csrf', 'x'],
            ['loginName', 'a'],
          ]),
        );
        assert.equal(post.status(), 400, route);
        assert.match(await post.text(), new RegExp(EXPIRED));
      }
      const register = await context.request.get(`${world.issuer}/ui/login/${randomUUID()}/register`, { maxRedirects: 0 });
      assert.equal(register.status(), 400);
    });

    test('a finished interaction, visited again (back button), answers the 400 expired page, never a 500', async () => {
      const { page, context } = await freshPage();
      const { base, csrf } = await loginPage(page);
      await signIn(page, alice);
      await landedOn(page, rp.callback);
      const again = await page.goto(base);
      assert.equal(again?.status(), 400);
      assert.ok((await page.locator('main').innerText()).includes(EXPIRED));
      const post = await postRaw(
        context,
        `${base}/password`,
        form([
          ['csrf', csrf],
          ['loginName', alice.loginName],
          ['password', alice.password],
        ]),
      );
      assert.equal(post.status(), 400);
    });

    test('garbage bodies to the POST routes (200 KB form, JSON, text, binary, repeated csrf) answer a 4xx page, never 500, and sign no one in', async () => {
      const { page, context } = await freshPage();
      const { base, csrf } = await loginPage(page);
      const bodies: Array<[string, string | Buffer, string]> = [
        [
          '200 KB form',
          form([
            ['csrf', csrf],
            ['loginName', alice.loginName],
            ['password', alice.password],
            ['pad', 'a'.repeat(200_000)],
          ]),
          'application/x-www-form-urlencoded',
        ],
        ['JSON', JSON.stringify({ csrf, loginName: alice.loginName, password: alice.password }), 'application/json'],
        ['text', `csrf=${csrf}&loginName=${alice.loginName}&password=${alice.password}`, 'text/plain'],
        ['binary', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256)), 'application/octet-stream'],
        ['multipart', `--b\r\ncontent-disposition: form-data; name="csrf"\r\n\r\n${csrf}\r\n--b--\r\n`, 'multipart/form-data; boundary=b'],
        [
          'repeated csrf',
          form([
            ['csrf', csrf],
            ['csrf', csrf],
            ['loginName', alice.loginName],
            ['password', alice.password],
          ]),
          'application/x-www-form-urlencoded',
        ],
        ['malformed form', `csrf=${csrf}%&&=&%ZZ=%E0%A4%A`, 'application/x-www-form-urlencoded; charset=utf-8'],
      ];
      const statuses: string[] = [];
      for (const route of ['login-name', 'password', 'select', 'register']) {
        for (const [label, body, type] of bodies) {
          const response = await postRaw(context, `${base}/${route}`, body, type);
          statuses.push(`${route} ${label}: ${response.status()}`);
          assert.ok(response.status() >= 400 && response.status() < 500, `${route} with ${label} answered ${response.status()}`);
          assert.match(response.headers()['content-type'] ?? '', /text\/html/, `${route} with ${label}: a page`);
        }
      }
      assert.equal(await signedIn(context), 'login_required', statuses.join('\n'));
    });

    test('repeated or nested form fields, or an unknown charset, with a valid csrf: a page (the form again or a 4xx), never a 500', async () => {
      const { page, context } = await freshPage();
      const { base, csrf } = await loginPage(page);
      const repeated = form([
        ['csrf', csrf],
        ['loginName', alice.loginName],
        ['loginName', bob.loginName],
        ['password', alice.password],
        ['password', alice.password],
        ['accountId', alice.userId],
        ['accountId', bob.userId],
        ['givenName', 'a'],
        ['givenName', 'b'],
        ['email', 'a@example.org'],
        ['email', 'b@example.org'],
      ]);
      const nested = `csrf=${csrf}&loginName[a]=1&password[]=2&accountId[x][y]=3&__proto__[polluted]=1&constructor[prototype][polluted]=1`;
      const cases: Array<[string, string, string]> = [
        ['repeated', repeated, 'application/x-www-form-urlencoded'],
        ['nested', nested, 'application/x-www-form-urlencoded'],
        [
          'unknown-charset',
          form([
            ['csrf', csrf],
            ['loginName', alice.loginName],
            ['password', 'not-her-password'],
          ]),
          'application/x-www-form-urlencoded; charset=no-such-charset',
        ],
      ];
      for (const route of ['login-name', 'password', 'select', 'register']) {
        for (const [label, body, type] of cases) {
          const response = await postRaw(context, `${base}/${route}`, body, type);
          assert.ok(
            response.status() < 300 || (response.status() >= 400 && response.status() < 500),
            `${route} with ${label} fields answered ${response.status()}`,
          );
          assert.match(response.headers()['content-type'] ?? '', /text\/html/);
        }
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
      assert.equal(await signedIn(context), 'login_required');
    });
  });

  describe('cookies', { concurrency: false }, () => {
    after(closeContexts);

    test('_session, _interaction and _accounts are HttpOnly and SameSite=Lax, and not Secure with this http issuer (Secure applies to https issuers; asserting that needs TLS)', async () => {
      const { page, context } = await freshPage();
      const written: string[] = [];
      page.on('response', async (response) => {
        if (!response.url().startsWith(world.issuer)) return;
        for (const header of await response.headersArray()) if (header.name.toLowerCase() === 'set-cookie') written.push(header.value);
      });
      const seen = new Map<string, Awaited<ReturnType<BrowserContext['cookies']>>[number]>();
      const collect = async () => {
        for (const cookie of await context.cookies(`${world.issuer}/ui/login/x`)) seen.set(`${cookie.name} ${cookie.path}`, cookie);
        for (const cookie of await context.cookies(world.issuer)) seen.set(`${cookie.name} ${cookie.path}`, cookie);
      };

      // Alice signs in; Bob is added (prompt=login); the picker switches back to Alice.
      const { uid } = await loginPage(page);
      for (const cookie of await context.cookies(`${world.issuer}/ui/login/${uid}`)) seen.set(`${cookie.name} ${cookie.path}`, cookie);
      await signIn(page, alice);
      await landedOn(page, rp.callback);
      await collect();
      await page.goto(authorizeUrl({ prompt: 'login' }));
      await signIn(page, bob);
      await landedOn(page, rp.callback);
      await page.goto(authorizeUrl());
      await page.locator('ul.accounts li button', { hasText: alice.loginName }).click();
      await landedOn(page, rp.callback);
      await collect();

      const names = new Set([...seen.values()].map((c) => c.name));
      for (const name of ['_session', '_interaction', '_accounts']) assert.ok(names.has(name), `the browser holds ${name} (has ${[...names].join(', ')})`);
      for (const cookie of seen.values()) {
        assert.equal(cookie.httpOnly, true, `${cookie.name} is HttpOnly`);
        assert.equal(cookie.sameSite, 'Lax', `${cookie.name} is SameSite=Lax`);
        assert.equal(cookie.secure, false, `${cookie.name} is not Secure on http`);
      }
      // Every write on the way, not just the last one, carries the attributes.
      assert.ok(written.length >= 6, `Set-Cookie headers seen: ${written.length}`);
      for (const header of written) {
        const attributes = header
          .split(';')
          .slice(1)
          .map((a) => a.trim().toLowerCase());
        assert.ok(attributes.includes('httponly'), `HttpOnly in ${header}`);
        assert.ok(attributes.includes('samesite=lax'), `SameSite=Lax in ${header}`);
        assert.ok(!attributes.includes('secure'), `not Secure in ${header}`);
      }
    });
  });

  describe('page headers', { concurrency: false }, () => {
    after(closeContexts);

    function assertPageHeaders(label: string, headers: Record<string, string>): void {
      assert.match(headers['content-security-policy'] ?? '', /frame-ancestors 'none'/, `${label}: CSP frame-ancestors 'none'`);
      assert.equal(headers['x-frame-options'], 'DENY', `${label}: X-Frame-Options`);
      assert.match(headers['cache-control'] ?? '', /no-store/, `${label}: Cache-Control no-store`);
    }

    test("every login page kind carries CSP frame-ancestors 'none', X-Frame-Options: DENY and Cache-Control: no-store", async () => {
      const { page, context } = await freshPage();
      const kinds = new Map<string, Record<string, string>>();
      const record = async (label: string, response: Response | APIResponse | null) => {
        assert.ok(response, label);
        kinds.set(label, 'allHeaders' in response ? await response.allHeaders() : response.headers());
      };
      const first = await loginPage(page);
      await record('login name', first.response);
      await page.fill('#loginName', alice.loginName);
      await record('password', await submit(page, '/login-name'));
      await page.fill('#password', 'nope-nope-nope');
      await record('password with error', await submit(page, '/password'));
      await page.fill('#password', alice.password);
      await page.click('button[type=submit]');
      await landedOn(page, rp.callback);
      await record('account picker', await page.goto(authorizeUrl({ prompt: 'select_account' })));
      await page.waitForSelector('ul.accounts');
      await record('registration', await page.goto(authorizeUrl({ prompt: 'create' })));
      await record('registration with errors', await submit(page, '/register'));
      await record('expired', await page.goto(`${world.issuer}/ui/login/${randomUUID()}`));
      const fresh = await loginPage(page, { prompt: 'login' });
      await record('csrf refused', await postRaw(context, `${fresh.base}/login-name`, form([['loginName', 'x']])));
      assert.equal(kinds.size, 8, [...kinds.keys()].join(', '));
      for (const [label, headers] of kinds) assertPageHeaders(label, headers);
    });

    test("the engine's own error page (an unregistered redirect_uri) carries the same headers", async () => {
      const { page } = await freshPage();
      const response = await page.goto(authorizeUrl({ redirect_uri: `${rp.origin}/not-registered` }));
      assert.equal(response?.status(), 400);
      assert.ok(page.url().startsWith(world.issuer), 'no redirect to an unregistered redirect_uri');
      await screenshot(page, 'ui-engine-error');
      assertPageHeaders('engine error page', await response!.allHeaders());
    });
  });

  describe('accessibility basics', { concurrency: false }, () => {
    after(closeContexts);

    /** Every visible input has a <label for>; the first one has autofocus. */
    async function assertLabelled(page: Page, label: string, expectFields = true): Promise<void> {
      const report: Array<{ id: string; name: string; labelled: boolean; labelText: string; autofocus: boolean }> = [];
      for (const field of await page.locator('input:not([type=hidden]):not([hidden]), select, textarea').all()) {
        const id = (await field.getAttribute('id')) ?? '';
        const labels = id ? page.locator(`label[for="${id}"]`) : undefined;
        report.push({
          id,
          name: (await field.getAttribute('name')) ?? '?',
          labelled: labels !== undefined && (await labels.count()) === 1,
          labelText: labels && (await labels.count()) ? (await labels.first().innerText()).trim() : '',
          autofocus: (await field.getAttribute('autofocus')) !== null,
        });
      }
      if (expectFields) assert.ok(report.length > 0, `${label}: has fields`);
      for (const field of report) {
        assert.ok(field.labelled, `${label}: ${field.name} has a <label for>`);
        assert.ok(field.labelText.length > 0, `${label}: ${field.name}'s label has text`);
      }
      if (report.length) {
        assert.equal(report[0]!.autofocus, true, `${label}: the first field (${report[0]!.name}) has autofocus`);
        assert.equal(report.filter((f) => f.autofocus).length, 1, `${label}: exactly one autofocus`);
      }
    }

    test('every field on the login name, password and registration pages has a <label for>, and the first field has autofocus', async () => {
      const { page } = await freshPage();
      await loginPage(page);
      await assertLabelled(page, 'login name');
      await page.fill('#loginName', alice.loginName);
      await submit(page, '/login-name');
      await assertLabelled(page, 'password');
      await page.fill('#password', 'wrong-wrong-wrong');
      await submit(page, '/password');
      await assertLabelled(page, 'password with error');
      await page.goto(authorizeUrl({ prompt: 'create' }));
      await page.waitForSelector('#givenName');
      await assertLabelled(page, 'registration');
      await submit(page, '/register');
      await assertLabelled(page, 'registration with errors');
      assert.ok((await page.locator('[aria-invalid=true]').count()) >= 1);
    });

    test('the account picker offers each account as a button with its name and login name', async () => {
      const { page } = await freshPage();
      await loginPage(page);
      await signIn(page, alice);
      await landedOn(page, rp.callback);
      await page.goto(authorizeUrl({ prompt: 'select_account' }));
      await page.waitForSelector('ul.accounts');
      await assertLabelled(page, 'account picker', false);
      const button = page.getByRole('button', { name: new RegExp(alice.loginName.replace(/[.]/g, '\\.')) });
      assert.equal(await button.count(), 1);
      assert.equal(await page.getByRole('link', { name: 'Use another account' }).count(), 1);
    });

    test('with JavaScript disabled a full sign-in still reaches the RP', async () => {
      const { page } = await freshPage({ javaScriptEnabled: false });
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ state }));
      await page.waitForSelector('#loginName');
      await signIn(page, alice);
      const url = await landedOn(page, rp.callback);
      assert.ok(url.searchParams.get('code'));
      assert.equal(url.searchParams.get('state'), state);
    });

    test('with JavaScript disabled, registration (prompt=create) still reaches the RP', async () => {
      const { page } = await freshPage({ javaScriptEnabled: false });
      await page.goto(authorizeUrl({ prompt: 'create' }));
      const password = 'NoScript-Passw0rd';
      for (const [field, value] of Object.entries({
        givenName: 'Nico',
        familyName: 'Noscript',
        email: `noscript-${randomUUID().slice(0, 6)}@example.org`,
        password,
        passwordRepeat: password,
      }))
        await page.fill(`#${field}`, value);
      await page.click('button[type=submit]');
      assert.ok((await landedOn(page, rp.callback)).searchParams.get('code'));
    });
  });

  describe('screenshots', { concurrency: false }, () => {
    after(closeContexts);

    test('of every page kind: login name (desktop, mobile 375×667, German), password with error, picker with two accounts, registration with errors, expired', async () => {
      const { page } = await freshPage();
      await loginPage(page);
      await screenshot(page, 'ui-login-name');
      await page.fill('#loginName', alice.loginName);
      await submit(page, '/login-name');
      await page.fill('#password', 'not-the-password');
      await submit(page, '/password');
      await page.waitForSelector('.error');
      await screenshot(page, 'ui-password-error');
      await page.fill('#password', alice.password);
      await page.click('button[type=submit]');
      await landedOn(page, rp.callback);
      await page.goto(authorizeUrl({ prompt: 'login' }));
      await signIn(page, bob);
      await landedOn(page, rp.callback);
      await page.goto(authorizeUrl());
      await page.waitForSelector('ul.accounts');
      assert.equal(await page.locator('ul.accounts li').count(), 2);
      await screenshot(page, 'ui-account-picker');

      await page.goto(authorizeUrl({ prompt: 'create' }));
      await page.fill('#givenName', 'Rita');
      await page.fill('#email', 'not-an-email');
      await page.fill('#password', 'short');
      await page.fill('#passwordRepeat', 'other');
      await submit(page, '/register');
      assert.ok((await page.locator('.field-error').count()) >= 3);
      await screenshot(page, 'ui-registration-errors');

      await page.goto(`${world.issuer}/ui/login/${randomUUID()}`);
      assert.ok((await page.locator('main').innerText()).includes(EXPIRED));
      await screenshot(page, 'ui-expired');

      const { page: german } = await freshPage({ locale: 'de-DE' });
      await loginPage(german, { ui_locales: 'de' });
      assert.equal(await german.getAttribute('html', 'lang'), 'de');
      await screenshot(german, 'ui-login-name-de');

      const { page: mobile } = await freshPage({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
      await loginPage(mobile);
      const overflow = (await mobile.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      assert.ok(overflow <= 0, `no horizontal scrolling on a phone (overflow ${overflow}px)`);
      await screenshot(mobile, 'ui-login-name-mobile');

      for (const name of [
        'ui-login-name',
        'ui-password-error',
        'ui-account-picker',
        'ui-registration-errors',
        'ui-login-name-de',
        'ui-expired',
        'ui-login-name-mobile',
      ])
        assertScreenshot(name);
    });
  });
});
