import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import {
  confidentialAppFor,
  launchBrowser,
  needsChromium,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  rpConfig,
} from '../support/browser.ts';
import { startHandmadeOp, type HandmadeUpstream, type Tamper } from '../support/handmade-upstream.ts';
import { signInWith as startSignIn } from './support.ts';

// docs/idps.md "Caching" and "When the upstream fails": one hand-made
// upstream whose behaviour the test switches, counted at the upstream; every
// failure ends on the page saying so (en, de), with no session, nobody
// created and a log line without secrets.

describe('external OpenID providers: the cache, and an upstream that fails', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let upstream: HandmadeUpstream;
  let config: client.Configuration;
  let cachedId: string;
  /** The callback of a finished sign-in, replayed at the end. */
  let spentCallback = '';

  async function addIdp(name: string): Promise<string> {
    const created = await world.server.api('POST', '/admin/v1/idps/generic_oidc', { body: idpBody(name) });
    assert.equal(created.status, 200, created.text);
    const listed = await world.api('POST', '/management/v1/policies/login/idps', { idpId: created.body.id });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    return created.body.id;
  }

  const idpBody = (name: string) => ({
    name,
    issuer: upstream.issuer,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    isIdTokenMapping: true,
    providerOptions: { isAutoCreation: true, isAutoUpdate: true, isLinkingAllowed: false, isCreationAllowed: false },
  });

  before(async () => {
    [world, rp, browser, upstream] = await Promise.all([
      startSignInWorld({}, { captureLog: true }),
      startRelyingParty(),
      launchBrowser(),
      startHandmadeOp('frieda'),
    ]);
    cachedId = await addIdp('Cached');
    const app = await world.createApp({ name: 'Shop web', ...confidentialAppFor(rp) });
    config = await rpConfig(world, app);
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await upstream?.stop();
    await world?.stop();
  });

  async function freshPage(t: TestContext, locale = 'en-GB'): Promise<Page> {
    const context = await browser.newContext({ locale });
    t.after(() => context.close());
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  }

  /** Opens the app's authorization request and presses the provider's button; `finish` redeems the code the browser lands with. */
  const signInWith = (page: Page, button: string) => startSignIn(page, config, rp, button);

  const count = async (table: string) => Number((await world.server.running.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`)).rows[0]!.n);
  const hits = () => ({ discovery: upstream.hits['/.well-known/openid-configuration'] ?? 0, jwks: upstream.hits['/jwks'] ?? 0 });

  test('discovery and JWKS are fetched once for several sign-ins; isAutoUpdate follows email_verified; a changed provider is discovered afresh', async (t) => {
    const before = hits();
    upstream.user = { email_verified: false };
    const first = await freshPage(t);
    first.on('request', (request) => {
      if (request.url().includes('/idps/callback')) spentCallback = request.url();
    });
    const claims = await (await signInWith(first, 'Sign in with Cached')).finish();
    const email = async () => (await world.api('GET', `/management/v1/users/${claims.sub}`)).body.user.human.email;
    assert.deepEqual(await email(), { email: 'frieda@handmade.example', isEmailVerified: false });

    upstream.user = { email_verified: true };
    const second = await freshPage(t);
    assert.equal((await (await signInWith(second, 'Sign in with Cached')).finish()).sub, claims.sub);
    assert.deepEqual(await email(), { email: 'frieda@handmade.example', isEmailVerified: true }, 'the upstream verified it since');
    upstream.user = { email_verified: false };
    const third = await freshPage(t);
    await (await signInWith(third, 'Sign in with Cached')).finish();
    assert.deepEqual(await email(), { email: 'frieda@handmade.example', isEmailVerified: false }, 'and took it back');
    // Three sign-ins, each of two steps that need the configuration: one discovery, one JWKS.
    assert.deepEqual(hits(), { discovery: before.discovery + 1, jwks: before.jwks + 1 });

    const changed = await world.server.api('PUT', `/admin/v1/idps/generic_oidc/${cachedId}`, { body: { ...idpBody('Cached'), scopes: ['openid', 'email'] } });
    assert.equal(changed.status, 200, changed.text);
    const afterChange = hits();
    const fourth = await freshPage(t);
    await (await signInWith(fourth, 'Sign in with Cached')).finish();
    assert.deepEqual(hits(), { discovery: afterChange.discovery + 1, jwks: afterChange.jwks + 1 }, 'the changed provider is fetched again');
  });

  const FAILURES: Array<{ tamper: Tamper; what: string; reason: 'unreachable' | 'invalid' }> = [
    { tamper: 'slow', what: 'a token endpoint answering after the 5 s timeout', reason: 'unreachable' },
    { tamper: 'html-discovery', what: 'an HTML page for discovery', reason: 'invalid' },
    { tamper: 'garbage', what: 'a token endpoint answering 200 with no JSON', reason: 'invalid' },
    { tamper: 'huge', what: 'a 10 MB token answer', reason: 'invalid' },
    { tamper: 'nonce', what: 'an ID token with another nonce', reason: 'invalid' },
    { tamper: 'audience', what: 'an ID token for another audience', reason: 'invalid' },
    { tamper: 'signature', what: 'an ID token signed by another key', reason: 'invalid' },
  ];
  const PAGE = {
    en: { invalid: /The sign-in with \w+ did not work\. Nothing was changed/, unreachable: /\w+ could not be reached\./, button: 'Sign in with' },
    de: { invalid: /Die Anmeldung mit \w+ hat nicht funktioniert\./, unreachable: /\w+ ist nicht erreichbar\./, button: 'Mit' },
  };

  FAILURES.forEach(({ tamper, what, reason }, i) => {
    const lang = i % 2 === 0 ? 'en' : 'de';
    test(`${what}: the page (${lang}), no session, nobody created, logged without secrets`, async (t) => {
      // Discovery failing needs a provider whose discovery is not cached yet: one created while it still worked.
      if (tamper === 'html-discovery') await addIdp('Fresh');
      upstream.tamper = tamper;
      t.after(() => {
        upstream.tamper = 'none';
      });
      const name = tamper === 'html-discovery' ? 'Fresh' : 'Cached';
      const users = await count('users');
      const links = await count('user_idp_links');
      const logged = world.server.logText().length;
      const page = await freshPage(t, lang === 'en' ? 'en-GB' : 'de-DE');
      await signInWith(page, lang === 'en' ? `Sign in with ${name}` : `Mit ${name} anmelden`);
      await page.waitForSelector('main h1');
      assert.match((await page.textContent('main')) ?? '', PAGE[lang][reason]);
      assert.ok(!page.url().startsWith(rp.callback), 'no code for the app');
      assert.equal((await page.context().cookies()).filter((c) => c.name.startsWith('_session') && !c.name.endsWith('.legacy')).length, 0, 'no session cookie');
      assert.equal(await count('users'), users, 'nobody created');
      assert.equal(await count('user_idp_links'), links, 'nothing linked');
      const log = world.server.logText().slice(logged);
      assert.match(log, new RegExp(`"event":"external_login_failed","reason":"${reason}"`));
      for (const secret of [upstream.clientSecret, 'handmade-access', 'code=code-']) assert.ok(!log.includes(secret), `no ${secret} in the log`);
    });
  });

  test('a replayed callback and a state that matches no login: the "expired" page (de), nothing else', async (t) => {
    assert.ok(spentCallback, 'the first sign-in passed the callback');
    const users = await count('users');
    const german = await freshPage(t, 'de-DE');
    const replay = await german.goto(spentCallback);
    assert.equal(replay?.status(), 400);
    assert.match((await german.textContent('main')) ?? '', /abgelaufen oder wurde bereits abgeschlossen/);
    const bogus = await german.goto(`${world.issuer}/idps/callback?state=${'b'.repeat(43)}&code=x`);
    assert.equal(bogus?.status(), 400);
    assert.match((await german.textContent('main')) ?? '', /abgelaufen oder wurde bereits abgeschlossen/);
    assert.equal(await count('users'), users);
  });
});
