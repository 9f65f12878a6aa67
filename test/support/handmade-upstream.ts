import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * Small upstreams written by hand for the tests (docs/idps.md), on loopback
 * ports: an OpenID provider that answers its authorization request at once
 * and can mint a tampered ID token or misbehave (`tamper`), and a
 * GitHub-style OAuth server (authorize, token and user endpoints, no ID token).
 */
export type Tamper =
  | 'none'
  | 'nonce'
  | 'audience'
  | 'signature'
  | 'garbage'
  /** The token endpoint answers after `slowMs`. */
  | 'slow'
  /** The token endpoint answers 10 MB. */
  | 'huge'
  /** Discovery answers an HTML page. */
  | 'html-discovery';

export interface HandmadeUpstream {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** How the next ID tokens are tampered with. */
  tamper: Tamper;
  /** The GitHub-style user endpoint's answer; the OpenID provider's ID token claims besides the standard ones. */
  user: Record<string, unknown>;
  /** Requests received, by path. */
  hits: Record<string, number>;
  /** How long `slow` keeps the token endpoint's answer back. */
  slowMs: number;
  stop(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function json(res: import('node:http').ServerResponse, status: number, body: unknown, cacheControl = 'no-store'): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': cacheControl });
  res.end(JSON.stringify(body));
}

function stopper(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

/** An OpenID provider whose authorization endpoint signs `sub` in without a page, and whose ID tokens can be tampered with. */
export async function startHandmadeOp(sub: string): Promise<HandmadeUpstream> {
  const good = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const publicJwk = { ...(await exportJWK(good.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { nonce: string }>();
  const server = createServer();
  const issuer = await listen(server);
  const upstream: HandmadeUpstream = {
    issuer,
    clientId: 'handmade',
    clientSecret: 'handmade-secret',
    tamper: 'none',
    user: {},
    hits: {},
    slowMs: 6_000,
    stop: stopper(server),
  };
  server.on('request', async (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    upstream.hits[url.pathname] = (upstream.hits[url.pathname] ?? 0) + 1;
    if (url.pathname === '/.well-known/openid-configuration') {
      if (upstream.tamper === 'html-discovery') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<!doctype html><title>Maintenance</title><p>Back soon');
      }
      return json(
        res,
        200,
        {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        },
        // Like a real issuer's: kept for an hour, so a slow test run sees no refetch.
        'public, max-age=3600',
      );
    }
    if (url.pathname === '/jwks') return json(res, 200, { keys: [publicJwk] }, 'public, max-age=3600');
    if (url.pathname === '/authorize') {
      const code = `code-${codes.size + 1}`;
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(303, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const code = codes.get(new URLSearchParams(body).get('code') ?? '');
      if (!code) return json(res, 400, { error: 'invalid_grant' });
      if (upstream.tamper === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('<html>not what you asked for');
      }
      if (upstream.tamper === 'huge') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        for (let i = 0; i < 10 && !res.destroyed; i++) res.write(chunk);
        return res.end();
      }
      if (upstream.tamper === 'slow') {
        // Held back until then, or until our side gives up and closes the connection.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, upstream.slowMs);
          res.on('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (res.destroyed) return;
      }
      const idToken = await new SignJWT({
        nonce: upstream.tamper === 'nonce' ? 'another-nonce' : code.nonce,
        email: `${sub}@handmade.example`,
        email_verified: true,
        preferred_username: sub,
        ...upstream.user,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setSubject(sub)
        .setAudience(upstream.tamper === 'audience' ? 'someone-else' : upstream.clientId)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(upstream.tamper === 'signature' ? other.privateKey : good.privateKey);
      return json(res, 200, { access_token: 'handmade-access', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    json(res, 404, { error: 'not_found' });
  });
  return upstream;
}

/** A GitHub-style OAuth 2.0 server: `/login/oauth/authorize`, `/login/oauth/access_token`, `/user`. */
export async function startGithubStyle(user: Record<string, unknown>): Promise<HandmadeUpstream> {
  const codes = new Set<string>();
  const server = createServer();
  const issuer = await listen(server);
  const upstream: HandmadeUpstream = {
    issuer,
    clientId: 'forge-app',
    clientSecret: 'forge-secret',
    tamper: 'none',
    user,
    hits: {},
    slowMs: 0,
    stop: stopper(server),
  };
  server.on('request', async (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/login/oauth/authorize') {
      const code = `gh-${codes.size + 1}`;
      codes.add(code);
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === '/login/oauth/access_token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      if (!codes.delete(form.get('code') ?? '') || form.get('client_secret') !== upstream.clientSecret)
        return json(res, 400, { error: 'bad_verification_code' });
      return json(res, 200, { access_token: 'gho_handmade', token_type: 'bearer', scope: 'read:user' });
    }
    if (url.pathname === '/user') {
      if (req.headers.authorization !== 'Bearer gho_handmade') return json(res, 401, { message: 'Bad credentials' });
      return json(res, 200, upstream.user);
    }
    json(res, 404, { message: 'Not Found' });
  });
  return upstream;
}
