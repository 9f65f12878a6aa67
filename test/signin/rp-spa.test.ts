import assert from 'node:assert/strict';
import { after, before, test, describe } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  landedOn,
  launchBrowser,
  oidcClientTsBundle,
  screenshot,
  signIn,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
  needsChromium,
} from '../support/browser.ts';

// The whole file drives Chromium: skipped, with its reason, where it is not installed.
describe('in Chromium', { skip: needsChromium }, () => {
  // A single-page app on its own origin signs in with oidc-client-ts in
  // Chromium (authorization code + PKCE, token and userinfo requests made by
  // the page, so across origins with CORS) and signs out again.

  let world: SignInWorld;
  let rp: RelyingParty;
  let browser: Browser;
  let user: TestUser;
  let clientId: string;

  /** The app: `/` starts the sign-in, `/cb` finishes it and shows userinfo, a button signs out. */
  function spaHtml(issuer: string, client: string): string {
    return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shop SPA</title><script src="/oidc-client-ts.js"></script></head>
<body>
<h1 id="status">Loading…</h1>
<button id="logout" hidden>Sign out</button>
<script>
const manager = new oidc.UserManager({
  authority: ${JSON.stringify(issuer)},
  client_id: ${JSON.stringify(client)},
  redirect_uri: location.origin + '/cb',
  post_logout_redirect_uri: location.origin + '/bye',
  response_type: 'code',
  scope: 'openid profile email',
});
async function main() {
  if (location.pathname === '/cb') {
    const user = await manager.signinRedirectCallback();
    const endpoint = await manager.metadataService.getUserInfoEndpoint();
    const response = await fetch(endpoint, { headers: { authorization: 'Bearer ' + user.access_token } });
    const info = await response.json();
    document.body.dataset.accessToken = user.access_token;
    document.body.dataset.userinfo = JSON.stringify(info);
    document.getElementById('status').textContent = 'Signed in as ' + info.email;
    const button = document.getElementById('logout');
    button.hidden = false;
    button.onclick = () => manager.signoutRedirect();
  } else {
    await manager.signinRedirect();
  }
}
main().catch((err) => {
  document.body.dataset.error = String(err && err.message || err);
  document.getElementById('status').textContent = 'Error: ' + document.body.dataset.error;
});
</script>
</body>
</html>`;
  }

  before(async () => {
    [world, rp, browser] = await Promise.all([startSignInWorld(), startRelyingParty(), launchBrowser()]);
    const [app, created] = await Promise.all([
      world.createApp({
        name: 'Shop SPA',
        redirectUris: [`${rp.origin}/cb`],
        postLogoutRedirectUris: [`${rp.origin}/bye`],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
        appType: 'OIDC_APP_TYPE_USER_AGENT',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
        devMode: true,
      }),
      world.createUser('spa', { firstName: 'Sandra', lastName: 'Page' }),
    ]);
    clientId = app.clientId;
    user = created;
    rp.serve('/oidc-client-ts.js', oidcClientTsBundle(), 'text/javascript');
    rp.serve('/', spaHtml(world.issuer, clientId));
    rp.serve('/cb', spaHtml(world.issuer, clientId));
  });

  after(async () => {
    await browser?.close();
    await rp?.close();
    await world?.stop();
  });

  test('a single-page app signs in with oidc-client-ts, reads userinfo across origins, signs out, and its access token is then refused', async (t) => {
    const context = await browser.newContext();
    t.after(() => context.close());
    const page = await context.newPage();
    const logs: string[] = [];
    page.on('console', (message) => logs.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (err) => logs.push(`pageerror: ${err.message}`));
    const seen = () => `\nbrowser console:\n${logs.join('\n') || '(empty)'}`;

    await page.goto(`${rp.origin}/`);
    await page
      .waitForURL((url) => url.href.startsWith(`${world.issuer}/ui/login/`), { timeout: 15_000 })
      .catch(() => {
        assert.fail(`the app should send the browser to the login page, but it is on ${page.url()}${seen()}`);
      });
    const authorize = new URL(page.url());
    assert.ok(authorize.pathname.startsWith('/ui/login/'));
    await screenshot(page, 'rp-spa-login-name');
    await signIn(page, user);
    await landedOn(page, `${rp.origin}/cb`);

    // The page writes its result into data attributes (expressions run in the browser).
    const outcome = await page.waitForFunction(
      "document.body.dataset.userinfo || (document.body.dataset.error && 'error: ' + document.body.dataset.error)",
      undefined,
      { timeout: 15_000 },
    );
    const shown = String(await outcome.jsonValue());
    assert.ok(!shown.startsWith('error: '), `the app failed after the redirect: ${shown}${seen()}`);
    const info = JSON.parse(shown) as Record<string, unknown>;
    assert.equal(info.sub, user.userId, seen());
    assert.equal(info.email, user.loginName);
    assert.equal(info.given_name, 'Sandra');
    await screenshot(page, 'rp-spa-signed-in');
    const accessToken = String(await page.evaluate("document.body.dataset.accessToken || ''"));
    assert.ok(accessToken);

    await page.click('#logout');
    const bye = await landedOn(page, `${rp.origin}/bye`);
    assert.equal(bye.origin, rp.origin);
    await screenshot(page, 'rp-spa-logged-out');

    const response = await fetch(new URL('/oidc/v1/userinfo', world.issuer), { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(response.status, 401, 'the access token of the ended session is refused');
    assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });
});
