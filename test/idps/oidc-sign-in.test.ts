import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import * as client from 'openid-client';
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
import { ROOT } from '../support/server.ts';
import { startUpstreamOp, upstreamSignIn, type UpstreamOp } from '../support/upstream-op.ts';
import { startGithubStyle, startHandmadeOp, type HandmadeUpstream } from '../support/handmade-upstream.ts';
import { authorize as authorizeApp } from './support.ts';

// docs/idps.md: signing in through external providers in Chromium, against a
// second OpenID provider (a bare oidc-provider), hand-made upstreams for the
// tampered answers, and a GitHub-style OAuth server.

describe('sign-in through external identity providers, in Chromium', { skip: needsChromium }, () => {
  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let upstream: UpstreamOp;
  let handmade: HandmadeUpstream;
  let forge: HandmadeUpstream;
  let config: client.Configuration;
  const idps: Record<string, string> = {};

  const OPTIONS = {
    auto: { isAutoCreation: true, isAutoUpdate: true, isLinkingAllowed: true, isCreationAllowed: false },
    link: { isAutoCreation: false, isAutoUpdate: false, isLinkingAllowed: true, isCreationAllowed: false },
    form: { isAutoCreation: false, isAutoUpdate: false, isLinkingAllowed: false, isCreationAllowed: true },
  };

  async function addIdp(kind: string, body: Record<string, unknown>): Promise<string> {
    const created = await world.server.api('POST', `/admin/v1/idps/${kind}`, { body });
    assert.equal(created.status, 200, created.text);
    const listed = await world.api('POST', '/management/v1/policies/login/idps', { idpId: created.body.id });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    return created.body.id;
  }

  before(async () => {
    [world, rp, browser] = await Promise.all([startSignInWorld({}, { captureLog: true }), startRelyingParty(), launchBrowser()]);
    const callback = `${world.issuer}/idps/callback`;
    upstream = await startUpstreamOp(callback);
    handmade = await startHandmadeOp('hand');
    forge = await startGithubStyle({ id: 4711, login: 'octo', name: 'Octo Cat', email: 'octo@forge.example' });
    const oidc = { issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret, scopes: ['openid', 'profile', 'email'] };
    idps.auto = await addIdp('generic_oidc', { name: 'Upstream', ...oidc, isIdTokenMapping: false, providerOptions: OPTIONS.auto });
    idps.link = await addIdp('generic_oidc', { name: 'Linking', ...oidc, isIdTokenMapping: true, providerOptions: OPTIONS.link });
    idps.form = await addIdp('generic_oidc', { name: 'Form', ...oidc, providerOptions: OPTIONS.form });
    idps.handmade = await addIdp('generic_oidc', {
      name: 'Handmade',
      issuer: handmade.issuer,
      clientId: handmade.clientId,
      clientSecret: handmade.clientSecret,
      isIdTokenMapping: true,
      providerOptions: OPTIONS.auto,
    });
    idps.forge = await addIdp('oauth', {
      name: 'Forge',
      clientId: forge.clientId,
      clientSecret: forge.clientSecret,
      authorizationEndpoint: `${forge.issuer}/login/oauth/authorize`,
      tokenEndpoint: `${forge.issuer}/login/oauth/access_token`,
      userEndpoint: `${forge.issuer}/user`,
      scopes: ['read:user'],
      idAttribute: 'id',
      providerOptions: OPTIONS.auto,
    });
    const app = await world.createApp({ name: 'Shop web', ...confidentialAppFor(rp) });
    config = await rpConfig(world, app);
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await upstream?.stop();
    await handmade?.stop();
    await forge?.stop();
    await world?.stop();
  });

  async function freshPage(t: TestContext): Promise<Page> {
    const context = await browser.newContext();
    t.after(() => context.close());
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  }

  /** Opens the app's authorization request; `finish` redeems the code the browser lands with. */
  const authorize = (page: Page) => authorizeApp(page, config, rp);

  const button = (page: Page, name: string) => page.getByRole('button', { name: `Sign in with ${name}` });

  async function userCount(): Promise<number> {
    const { rows } = await world.server.running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM users');
    return Number(rows[0]!.n);
  }

  async function links(userId: string): Promise<Array<Record<string, string>>> {
    const res = await world.api('POST', `/management/v1/users/${userId}/links/_search`, {});
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.result;
  }

  test("the login page shows one button per provider of the app's org (en, de)", async (t) => {
    const page = await freshPage(t);
    await authorize(page);
    for (const name of ['Upstream', 'Linking', 'Form', 'Handmade', 'Forge']) assert.equal(await button(page, name).count(), 1, name);
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'test-results', 'idp-login-page.png'), fullPage: true });
    const de = await (await browser.newContext({ locale: 'de-DE' })).newPage();
    t.after(() => de.context().close());
    const url = new URL(page.url());
    await de.goto(
      client.buildAuthorizationUrl(config, {
        redirect_uri: rp.callback,
        scope: 'openid',
        ui_locales: 'de',
        code_challenge: await client.calculatePKCECodeChallenge('x'.repeat(43)),
        code_challenge_method: 'S256',
      }).href,
    );
    assert.equal(await de.getByRole('button', { name: 'Mit Upstream anmelden' }).count(), 1);
    assert.ok(url.pathname.startsWith('/ui/login/'));
  });

  test("isAutoCreation: a new user in the app's org, linked, amr fed; isAutoUpdate updates the profile at the next sign-in", async (t) => {
    upstream.accounts.set('ada', {
      preferred_username: 'ada',
      email: 'ada@upstream.example',
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Lovelace',
    });
    const page = await freshPage(t);
    const flow = await authorize(page);
    await button(page, 'Upstream').click();
    await upstreamSignIn(page, 'ada');
    const claims = await flow.finish();
    assert.deepEqual(claims.amr, ['fed']);
    const user = (await world.api('GET', `/management/v1/users/${claims.sub}`)).body.user;
    assert.equal(user.userName, 'ada');
    assert.equal(user.human.profile.lastName, 'Lovelace');
    assert.deepEqual(user.human.email, { email: 'ada@upstream.example', isEmailVerified: true });
    assert.deepEqual(await links(String(claims.sub)), [
      { userId: claims.sub, idpId: idps.auto, idpName: 'Upstream', idpType: 'IDP_TYPE_OIDC', providedUserId: 'ada', providedUserName: 'ada' },
    ]);
    const events = await world.server.api('POST', '/admin/v1/events/_search', { body: { queries: [{ aggregateIdQuery: { id: claims.sub } }] } });
    const types = events.body.result.map((e: { type: string }) => e.type);
    assert.ok(types.includes('user.idp.link.added') && types.includes('user.human.externallogin.check.succeeded'), types.join());

    upstream.accounts.set('ada', { preferred_username: 'ada', email: 'ada@upstream.example', email_verified: true, given_name: 'Ada', family_name: 'King' });
    const again = await freshPage(t);
    const second = await authorize(again);
    await button(again, 'Upstream').click();
    await upstreamSignIn(again, 'ada');
    assert.equal((await second.finish()).sub, claims.sub, 'the same user');
    assert.equal((await world.api('GET', `/management/v1/users/${claims.sub}`)).body.user.human.profile.lastName, 'King');

    // A removed link no longer signs in: the user name is taken, so the login offers linking instead.
    const removed = await world.api('DELETE', `/management/v1/users/${claims.sub}/links/${idps.auto}/ada`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.deepEqual(await links(String(claims.sub)), []);
    const before = await userCount();
    const third = await freshPage(t);
    await authorize(third);
    await button(third, 'Upstream').click();
    await upstreamSignIn(third, 'ada');
    await third.waitForSelector('#loginName');
    assert.match((await third.textContent('main')) ?? '', /not linked to an account here yet/);
    assert.equal(await userCount(), before, 'nobody created');
  });

  test('isLinkingAllowed: the existing account signs in with its password, then the link holds', async (t) => {
    const bob = await world.createUser('bob');
    upstream.accounts.set('bob-upstream', { preferred_username: 'bobby', email: 'bob@elsewhere.example', email_verified: false });
    const page = await freshPage(t);
    const flow = await authorize(page);
    await button(page, 'Linking').click();
    await upstreamSignIn(page, 'bob-upstream');
    await page.fill('#loginName', bob.loginName);
    await page.click('button[type=submit]');
    await page.fill('#password', bob.password);
    await page.click('button[type=submit]');
    assert.equal((await flow.finish()).sub, bob.userId);
    assert.deepEqual(
      (await links(bob.userId)).map((l) => [l.idpId, l.providedUserId]),
      [[idps.link, 'bob-upstream']],
    );
    const again = await freshPage(t);
    const second = await authorize(again);
    await button(again, 'Linking').click();
    await upstreamSignIn(again, 'bob-upstream');
    const claims = await second.finish();
    assert.equal(claims.sub, bob.userId, 'the link signs in without the password');
    assert.deepEqual(claims.amr, ['fed']);

    // A deactivated user stays out.
    assert.equal((await world.api('POST', `/management/v1/users/${bob.userId}/_deactivate`, {})).status, 200);
    const third = await freshPage(t);
    await authorize(third);
    await button(third, 'Linking').click();
    await upstreamSignIn(third, 'bob-upstream');
    await third.waitForSelector('main h1');
    assert.match((await third.textContent('main')) ?? '', /cannot sign in/);
    assert.ok(!third.url().startsWith(rp.callback));
  });

  test('isCreationAllowed: the registration form, filled in from the provider, creates and links the user', async (t) => {
    upstream.accounts.set('cara', { preferred_username: 'cara', email: 'cara@upstream.example', email_verified: true, given_name: 'Cara', family_name: 'Way' });
    const page = await freshPage(t);
    const flow = await authorize(page);
    await button(page, 'Form').click();
    await upstreamSignIn(page, 'cara');
    await page.waitForSelector('#givenName');
    assert.equal(await page.inputValue('#givenName'), 'Cara');
    assert.equal(await page.inputValue('#email'), 'cara@upstream.example');
    await page.fill('#password', 'Cara-Passw0rd');
    await page.fill('#passwordRepeat', 'Cara-Passw0rd');
    await page.click('button[type=submit]');
    const claims = await flow.finish();
    assert.deepEqual(
      (await links(String(claims.sub))).map((l) => [l.idpId, l.providedUserId]),
      [[idps.form, 'cara']],
    );
  });

  test('an oauth provider (GitHub-style user endpoint and idAttribute) creates and signs in its user', async (t) => {
    const page = await freshPage(t);
    const flow = await authorize(page);
    await button(page, 'Forge').click();
    const claims = await flow.finish();
    assert.deepEqual(claims.amr, ['fed']);
    const user = (await world.api('GET', `/management/v1/users/${claims.sub}`)).body.user;
    assert.equal(user.userName, 'octo');
    assert.deepEqual(user.human.email, { email: 'octo@forge.example', isEmailVerified: false });
    assert.deepEqual(
      (await links(String(claims.sub))).map((l) => [l.idpType, l.providedUserId, l.providedUserName]),
      [['IDP_TYPE_OAUTH', '4711', 'octo']],
    );
  });

  test('forceMfa asks a second factor of an external sign-in unless forceMfaLocalOnly', async (t) => {
    t.after(() => world.api('PUT', '/management/v1/policies/login', { forceMfa: false, forceMfaLocalOnly: false }));
    assert.equal((await world.api('PUT', '/management/v1/policies/login', { forceMfa: true, forceMfaLocalOnly: true })).status, 200);
    const page = await freshPage(t);
    const flow = await authorize(page);
    await button(page, 'Forge').click();
    assert.deepEqual((await flow.finish()).amr, ['fed'], 'local only: no second factor');
    assert.equal((await world.api('PUT', '/management/v1/policies/login', { forceMfaLocalOnly: false })).status, 200);
    const strict = await freshPage(t);
    await authorize(strict);
    await button(strict, 'Forge').click();
    await strict.waitForSelector('main h1');
    assert.ok(new URL(strict.url()).pathname.startsWith('/ui/login/'), 'the login stops for the second factor');
    assert.ok(!strict.url().startsWith(rp.callback));
  });

  for (const tamper of ['nonce', 'audience', 'signature', 'garbage'] as const) {
    test(`an answer with ${tamper === 'garbage' ? 'no JSON at the token endpoint' : `an ID token of the wrong ${tamper}`} is refused with the page: no session, nobody created`, async (t) => {
      handmade.tamper = tamper;
      t.after(() => {
        handmade.tamper = 'none';
      });
      const before = await userCount();
      const page = await freshPage(t);
      await authorize(page);
      await button(page, 'Handmade').click();
      await page.waitForSelector('main h1');
      assert.match((await page.textContent('main')) ?? '', /did not work/);
      assert.equal(await userCount(), before);
      assert.ok(!world.server.logText().includes(handmade.clientSecret), 'no secret logged');
    });
  }

  test('the untampered handmade upstream signs in (the tampered cases fail for their tamper only)', async (t) => {
    const page = await freshPage(t);
    const flow = await authorize(page);
    await button(page, 'Handmade').click();
    assert.deepEqual((await flow.finish()).amr, ['fed']);
  });

  test('a replayed callback and a state that matches no trip are refused with the page', async (t) => {
    const page = await freshPage(t);
    const seen: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/idps/callback')) seen.push(request.url());
    });
    const flow = await authorize(page);
    await button(page, 'Forge').click();
    await flow.finish();
    assert.equal(seen.length, 1);
    const replay = await page.goto(seen[0]!);
    assert.equal(replay?.status(), 400);
    assert.match((await page.textContent('main')) ?? '', /expired or was already finished/);
    const bogus = await page.goto(`${world.issuer}/idps/callback?state=${'a'.repeat(43)}&code=x`);
    assert.equal(bogus?.status(), 400);
  });

  test('an upstream that is down gets the page saying so, in German too', async (t) => {
    const gone = await startHandmadeOp('gone');
    const id = await addIdp('generic_oidc', { name: 'Gone', issuer: gone.issuer, clientId: gone.clientId, clientSecret: gone.clientSecret });
    await gone.stop();
    t.after(() => world.api('DELETE', `/management/v1/policies/login/idps/${id}`));
    const context = await browser.newContext({ locale: 'de-DE' });
    t.after(() => context.close());
    const page = await context.newPage();
    await authorize(page);
    await page.getByRole('button', { name: 'Mit Gone anmelden' }).click();
    await page.waitForSelector('main h1');
    assert.match((await page.textContent('main')) ?? '', /ist nicht erreichbar/);
  });
});
