import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as client from 'openid-client';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { apiClient } from './api.ts';
import { freePort, readAdminPat, ROOT, testServer, type TestServer, type TestServerOptions } from './server.ts';

// Browser sign-in tests: the real server in this process, Debian's Chromium
// driven by playwright-core (never a downloaded browser), a local relying
// party that receives the redirects, and API helpers to set the scene.

export const ARTIFACTS = join(ROOT, 'artifacts');

/**
 * Reason to skip the browser tests on a machine without Debian's Chromium
 * (`apt-get install chromium`); never under CI, which installs it, so a
 * missing browser there fails loudly instead.
 */
export const needsChromium =
  existsSync('/usr/bin/chromium') || process.env.CI === 'true' ? false : 'Debian chromium is not installed (apt-get install chromium)';

/** Debian's Chromium, headless, with no traffic of its own to the closed network. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Saves a screenshot under artifacts/ (not committed) for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export interface RelyingParty {
  /** http://localhost:PORT — a loopback origin apps may register in devMode. */
  origin: string;
  callback: string;
  loggedOut: string;
  /** Serves `html` at `path` (for the single-page app). */
  serve(path: string, html: string, type?: string): void;
  close(): Promise<void>;
}

/**
 * A relying party's web server: `/cb` and `/bye` answer a small page, so the
 * test reads the redirect from the browser's URL (query or fragment).
 */
export async function startRelyingParty(): Promise<RelyingParty> {
  const port = await freePort();
  const pages = new Map<string, { body: string; type: string }>();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const page = pages.get(path) ?? { body: `<!doctype html><title>${path}</title><p>${path}</p>`, type: 'text/html' };
    res.writeHead(200, { 'content-type': page.type, 'cache-control': 'no-store' });
    res.end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `http://localhost:${port}`;
  return {
    origin,
    callback: `${origin}/cb`,
    loggedOut: `${origin}/bye`,
    serve(path, body, type = 'text/html') {
      pages.set(path, { body, type });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The browser build of oidc-client-ts, to serve to the single-page app. */
export function oidcClientTsBundle(): string {
  return readFileSync(join(ROOT, 'node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js'), 'utf8');
}

export interface AppOptions {
  name?: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  responseTypes?: string[];
  grantTypes?: string[];
  appType?: string;
  authMethodType?: string;
  accessTokenType?: string;
  idTokenUserinfoAssertion?: boolean;
  devMode?: boolean;
}

/** A confidential web app (code + refresh, client_secret_basic) redirecting to this relying party. */
export function confidentialAppFor(rp: RelyingParty): AppOptions {
  return {
    redirectUris: [rp.callback],
    postLogoutRedirectUris: [rp.loggedOut],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
    devMode: true,
  };
}

export interface TestUser {
  userId: string;
  userName: string;
  loginName: string;
  password: string;
}

export interface SignInWorld {
  server: TestServer;
  /** The issuer; the server also answers on localhost, which the browser uses. */
  issuer: string;
  adminPat: string;
  orgId: string;
  projectId: string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  createApp(options: AppOptions): Promise<{ appId: string; clientId: string; clientSecret?: string }>;
  createUser(
    userName: string,
    profile?: { firstName?: string; lastName?: string; email?: string; phone?: string; preferredLanguage?: string },
  ): Promise<TestUser>;
  stop(): Promise<void>;
}

let counter = 0;

/**
 * The server with an org "ACME" (domain acme.example.test) and a project,
 * ready for apps and users. ISSUER is http://localhost:PORT so that apps may
 * use http://localhost redirect URIs in devMode and the browser shares one
 * cookie host with the issuer.
 */
export async function startSignInWorld(env: Record<string, string> = {}, options: Pick<TestServerOptions, 'captureLog'> = {}): Promise<SignInWorld> {
  const port = await freePort();
  const server = await testServer({ ...options, env: { PORT: String(port), ISSUER: `http://localhost:${port}`, ...env } });
  const adminPat = readAdminPat(server.dataDir);
  const asAdmin = apiClient(server.url, adminPat, { strictJson: true });
  const setup = await asAdmin('POST', '/admin/v1/orgs/_setup', {
    body: {
      org: { name: 'ACME', domain: 'acme.example.test' },
      human: { userName: 'owner', profile: { firstName: 'Olive', lastName: 'Owner' }, email: { email: 'owner@acme.example.test' }, password: 'Owner-Passw0rd' },
    },
  });
  assert.equal(setup.status, 200, JSON.stringify(setup.body));
  const orgId: string = setup.body.orgId;
  // Every later call acts in ACME.
  const inOrg = apiClient(server.url, adminPat, { orgId, strictJson: true });
  const api: SignInWorld['api'] = (method, path, body) => inOrg(method, path, { body });
  const project = await api('POST', '/management/v1/projects', { name: 'Shop' });
  assert.equal(project.status, 200, JSON.stringify(project.body));

  return {
    server,
    issuer: server.issuer,
    adminPat,
    orgId,
    projectId: project.body.id,
    api,
    async createApp(options) {
      const response = await api('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
        name: options.name ?? `app ${++counter}`,
        devMode: true,
        ...options,
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    },
    async createUser(userName, profile = {}) {
      const password = `Pw-${userName}-1234`;
      const response = await api('POST', '/management/v1/users/human', {
        userName,
        profile: {
          firstName: profile.firstName ?? userName[0]!.toUpperCase() + userName.slice(1),
          lastName: profile.lastName ?? 'Tester',
          ...(profile.preferredLanguage ? { preferredLanguage: profile.preferredLanguage } : {}),
        },
        email: { email: profile.email ?? `${userName}@acme.example.test`, isEmailVerified: true },
        ...(profile.phone ? { phone: { phone: profile.phone } } : {}),
        password,
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return { userId: response.body.userId, userName, loginName: `${userName}@acme.example.test`, password };
    },
    stop: () => server.stop(),
  };
}

/** Completes the login name and password pages in the browser. */
export async function signIn(page: Page, user: { loginName: string; password: string }): Promise<void> {
  await page.fill('#loginName', user.loginName);
  await page.click('button[type=submit]');
  await page.fill('#password', user.password);
  await page.click('button[type=submit]');
}

/** Waits until the browser lands on `prefix` and returns that URL. */
export async function landedOn(page: Page, prefix: string): Promise<URL> {
  await page.waitForURL((url) => url.href.startsWith(prefix), { timeout: 15_000 });
  return new URL(page.url());
}

export interface CodeLogin {
  tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  /** Where the browser landed: the redirect URI with the code. */
  landed: URL;
}

/**
 * Signs `user` in through the browser as the relying party `rp` would have
 * it: PKCE, state and nonce, then the code redeemed by openid-client.
 */
export async function codeLogin(
  page: Page,
  config: client.Configuration,
  rp: Pick<RelyingParty, 'callback'>,
  user: { loginName: string; password: string },
  scope: string,
  extra: Record<string, string> = {},
): Promise<CodeLogin> {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const expectedNonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: rp.callback,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state: expectedState,
    nonce: expectedNonce,
    ...extra,
  });
  await page.goto(url.href);
  await signIn(page, user);
  const landed = await landedOn(page, rp.callback);
  const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier, expectedState, expectedNonce });
  return { tokens, landed };
}

// ---- the login UI tests

export interface LoginUi<Name extends string = string> {
  world: SignInWorld;
  rp: RelyingParty;
  /** An app redirecting to the relying party's callback. */
  app: { appId: string; clientId: string; clientSecret?: string };
  /** The users asked for, by user name. */
  users: Record<Name, TestUser>;
  /** A page in a new browser context (en-US unless `options` say otherwise); each step fails after 10 s, not 30. */
  freshPage(options?: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }>;
  /** Closes every context `freshPage` opened. */
  closeContexts(): Promise<void>;
  /** Closes the browser and the relying party, and stops the server. */
  stop(): Promise<void>;
}

/**
 * The scene of the login UI tests: the sign-in world, the browser, a relying
 * party, one app redirecting to it, and a user for each entry of `users`
 * (user name: first and last name), created in that order; `env` adds
 * server settings.
 */
export async function startLoginUi<Name extends string>(
  users: Record<Name, { firstName: string; lastName: string }>,
  env: Record<string, string> = {},
): Promise<LoginUi<Name>> {
  const [world, browser, rp] = await Promise.all([startSignInWorld(env), launchBrowser(), startRelyingParty()]);
  const contexts: BrowserContext[] = [];
  const stop = async () => {
    await browser.close();
    await rp.close();
    await world.stop();
  };
  try {
    const app = await world.createApp({ redirectUris: [rp.callback] });
    const created = {} as Record<Name, TestUser>;
    for (const [userName, profile] of Object.entries(users) as Array<[Name, { firstName: string; lastName: string }]>) {
      created[userName] = await world.createUser(userName, profile);
    }
    return {
      world,
      rp,
      app,
      users: created,
      async freshPage(options = {}) {
        const context = await browser.newContext({ locale: 'en-US', ...options });
        contexts.push(context);
        context.setDefaultTimeout(10_000);
        const page = await context.newPage();
        return { context, page };
      },
      async closeContexts() {
        await Promise.all(contexts.splice(0).map((c) => c.close()));
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** openid-client's configuration of a confidential app of `world`: discovery at the issuer (plain http in tests), client_secret_basic. */
export function rpConfig(world: Pick<SignInWorld, 'issuer'>, app: { clientId: string; clientSecret?: string }): Promise<client.Configuration> {
  return client.discovery(new URL(world.issuer), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
    execute: [client.allowInsecureRequests],
  });
}

/**
 * Starts a code flow of `config` in `page` (PKCE, state, nonce, `extra`
 * parameters) and answers `finish`, which waits for the redirect to `rp`
 * and redeems the code with openid-client.
 */
export async function startCodeFlow(page: Page, config: client.Configuration, rp: Pick<RelyingParty, 'callback'>, extra: Record<string, string> = {}) {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedNonce = client.randomNonce();
  const expectedState = extra.state ?? client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: rp.callback,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    nonce: expectedNonce,
    state: expectedState,
    ...extra,
  });
  await page.goto(url.href);
  return async () => client.authorizationCodeGrant(config, await landedOn(page, rp.callback), { pkceCodeVerifier, expectedNonce, expectedState });
}

/** Chromium's virtual authenticator (CDP WebAuthn) in `page`: CTAP2, built in, resident keys, user verification that always succeeds. */
export async function addPasskeyAuthenticator(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}
