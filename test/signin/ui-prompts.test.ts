import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { signIn, startLoginUi, type LoginUi, type RelyingParty, type SignInWorld, type TestUser, needsChromium } from '../support/browser.ts';

// The whole file drives Chromium: skipped, with its reason, where it is not installed.
describe('in Chromium', { skip: needsChromium }, () => {
  // docs/oidc.md (Browser sign-in) and OIDC Core 3.1.2.1 in a real browser:
  // what each prompt value, login_hint, max_age, id_token_hint and ui_locales
  // make the login UI do, and what the relying party gets back.

  let ui: LoginUi<'alice' | 'bob'>;
  let world: SignInWorld;
  let rp: RelyingParty;
  let app: { clientId: string; clientSecret?: string };
  let alice: TestUser;
  let bob: TestUser;

  before(async () => {
    ui = await startLoginUi({ alice: { firstName: 'Alice', lastName: 'Anderson' }, bob: { firstName: 'Bob', lastName: 'Baker' } });
    ({ world, rp, app } = ui);
    ({ alice, bob } = ui.users);
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
      scope: 'openid profile email',
      state: params.state ?? randomUUID(),
      ...params,
    });
    return `${world.issuer}/oauth/v2/authorize?${query}`;
  }

  /**
   * Records the pages the issuer actually shows in `page` (navigation
   * responses that are not redirects), so a test can say "no page at all".
   */
  function shownPages(page: Page): string[] {
    const shown: string[] = [];
    page.on('response', (response) => {
      const request = response.request();
      if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
      if (response.status() >= 300 && response.status() < 400) return;
      if (response.url().startsWith(world.issuer)) shown.push(`${response.status()} ${response.url()}`);
    });
    return shown;
  }

  /**
   * Waits for the RP callback and returns its query parameters; when the
   * browser stays on an issuer page instead, fails saying which one.
   */
  async function callback(page: Page): Promise<URLSearchParams> {
    try {
      await page.waitForURL((url) => url.href.startsWith(rp.callback), { timeout: 8_000 });
    } catch {
      const title = await page.title().catch(() => '?');
      assert.fail(`expected the RP callback, but the browser stays at ${page.url()} ("${title}")`);
    }
    return new URL(page.url()).searchParams;
  }

  interface Tokens {
    access_token: string;
    id_token: string;
    claims: Record<string, unknown> & { sub: string; auth_time?: number };
  }

  async function redeem(code: string | null): Promise<Tokens> {
    assert.ok(code, 'the callback carries a code');
    const basic = Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret ?? '')}`).toString('base64');
    const response = await fetch(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: rp.callback }),
    });
    const body = (await response.json()) as Tokens;
    assert.equal(response.status, 200, `token endpoint: ${JSON.stringify(body)}`);
    return { ...body, claims: decodeJwt(body.id_token) as Tokens['claims'] };
  }

  async function userinfoStatus(accessToken: string): Promise<number> {
    const response = await fetch(`${world.server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    await response.arrayBuffer();
    return response.status;
  }

  /** A full sign-in from the login name page, ending at the RP; returns the redeemed tokens. */
  async function signInThrough(page: Page, user: TestUser, params: Record<string, string> = {}): Promise<Tokens> {
    await page.goto(authorizeUrl(params));
    await page.waitForSelector('#loginName');
    await signIn(page, user);
    return redeem((await callback(page)).get('code'));
  }

  /**
   * Adds another user to the browser: prompt=login, then that user's login name
   * and password instead of the prefilled current one. (The select_account way,
   * "Use another account", has a test of its own below.)
   */
  async function addAccount(page: Page, user: TestUser): Promise<Tokens> {
    await page.goto(authorizeUrl({ prompt: 'login' }));
    await page.waitForSelector('#loginName');
    await signIn(page, user);
    return redeem((await callback(page)).get('code'));
  }

  /** The accounts the picker lists, as its visible text per entry. */
  async function pickerEntries(page: Page): Promise<string[]> {
    await page.waitForSelector('ul.accounts');
    return page.locator('ul.accounts li').allInnerTexts();
  }

  async function pick(page: Page, user: TestUser): Promise<void> {
    await page.locator('ul.accounts li button', { hasText: user.loginName }).click();
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  // ---------------------------------------------------------------- tests

  describe('prompt omitted', { concurrency: false }, () => {
    after(closeContexts);

    test('with no session the login name page is shown, and after sign-in the RP gets a code and the same state', async () => {
      const { page } = await freshPage();
      const state = `s-${randomUUID()}`;
      const response = await page.goto(authorizeUrl({ state }));
      assert.equal(response?.status(), 200);
      assert.ok(page.url().startsWith(`${world.issuer}/ui/login/`), page.url());
      assert.equal(await page.inputValue('#loginName'), '');
      await signIn(page, alice);
      const params = await callback(page);
      assert.equal(params.get('state'), state);
      assert.equal(params.get('error'), null);
      const tokens = await redeem(params.get('code'));
      assert.equal(tokens.claims.sub, alice.userId);
    });

    test('with one session the browser goes straight back to the RP with a code, showing no page', async () => {
      const { page } = await freshPage();
      await signInThrough(page, alice);
      const shown = shownPages(page);
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ state }));
      const params = await callback(page);
      assert.deepEqual(shown, [], 'no issuer page was shown');
      assert.equal(params.get('state'), state);
      assert.equal((await redeem(params.get('code'))).claims.sub, alice.userId);
    });
  });

  describe('two users in one browser', { concurrency: false }, () => {
    after(closeContexts);

    test('without prompt the picker lists both; picking either returns that user, and neither is signed out by the switch', async () => {
      const { page } = await freshPage();
      const aliceFirst = await signInThrough(page, alice);
      assert.equal(aliceFirst.claims.sub, alice.userId);
      const bobFirst = await addAccount(page, bob);
      assert.equal(bobFirst.claims.sub, bob.userId, 'the second sign-in is Bob');

      // No prompt: more than one session, so the picker, naming both.
      await page.goto(authorizeUrl());
      let entries = await pickerEntries(page);
      assert.equal(entries.length, 2, `picker entries: ${JSON.stringify(entries)}`);
      const text = entries.join('\n');
      for (const expected of ['Alice Anderson', alice.loginName, 'Bob Baker', bob.loginName])
        assert.ok(text.includes(expected), `the picker shows ${expected}: ${text}`);

      await pick(page, alice);
      const asAlice = await redeem((await callback(page)).get('code'));
      assert.equal(asAlice.claims.sub, alice.userId, 'picking Alice returns Alice');

      await page.goto(authorizeUrl());
      entries = await pickerEntries(page);
      assert.equal(entries.length, 2, 'after picking Alice, Bob is still listed');
      await pick(page, bob);
      const asBob = await redeem((await callback(page)).get('code'));
      assert.equal(asBob.claims.sub, bob.userId, 'picking Bob returns Bob');

      // Switching users logged nobody out: every access token still works.
      for (const [label, tokens] of [
        ['Alice (first sign-in)', aliceFirst],
        ['Bob (first sign-in)', bobFirst],
        ['Alice (picked)', asAlice],
        ['Bob (picked)', asBob],
      ] as const) {
        assert.equal(await userinfoStatus(tokens.access_token), 200, `userinfo with the access token of ${label}`);
      }

      // And the picker still offers both.
      await page.goto(authorizeUrl());
      assert.equal((await pickerEntries(page)).length, 2);
    });

    test("id_token_hint selects that user's session: with Alice current, prompt=none and Bob's ID token returns a code for Bob", async () => {
      const { page } = await freshPage();
      const bobTokens = await signInThrough(page, bob);
      const aliceTokens = await addAccount(page, alice);
      assert.equal(aliceTokens.claims.sub, alice.userId);

      // Control: without a hint, prompt=none names no account of the two (OIDC Core 3.1.2.6).
      await page.goto(authorizeUrl({ prompt: 'none' }));
      const current = await callback(page);
      assert.equal(current.get('error'), 'account_selection_required', `prompt=none without a hint: ${current}`);
      assert.equal(current.get('code'), null);

      const shown = shownPages(page);
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'none', id_token_hint: bobTokens.id_token, state }));
      const params = await callback(page);
      assert.deepEqual(shown, [], 'no page with prompt=none');
      assert.equal(params.get('error'), null, `prompt=none with Bob's hint: ${params}`);
      assert.equal(params.get('state'), state);
      assert.equal((await redeem(params.get('code'))).claims.sub, bob.userId, 'the hinted user, Bob');
      assert.equal(await userinfoStatus(aliceTokens.access_token), 200, 'Alice is still signed in');
    });
  });

  describe('two users, prompt=none and id_token_hint', { concurrency: false }, () => {
    after(closeContexts);

    test("sign in A, sign in B with prompt=login, prompt=none with B's id_token_hint gives B a code, then prompt=none without a hint is account_selection_required", async () => {
      const { page } = await freshPage();
      assert.equal((await signInThrough(page, alice)).claims.sub, alice.userId);
      const bobTokens = await addAccount(page, bob);
      assert.equal(bobTokens.claims.sub, bob.userId);

      await page.goto(authorizeUrl({ prompt: 'none', id_token_hint: bobTokens.id_token }));
      const hinted = await callback(page);
      assert.equal(hinted.get('error'), null, `prompt=none with B's hint: ${hinted}`);
      assert.equal((await redeem(hinted.get('code'))).claims.sub, bob.userId);

      const shown = shownPages(page);
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'none', state }));
      const unhinted = await callback(page);
      assert.deepEqual(shown, [], 'no page with prompt=none');
      assert.equal(unhinted.get('error'), 'account_selection_required', `prompt=none without a hint: ${unhinted}`);
      assert.equal(unhinted.get('state'), state);
      assert.equal(unhinted.get('code'), null);

      // Without prompt, the picker, whatever hinted request came before.
      await page.goto(authorizeUrl());
      assert.equal((await pickerEntries(page)).length, 2);
    });

    test("an id_token_hint whose signature does not verify is invalid_request at the redirect_uri, and the browser's user stays as it was", async () => {
      const { page } = await freshPage();
      const aliceTokens = await signInThrough(page, alice);
      await addAccount(page, bob);
      // Alice's ID token with one character of its signature changed (not the last, whose low bits are unused).
      const [header, payload, signature] = aliceTokens.id_token.split('.') as [string, string, string];
      const at = signature.length - 10;
      const forged = `${header}.${payload}.${signature.slice(0, at)}${signature[at] === 'A' ? 'B' : 'A'}${signature.slice(at + 1)}`;
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'none', id_token_hint: forged, state }));
      const params = await callback(page);
      assert.equal(params.get('error'), 'invalid_request', params.toString());
      assert.equal(params.get('state'), state);
      assert.equal(params.get('code'), null);

      // prompt=login prefills the browser's current user: still Bob, not the forged hint's Alice.
      await page.goto(authorizeUrl({ prompt: 'login' }));
      await page.waitForSelector('#loginName');
      assert.equal(await page.inputValue('#loginName'), bob.loginName);
      // The real hint still switches.
      await page.goto(authorizeUrl({ prompt: 'none', id_token_hint: aliceTokens.id_token }));
      assert.equal((await redeem((await callback(page)).get('code'))).claims.sub, alice.userId);
    });
  });

  describe('prompt=select_account', { concurrency: false }, () => {
    after(closeContexts);

    test('with one session the picker lists it with "Use another account", which leads to the login name page', async () => {
      const { page } = await freshPage();
      await signInThrough(page, alice);
      await page.goto(authorizeUrl({ prompt: 'select_account' }));
      const entries = await pickerEntries(page);
      assert.equal(entries.length, 1);
      assert.ok(entries[0]!.includes(alice.loginName), entries[0]);
      const other = page.getByRole('link', { name: 'Use another account' });
      assert.equal(await other.count(), 1);
      await other.click();
      await page.waitForSelector('#loginName');
      assert.equal(await page.inputValue('#loginName'), '', 'the other-account login page is not prefilled with the current user');
      await signIn(page, bob);
      assert.equal((await redeem((await callback(page)).get('code'))).claims.sub, bob.userId);
    });

    test('with no session the login name page is shown, and signing in returns to the RP', async () => {
      const { page } = await freshPage();
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'select_account', state }));
      await page.waitForSelector('#loginName');
      await signIn(page, alice);
      const params = await callback(page);
      assert.equal(params.get('state'), state);
      assert.equal((await redeem(params.get('code'))).claims.sub, alice.userId);
    });

    test('choosing the listed account returns a code for it without asking for the password', async () => {
      const { page } = await freshPage();
      await signInThrough(page, alice);
      await page.goto(authorizeUrl({ prompt: 'select_account' }));
      await pickerEntries(page);
      await pick(page, alice);
      assert.equal((await redeem((await callback(page)).get('code'))).claims.sub, alice.userId);
    });
  });

  describe('prompt=login', { concurrency: false }, () => {
    after(closeContexts);

    test('with a session the login name page comes again, prefilled, and the new ID token has a newer auth_time', async () => {
      const { page } = await freshPage();
      // max_age makes the first ID token carry auth_time (OIDC Core 3.1.2.1).
      const first = await signInThrough(page, alice, { max_age: '86400' });
      assert.equal(typeof first.claims.auth_time, 'number', `auth_time in ${JSON.stringify(first.claims)}`);
      await sleep(1100); // auth_time counts whole seconds

      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'login', state }));
      await page.waitForSelector('#loginName');
      assert.equal(await page.inputValue('#loginName'), alice.loginName, 'prefilled with the current login name');
      await page.click('button[type=submit]');
      await page.fill('#password', alice.password);
      await page.click('button[type=submit]');
      const params = await callback(page);
      assert.equal(params.get('state'), state);
      const again = await redeem(params.get('code'));
      assert.equal(again.claims.sub, alice.userId);
      assert.ok((again.claims.auth_time ?? 0) > first.claims.auth_time!, `auth_time ${again.claims.auth_time} is newer than ${first.claims.auth_time}`);
    });
  });

  describe('prompt=none', { concurrency: false }, () => {
    after(closeContexts);

    test('without a session the RP gets error=login_required and its state', async () => {
      const { page } = await freshPage();
      const shown = shownPages(page);
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'none', state }));
      const params = await callback(page);
      assert.deepEqual(shown, []);
      assert.equal(params.get('error'), 'login_required');
      assert.equal(params.get('state'), state);
      assert.equal(params.get('code'), null);
    });

    test('with one session the RP gets a code and no page is shown', async () => {
      const { page } = await freshPage();
      await signInThrough(page, alice);
      const shown = shownPages(page);
      const state = `s-${randomUUID()}`;
      await page.goto(authorizeUrl({ prompt: 'none', state }));
      const params = await callback(page);
      assert.deepEqual(shown, []);
      assert.equal(params.get('state'), state);
      assert.equal((await redeem(params.get('code'))).claims.sub, alice.userId);
    });
  });

  describe('prompt=create', { concurrency: false }, () => {
    after(closeContexts);
    const minLength = () => world.server.config.passwordMinLength;
    const goodPassword = 'Register-Passw0rd!';

    async function registrationForm(page: Page): Promise<void> {
      const response = await page.goto(authorizeUrl({ prompt: 'create' }));
      assert.equal(response?.status(), 200);
      await page.waitForSelector('#givenName');
      assert.equal(await page.locator('#loginName').count(), 0, 'the registration form, not the login page');
    }

    async function fill(page: Page, values: { givenName: string; familyName: string; email: string; password: string; passwordRepeat: string }): Promise<void> {
      for (const [field, value] of Object.entries(values)) await page.fill(`#${field}`, value);
    }

    /** Submits the form; asserts it came back as a page (200, no redirect) and returns it. */
    async function submitExpectingForm(page: Page): Promise<void> {
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/register')),
        page.click('button[type=submit]'),
      ]);
      assert.equal(response.status(), 200, 'the form comes back with HTTP 200');
      await page.waitForLoadState();
      assert.ok(page.url().startsWith(`${world.issuer}/ui/login/`) && page.url().endsWith('/register'), `still on the form: ${page.url()}`);
      await page.waitForSelector('#givenName');
    }

    test("shows the registration form directly; filling it creates a user in the app's org and returns to the RP signed in", async () => {
      const { page } = await freshPage();
      const email = `reg-${randomUUID().slice(0, 8)}@example.org`;
      await registrationForm(page);
      await fill(page, { givenName: 'Regina', familyName: 'Register', email, password: goodPassword, passwordRepeat: goodPassword });
      await page.click('button[type=submit]');
      const tokens = await redeem((await callback(page)).get('code'));
      const sub = tokens.claims.sub;
      assert.ok(![alice.userId, bob.userId].includes(sub), 'a new user');
      const user = await world.api('GET', `/management/v1/users/${sub}`);
      assert.equal(user.status, 200, JSON.stringify(user.body));
      assert.equal(user.body.user.id, sub);
      assert.equal(user.body.user.userName, email);
      assert.equal(user.body.user.details.resourceOwner, world.orgId, "in the app's org");
      assert.equal(user.body.user.human?.profile?.firstName, 'Regina');
      assert.equal(user.body.user.human?.email?.email, email);
      assert.equal(await userinfoStatus(tokens.access_token), 200);

      // Signed in: the next authorization needs no page.
      const shown = shownPages(page);
      await page.goto(authorizeUrl());
      assert.equal((await redeem((await callback(page)).get('code'))).claims.sub, sub);
      assert.deepEqual(shown, []);
    });

    const cases: Array<{
      name: string;
      values: () => { givenName: string; familyName: string; email: string; password: string; passwordRepeat: string };
      errorField: string;
    }> = [
      {
        name: 'mismatched passwords',
        values: () => ({
          givenName: 'Mia',
          familyName: 'Match',
          email: `mia-${randomUUID().slice(0, 6)}@example.org`,
          password: goodPassword,
          passwordRepeat: `${goodPassword}x`,
        }),
        errorField: 'passwordRepeat',
      },
      {
        name: 'a too-short password',
        values: () => ({
          givenName: 'Sam',
          familyName: 'Short',
          email: `sam-${randomUUID().slice(0, 6)}@example.org`,
          password: 'Ab1!'.padEnd(minLength() - 1, 'x'),
          passwordRepeat: 'Ab1!'.padEnd(minLength() - 1, 'x'),
        }),
        errorField: 'password',
      },
      {
        name: 'an invalid email',
        values: () => ({ givenName: 'Ivy', familyName: 'Invalid', email: 'not-an-email', password: goodPassword, passwordRepeat: goodPassword }),
        errorField: 'email',
      },
      {
        name: 'an empty first name',
        values: () => ({
          givenName: '',
          familyName: 'Nameless',
          email: `nn-${randomUUID().slice(0, 6)}@example.org`,
          password: goodPassword,
          passwordRepeat: goodPassword,
        }),
        errorField: 'givenName',
      },
      {
        name: 'a blank last name',
        values: () => ({
          givenName: 'Nora',
          familyName: '   ',
          email: `nora-${randomUUID().slice(0, 6)}@example.org`,
          password: goodPassword,
          passwordRepeat: goodPassword,
        }),
        errorField: 'familyName',
      },
    ];

    for (const c of cases) {
      test(`${c.name}: the form comes back (HTTP 200, no redirect) with the error beside ${c.errorField}, values kept except the passwords`, async () => {
        const { page } = await freshPage();
        await registrationForm(page);
        const values = c.values();
        await fill(page, values);
        await submitExpectingForm(page);
        const error = page.locator(`#${c.errorField}Error`);
        assert.equal(await error.count(), 1, `an error beside ${c.errorField}`);
        assert.ok((await error.innerText()).trim().length > 0);
        assert.equal(await page.getAttribute(`#${c.errorField}`, 'aria-invalid'), 'true');
        assert.equal(await page.getAttribute(`#${c.errorField}`, 'aria-describedby'), `${c.errorField}Error`);
        assert.equal(await page.inputValue('#givenName'), values.givenName);
        assert.equal(await page.inputValue('#familyName'), values.familyName);
        assert.equal(await page.inputValue('#email'), values.email);
        assert.equal(await page.inputValue('#password'), '', 'the password is not sent back');
        assert.equal(await page.inputValue('#passwordRepeat'), '', 'the repeated password is not sent back');
        const html = await page.content();
        assert.ok(!html.includes(values.password) || values.password === '', 'the password is nowhere in the page');

        // Nothing was created: corrected, the same form (same email) goes through.
        const email = values.email.includes('@') ? values.email : `fixed-${randomUUID().slice(0, 6)}@example.org`;
        await fill(page, {
          givenName: values.givenName || 'Fixed',
          familyName: values.familyName.trim() || 'Fixed',
          email,
          password: goodPassword,
          passwordRepeat: goodPassword,
        });
        await page.click('button[type=submit]');
        assert.ok((await callback(page)).get('code'), 'the corrected form signs the new user in');
      });
    }

    test('an email that was already registered: the form comes back with "not available" beside the email, values kept', async () => {
      const email = `twice-${randomUUID().slice(0, 8)}@example.org`;
      {
        const { page } = await freshPage();
        await registrationForm(page);
        await fill(page, { givenName: 'First', familyName: 'Comer', email, password: goodPassword, passwordRepeat: goodPassword });
        await page.click('button[type=submit]');
        assert.ok((await callback(page)).get('code'));
      }
      const { page } = await freshPage();
      await registrationForm(page);
      await fill(page, { givenName: 'Second', familyName: 'Comer', email, password: goodPassword, passwordRepeat: goodPassword });
      await submitExpectingForm(page);
      assert.match(await page.locator('#emailError').innerText(), /not available/);
      assert.equal(await page.inputValue('#givenName'), 'Second');
      assert.equal(await page.inputValue('#email'), email);
      assert.equal(await page.inputValue('#password'), '');
    });

    test('the email of an existing user (created by an admin) counts as taken too', async () => {
      const { page } = await freshPage();
      await registrationForm(page);
      await fill(page, {
        givenName: 'Mallory',
        familyName: 'Mimic',
        email: alice.loginName /* alice@acme.example.test, Alice's email */,
        password: goodPassword,
        passwordRepeat: goodPassword,
      });
      await submitExpectingForm(page);
      assert.match(await page.locator('#emailError').innerText(), /not available/);
      assert.equal(await page.inputValue('#email'), alice.loginName);
    });

    test("with the org's login policy closing registration (allowRegister false): no register link, prompt=create and the form answer 403, nobody is created", async () => {
      // A form opened while registration was open, submitted after it closed.
      const { page } = await freshPage();
      await registrationForm(page);
      const email = `closed-${randomUUID().slice(0, 8)}@example.org`;
      await fill(page, { givenName: 'No', familyName: 'Body', email, password: goodPassword, passwordRepeat: goodPassword });
      const policy = await world.api('PUT', '/management/v1/policies/login', { allowRegister: false });
      assert.equal(policy.status, 200, JSON.stringify(policy.body));
      try {
        const [posted] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/register')),
          page.click('button[type=submit]'),
        ]);
        assert.equal(posted.status(), 403);
        assert.match(await page.locator('body').innerText(), /Registration is not open/);
        const search = await world.server.running.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
        assert.equal(search.rows.length, 0);

        const { page: other } = await freshPage();
        const created = await other.goto(authorizeUrl({ prompt: 'create' }));
        assert.equal(created?.status(), 403);
        assert.equal(await other.locator('#givenName').count(), 0);
        const login = await other.goto(authorizeUrl({}));
        assert.equal(login?.status(), 200);
        await other.waitForSelector('#loginName');
        assert.equal(await other.locator('a[href$="/register"]').count(), 0, 'no register link');
        const register = await other.goto(`${other.url().split('?')[0]!.replace(/\/$/, '')}/register`);
        assert.equal(register?.status(), 403);
      } finally {
        assert.equal((await world.api('DELETE', '/management/v1/policies/login')).status, 200);
      }
      // Open again: the form is back.
      const { page: again } = await freshPage();
      await registrationForm(again);
    });

    test('an email used in another org gets the same answer, which says nothing about that org or its account', async () => {
      const email = `elsewhere-${randomUUID().slice(0, 8)}@example.org`;
      const created = await fetch(`${world.server.url}/management/v1/users/human`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.adminPat}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'elsewhere', profile: { firstName: 'Else', lastName: 'Where' }, email: { email } }),
      });
      assert.equal(created.status, 200, await created.text());
      const { page } = await freshPage();
      await registrationForm(page);
      await fill(page, { givenName: 'Nosy', familyName: 'Parker', email, password: goodPassword, passwordRepeat: goodPassword });
      await submitExpectingForm(page);
      assert.equal(await page.locator('#emailError').innerText(), 'This login name is not available.');
      const text = await page.locator('body').innerText();
      assert.doesNotMatch(text, /Default|exists|Else|organi[sz]ation/i);
    });
  });

  describe('max_age', { concurrency: false }, () => {
    after(closeContexts);

    test('max_age=1 with a session older than 1 s shows the login page again; max_age=3600 shows no page', async () => {
      const { page } = await freshPage();
      await signInThrough(page, alice);

      let shown = shownPages(page);
      await page.goto(authorizeUrl({ max_age: '3600' }));
      assert.equal((await redeem((await callback(page)).get('code'))).claims.sub, alice.userId);
      assert.deepEqual(shown, [], 'max_age=3600: no page');

      await sleep(2100);
      await page.goto(authorizeUrl({ max_age: '1' }));
      await page.waitForSelector('#loginName');
      assert.ok(page.url().startsWith(`${world.issuer}/ui/login/`));
      await signIn(page, alice);
      const fresh = await redeem((await callback(page)).get('code'));
      assert.equal(fresh.claims.sub, alice.userId);
      assert.ok(Math.floor(Date.now() / 1000) - fresh.claims.auth_time! <= 5, `a fresh auth_time: ${fresh.claims.auth_time}`);

      shown = shownPages(page);
      await page.goto(authorizeUrl({ max_age: '3600' }));
      await callback(page);
      assert.deepEqual(shown, []);
    });
  });

  describe('login_hint', { concurrency: false }, () => {
    after(closeContexts);

    test('login_hint=alice@acme.example.test prefills the login name field', async () => {
      const { page } = await freshPage();
      await page.goto(authorizeUrl({ login_hint: 'alice@acme.example.test' }));
      await page.waitForSelector('#loginName');
      assert.equal(await page.inputValue('#loginName'), 'alice@acme.example.test');
      await page.click('button[type=submit]');
      await page.fill('#password', alice.password);
      await page.click('button[type=submit]');
      assert.equal((await redeem((await callback(page)).get('code'))).claims.sub, alice.userId);
    });
  });

  describe('ui_locales and Accept-Language', { concurrency: false }, () => {
    after(closeContexts);

    async function heading(page: Page): Promise<{ lang: string | null; h1: string; button: string }> {
      await page.waitForSelector('#loginName');
      return {
        lang: await page.getAttribute('html', 'lang'),
        h1: (await page.locator('h1').innerText()).trim(),
        button: (await page.locator('button[type=submit]').innerText()).trim(),
      };
    }

    test('ui_locales=de shows the page in German', async () => {
      const { page } = await freshPage();
      await page.goto(authorizeUrl({ ui_locales: 'de' }));
      assert.deepEqual(await heading(page), { lang: 'de', h1: 'Anmelden', button: 'Weiter' });
      assert.equal(await page.locator('label[for=loginName]').innerText(), 'Loginname');
    });

    test('without ui_locales, Accept-Language de-CH,de;q=0.9 shows German', async () => {
      const { page } = await freshPage({ locale: 'de-CH' });
      const response = await page.goto(authorizeUrl());
      const accept = await response?.request().headerValue('accept-language');
      assert.match(accept ?? '', /^de-CH/, `the browser sends ${accept}`);
      assert.deepEqual(await heading(page), { lang: 'de', h1: 'Anmelden', button: 'Weiter' });
    });

    test('German stays through the password page and its error', async () => {
      const { page } = await freshPage();
      await page.goto(authorizeUrl({ ui_locales: 'de' }));
      await page.fill('#loginName', alice.loginName);
      await page.click('button[type=submit]');
      await page.fill('#password', 'wrong-password');
      await page.click('button[type=submit]');
      await page.waitForSelector('.error');
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      assert.equal((await page.locator('.error').innerText()).trim(), 'Loginname oder Passwort ist falsch.');
    });

    test('ui_locales=fr (not offered) falls back to English', async () => {
      const { page } = await freshPage();
      await page.goto(authorizeUrl({ ui_locales: 'fr' }));
      assert.deepEqual(await heading(page), { lang: 'en', h1: 'Sign in', button: 'Next' });
    });

    test('ui_locales wins over Accept-Language: ui_locales=en in a German browser shows English', async () => {
      const { page } = await freshPage({ locale: 'de-CH' });
      await page.goto(authorizeUrl({ ui_locales: 'en' }));
      assert.deepEqual(await heading(page), { lang: 'en', h1: 'Sign in', button: 'Next' });
    });
  });
});
