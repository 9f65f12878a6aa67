import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';

/**
 * A second, bare OpenID provider (the `oidc-provider` package with its
 * development login pages) on a loopback port: the upstream of our
 * `generic_oidc` kind in the tests. Any login name signs in; its claims are
 * what the test put into `accounts` under that name.
 */
export interface UpstreamOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Claims by login name (`sub` is the login name). */
  accounts: Map<string, Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startUpstreamOp(redirectUri: string, options: { clientId?: string } = {}): Promise<UpstreamOp> {
  const accounts = new Map<string, Record<string, unknown>>();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'upstream-1', alg: 'RS256', use: 'sig' };
  const clientId = options.clientId ?? 'portcullis';
  const clientSecret = 'upstream-client-secret-4711';
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['upstream cookie key'] },
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username', 'locale'],
      email: ['email', 'email_verified'],
    },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...accounts.get(sub) }) }),
    features: { devInteractions: { enabled: true } },
    // Our login is the upstream's first-party app: no consent page.
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId });
      grant.addOIDCScope('openid profile email');
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
  });
  // The engine logs a warning for devInteractions; the test needs nothing of it.
  provider.on('server_error', () => {});
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The upstream's development login page, as `login` (any password). */
export async function upstreamSignIn(page: Page, login: string): Promise<void> {
  await page.waitForSelector('input[name=login]', { timeout: 15_000 });
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any password');
  await page.click('button[type=submit]');
}
