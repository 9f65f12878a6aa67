import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import {
  addPasskeyAuthenticator,
  codeLogin,
  confidentialAppFor,
  landedOn,
  needsChromium,
  type RelyingParty,
  signIn,
  startCodeFlow,
  startRelyingParty,
} from '../support/browser.ts';
import { assertAccessible, assertNoSideScroll, CONSOLE_ADMIN, shoot, startConsoleScene, type ConsoleScene } from '../support/console.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { eventually } from '../support/tokens.ts';
import { type Mailbox, mailbox, shot, typedCode } from '../mail-flows/support.ts';

// One server, one Chromium and one app (openid-client, redirecting to a
// relying party of the test) for two sides of the same org:
// - the console: a member's roles changed (users giving up their own owner
//   role are asked first, the API's refusals said in the console's
//   language, known by their reasons whatever the message), and an org deactivated and reactivated from its page while
//   the app signs its users in (docs/api/users.md, Members; docs/api/orgs.md);
// - the login pages, with a real SMTP server receiving the mails: a passkey
//   sign-in held for the email verification like a password one
//   (docs/self-service.md), the broken password rule named in German on the
//   code pages, and the external providers' buttons in their brands
//   (docs/idps.md, "What happens at sign-in").

const PASSWORD = 'Member-Passw0rd!';
let scene: ConsoleScene;
let sink: SmtpSink;
let mails: Mailbox;
let rp: RelyingParty;
let config: client.Configuration;
let defaultOrg: string;

/** A call of the admin's API in the first org (the default of its PAT). */
async function api(method: string, path: string, body?: unknown, orgId?: string) {
  return scene.admin(method, path, { body, ...(orgId ? { orgId } : {}) });
}

async function human(userName: string, extra: Record<string, unknown> = { password: PASSWORD }, orgId = defaultOrg) {
  const email = `${userName}@mail.example.test`;
  const created = await api(
    'POST',
    '/management/v1/users/human',
    { userName, profile: { firstName: userName, lastName: 'Tester' }, email: { email }, ...extra },
    orgId,
  );
  assert.equal(created.status, 200, created.text);
  const got = await api('GET', `/management/v1/users/${created.body.userId}`, undefined, orgId);
  return { userId: created.body.userId as string, loginName: got.body.user.preferredLoginName as string, email };
}

const MEMBER_CALLS = '**/orgs/me/members/*';

/**
 * The API's refusals of member changes with the message reworded and the
 * ErrorInfo reason kept: the console must tell them apart by the reason
 * (docs/api/README.md, Errors), never by the server's words.
 */
async function rewordRefusals(p: Page): Promise<void> {
  await p.route(MEMBER_CALLS, async (route) => {
    const response = await route.fetch();
    if (response.ok()) return route.fulfill({ response });
    const body = await response.json();
    return route.fulfill({ response, json: { ...body, message: 'reworded by the server' } });
  });
}

before(async () => {
  sink = await startSmtpSink();
  mails = mailbox(sink);
  [scene, rp] = await Promise.all([startConsoleScene({ SMTP_URL: sink.url() }), startRelyingParty()]);
  defaultOrg = (await api('POST', '/admin/v1/orgs/_search', {})).body.result[0].id;
  // The app belongs to the instance's first org, so it stays a client while another org is inactive.
  const project = await api('POST', '/management/v1/projects', { name: 'Portal' });
  const app = await api('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
    name: 'portal',
    ...confidentialAppFor(rp),
    idTokenUserinfoAssertion: true,
  });
  assert.equal(app.status, 200, app.text);
  config = await client.discovery(new URL(scene.server.issuer), app.body.clientId, undefined, client.ClientSecretBasic(app.body.clientSecret), {
    execute: [client.allowInsecureRequests],
  });
});
after(async () => {
  await scene?.stop();
  await rp?.close();
  await sink?.stop();
});

describe('members and org state in the console', { skip: needsChromium }, () => {
  let context: BrowserContext;
  let page: Page;
  const dialog = (p: Page = page) => p.getByRole('dialog', { name: /Please confirm|Bitte bestätigen/ });
  const rolesOf = async (userId: string) =>
    (await api('POST', '/management/v1/orgs/me/members/_search', {})).body.result.find((m: { userId: string }) => m.userId === userId)?.roles;

  before(async () => {
    ({ context, page } = await scene.signedInPage());
  });

  it('changes a member’s roles; asks before the owner gives up its own owner role; says the refusals in words (en, de)', async () => {
    const grace = await human('grace');
    assert.equal((await scene.admin('POST', '/management/v1/orgs/me/members', { body: { userId: grace.userId, roles: ['ORG_USER_MANAGER'] } })).status, 200);
    const admin = (await scene.admin('POST', '/management/v1/orgs/me/members/_search', { body: {} })).body.result.find(
      (m: { preferredLoginName: string }) => m.preferredLoginName === CONSOLE_ADMIN.loginName,
    );
    await rewordRefusals(page);
    await page.goto(`${scene.consoleUrl}orgs/${defaultOrg}/members`);
    const members = page.getByRole('region', { name: 'Members of this organization' });

    // The only owner giving up its own owner role: asked first, then refused by the API, in words.
    await members.getByRole('button', { name: `Change roles: ${CONSOLE_ADMIN.loginName}` }).click();
    const own = members.getByRole('form', { name: `Roles of ${CONSOLE_ADMIN.loginName}` });
    await own.getByLabel('Owner', { exact: true }).uncheck();
    await own.getByLabel('User manager').check();
    await own.getByRole('button', { name: 'Save roles' }).click();
    await dialog().getByText('You are giving up your own owner role.', { exact: false }).waitFor();
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(await rolesOf(admin.userId), ['ORG_OWNER'], 'Cancel changed nothing');
    await own.getByRole('button', { name: 'Save roles' }).click();
    await dialog().getByRole('button', { name: 'Save roles' }).click();
    await own.getByText('The last owner keeps the owner role: make another member owner first.').waitFor();
    assert.deepEqual(await rolesOf(admin.userId), ['ORG_OWNER']);
    await own.getByRole('button', { name: 'Cancel' }).click();
    await page.unroute(MEMBER_CALLS);

    // Another member's roles: no question asked.
    await members.getByRole('button', { name: `Change roles: ${grace.loginName}` }).click();
    const hers = members.getByRole('form', { name: `Roles of ${grace.loginName}` });
    await hers.getByLabel('Owner', { exact: true }).check();
    await hers.getByLabel('User manager').uncheck();
    await hers.getByRole('button', { name: 'Save roles' }).click();
    await members.getByText('Roles saved.').waitFor();
    assert.deepEqual(await rolesOf(grace.userId), ['ORG_OWNER']);
    assert.match(await members.getByRole('table').locator('tbody tr').filter({ hasText: grace.loginName }).innerText(), /Owner/);
    // No role at all is refused before anything is sent.
    await members.getByRole('button', { name: `Change roles: ${grace.loginName}` }).click();
    await hers.getByLabel('Owner', { exact: true }).uncheck();
    await hers.getByRole('button', { name: 'Save roles' }).click();
    await hers.getByText('Choose at least one role.').waitFor();
    assert.deepEqual(await rolesOf(grace.userId), ['ORG_OWNER']);
    await assertAccessible(page, 'members (role change)');
    await shoot(page, 'members-roles');

    // An org owner (German console) may not change the instance owner, who holds a role it lacks.
    const german = await scene.signedInPage({ locale: 'de-DE' }, { loginName: grace.loginName, password: PASSWORD });
    await rewordRefusals(german.page);
    await german.page.goto(`${scene.consoleUrl}orgs/${defaultOrg}/members`);
    const list = german.page.getByRole('region', { name: 'Mitglieder dieser Organisation' });
    await list.getByRole('button', { name: `Rollen ändern: ${CONSOLE_ADMIN.loginName}` }).click();
    const theirs = list.getByRole('form', { name: `Rollen von ${CONSOLE_ADMIN.loginName}` });
    await theirs.getByLabel('Benutzerverwaltung').check();
    await theirs.getByRole('button', { name: 'Rollen speichern' }).click();
    await theirs.getByText('Sie dürfen nur Mitglieder ändern, die keine Rolle haben, die Ihnen fehlt.').waitFor();
    assert.deepEqual(await rolesOf(admin.userId), ['ORG_OWNER']);
    await assertAccessible(german.page, 'members (de, refused)');
    await german.context.close();
  });

  it('deactivates an org from its page: its users cannot sign in at an app and their tokens end; reactivated, they sign in again', async () => {
    const setup = await scene.admin('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Initech' },
        human: {
          userName: 'ivan',
          profile: { firstName: 'Ivan', lastName: 'Initech' },
          email: { email: 'ivan@initech.example.test', isEmailVerified: true },
          password: PASSWORD,
        },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    const initech: string = setup.body.orgId;
    const ivan = {
      loginName: (await scene.admin('GET', `/management/v1/users/${setup.body.userId}`, { orgId: initech })).body.user.preferredLoginName,
      password: PASSWORD,
    };
    const rpContext = await scene.browser.newContext({ locale: 'en-US' });
    rpContext.setDefaultTimeout(10_000);
    const rpPage = await rpContext.newPage();
    const before = await codeLogin(rpPage, config, rp, ivan, 'openid', { prompt: 'login' });
    const sub = before.tokens.claims()!.sub;
    assert.equal((await client.fetchUserInfo(config, before.tokens.access_token, sub)).sub, sub);

    await page.goto(`${scene.consoleUrl}orgs/${initech}/org`);
    await page.getByRole('button', { name: 'Deactivate organization' }).click();
    await dialog().getByRole('button', { name: 'Deactivate organization' }).click();
    await page.getByText('This organization is deactivated: its users cannot sign in.').waitFor();
    await assertAccessible(page, 'org (inactive)');

    // docs/api/orgs.md: the token ends (userinfo 401), and the login answers as for a wrong password.
    const refused = async () =>
      client.fetchUserInfo(config, before.tokens.access_token, sub).then(
        () => false,
        (err: unknown) => err instanceof client.WWWAuthenticateChallengeError && err.status === 401,
      );
    assert.ok(await eventually(refused, 10_000, 100), 'userinfo refuses the token of a user of an inactive org');
    await startCodeFlow(rpPage, config, rp, { prompt: 'login' });
    await signIn(rpPage, ivan);
    await rpPage.waitForSelector('[role=alert]');
    assert.equal((await rpPage.textContent('[role=alert]'))?.trim(), 'The login name or password is wrong.');
    assert.ok(new URL(rpPage.url()).pathname.startsWith('/ui/login/'), 'no code for the app');

    await page.getByRole('button', { name: 'Reactivate organization' }).click();
    await page.getByRole('button', { name: 'Deactivate organization' }).waitFor();
    const again = await codeLogin(rpPage, config, rp, ivan, 'openid', { prompt: 'login' });
    assert.equal(again.tokens.claims()!.sub, sub);
    assert.ok(await eventually(async () => !(await refused()), 10_000, 100), 'the unexpired token counts again');
    await landedOn(rpPage, rp.callback);
    await rpContext.close();
  });

  it('showed every page without a script error or CSP refusal', async () => {
    await context.close();
    assert.deepEqual(scene.problems, []);
  });
});

describe('in Chromium: the login pages', { skip: needsChromium }, () => {
  const contexts: BrowserContext[] = [];
  after(async () => {
    await Promise.all(contexts.map((c) => c.close()));
  });

  async function freshPage(options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await scene.browser.newContext({ locale: 'en-US', ...options });
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    return { context, page: await context.newPage() };
  }

  const alertOf = async (page: Page) => ((await page.textContent('[role=alert]')) ?? '').trim();

  it('with requireEmailVerification a passkey sign-in stops at the verification page, then ends with the passkey’s amr', async () => {
    const paula = await human('paula', { password: 'Paula-Passw0rd' });
    await mails.nth(paula.email, 1);
    const { context, page } = await freshPage();
    await addPasskeyAuthenticator(context, page);
    await page.goto(`${scene.server.issuer}/ui/login/security`);
    await page.fill('#loginName', paula.loginName);
    await page.fill('#password', 'Paula-Passw0rd');
    await page.click('button[type=submit]');
    await page.fill('#passkeyName', 'Laptop');
    await page.click('#passkey-register');
    await page.waitForSelector('ul#passkeys');

    assert.equal((await api('PUT', '/management/v1/policies/login', { requireEmailVerification: true })).status, 200);
    try {
      const finish = await startCodeFlow(page, config, rp, { prompt: 'login', scope: 'openid email' });
      await page.click('#passkey-authenticate');
      await page.waitForSelector('#code');
      assert.equal((await page.textContent('h1'))?.trim(), 'Verify your email address');
      assert.ok(new URL(page.url()).pathname.startsWith('/ui/login/'), 'no code for the app yet');
      const code = typedCode(await mails.nth(paula.email, 2));
      await page.fill('#code', code);
      await page.click('button[type=submit]');
      const claims = (await finish()).claims()!;
      assert.equal(claims.sub, paula.userId);
      assert.equal(claims.email_verified, true);
      assert.deepEqual(claims.amr, ['hwk', 'user'], 'the passkey is both factors: no second factor was asked');
    } finally {
      assert.equal((await api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });

  it('the code pages name the broken password rule in German for a German browser', async () => {
    const policy = await api('PUT', '/management/v1/policies/password_complexity', { minLength: 10, hasUppercase: true });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    try {
      const { page } = await freshPage({ locale: 'de-DE' });
      const setPassword = async (password: string) => {
        await page.fill('#password', password);
        await page.fill('#passwordRepeat', password);
        await page.click('button[type=submit]');
        await page.waitForLoadState();
      };
      // An invitation: /ui/login/user/init.
      const gerd = await human('gerd', {});
      const invitation = await mails.nth(gerd.email, 1);
      await page.goto(`${scene.server.issuer}/ui/login/user/init?userID=${gerd.userId}&code=${typedCode(invitation)}`);
      await setPassword('kurz');
      assert.equal(
        await alertOf(page),
        'Dieses Passwort ist nicht erlaubt. Verwenden Sie mindestens 10 Zeichen. Verwenden Sie mindestens einen Großbuchstaben.',
      );
      await shot(page, 'user-init-rule-de');

      // A reset: /ui/login/password/init.
      const reset = await api('POST', `/management/v1/users/${gerd.userId}/password/_reset`, { returnCode: true });
      assert.equal(reset.status, 200, JSON.stringify(reset.body));
      await page.goto(`${scene.server.issuer}/ui/login/password/init?userID=${gerd.userId}&code=${reset.body.verificationCode}`);
      await setPassword('kleinbuchstaben');
      assert.equal(await alertOf(page), 'Dieses Passwort ist nicht erlaubt. Verwenden Sie mindestens einen Großbuchstaben.');
      assert.doesNotMatch(await page.locator('main').innerText(), /must|contain/);
      await assertAccessible(page, 'password init (de)');

      // The API keeps its English.
      const refused = await api('POST', '/management/v1/users/human', {
        userName: 'hans',
        profile: { firstName: 'Hans', lastName: 'Tester' },
        email: { email: 'hans@mail.example.test' },
        password: 'kleinbuchstaben',
      });
      assert.equal(refused.status, 400);
      assert.match(JSON.stringify(refused.body), /must contain an uppercase letter/);
    } finally {
      assert.equal((await api('DELETE', '/management/v1/policies/password_complexity')).status, 200);
    }
  });

  it('external providers’ buttons: brand marks for Google, GitHub, GitLab and Microsoft, neutral for others; keyboard focus visible; 375 px and dark mode', async () => {
    const kinds: Array<[string, string, Record<string, unknown>]> = [
      ['google', 'Google', {}],
      ['github', 'GitHub', {}],
      ['gitlab', 'GitLab', {}],
      ['azure_ad', 'Microsoft', { tenant: 'common' }],
      [
        'oauth',
        'Acme SSO',
        {
          authorizationEndpoint: 'https://sso.acme.example.test/authorize',
          tokenEndpoint: 'https://sso.acme.example.test/token',
          userEndpoint: 'https://sso.acme.example.test/user',
          idAttribute: 'sub',
        },
      ],
    ];
    for (const [kind, name, extra] of kinds) {
      const created = await api('POST', `/management/v1/idps/${kind}`, { name, clientId: 'client', clientSecret: 'secret', ...extra });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal((await api('POST', '/management/v1/policies/login/idps', { idpId: created.body.id })).status, 200);
    }
    try {
      // One page, seen first at phone width in dark mode, then on a desktop in light mode.
      const { page } = await freshPage({ colorScheme: 'dark', viewport: { width: 375, height: 900 } });
      await startCodeFlow(page, config, rp);
      await page.waitForSelector('.idps');
      const buttons = page.locator('.idps button');
      assert.deepEqual(
        await buttons.evaluateAll((all) => all.map((b) => [b.className, b.textContent?.trim(), b.querySelectorAll('svg[aria-hidden=true]').length])),
        [
          ['idp idp-google', 'Sign in with Google', 1],
          ['idp idp-github', 'Sign in with GitHub', 1],
          ['idp idp-gitlab', 'Sign in with GitLab', 1],
          ['idp idp-microsoft', 'Sign in with Microsoft', 1],
          ['idp idp-neutral', 'Sign in with Acme SSO', 0],
        ],
      );
      // From the last control before them, Tab reaches the first button, with a visible outline.
      await page.getByRole('button', { name: 'Sign in with Google' }).focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const active = document.activeElement as HTMLElement;
        const style = getComputedStyle(active);
        return [active.textContent?.trim(), style.outlineStyle, style.outlineWidth];
      });
      assert.deepEqual(focused, ['Sign in with Google', 'solid', '3px']);
      const github = page.getByRole('button', { name: 'Sign in with GitHub' });
      const colours = () => github.evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]);
      for (const [scheme, width, expected] of [
        ['dark', 375, ['rgb(246, 248, 250)', 'rgb(36, 41, 47)']],
        ['light', 1280, ['rgb(36, 41, 47)', 'rgb(255, 255, 255)']],
      ] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.setViewportSize({ width, height: 900 });
        assert.deepEqual(await colours(), expected, `GitHub's colours (${scheme})`);
        await assertNoSideScroll(page, `login page (${scheme}, ${width} px)`);
        await assertAccessible(page, `login page (${scheme})`);
        await shot(page, `login-idps-${scheme}-${width}`);
      }
    } finally {
      assert.equal((await api('DELETE', '/management/v1/policies/login')).status, 200);
    }
  });
});
