import { createHash, randomBytes } from 'node:crypto';

// A browser-less authorization code flow over plain HTTP, as a browser would
// do it: GET /oauth/v2/authorize → 303 to the login page → login name →
// password → 303s through /oauth/v2/authorize/{uid} (and through any
// further interaction the engine asks for) until the redirect_uri carries
// the code → POST /oauth/v2/token. One cookie jar per flow: every flow is a
// new browser with a new login.

export interface CodeFlowClient {
  /** http://127.0.0.1:PORT of the server (requests go here). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scope: string;
}

export interface CodeFlowUser {
  loginName: string;
  password: string;
}

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  token_type: string;
  expires_in?: number;
  scope?: string;
}

export class FlowError extends Error {}

/** RFC 6749 2.3.1: client_id and secret are form-encoded before Basic. */
export function basicAuth(clientId: string, secret: string): string {
  const enc = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

interface Cookie {
  value: string;
  path: string;
}

/** Just enough of a cookie jar for one host: names, paths, deletion. */
class CookieJar {
  private readonly cookies = new Map<string, Cookie>();

  store(setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let path = '/';
      let expired = value === '';
      for (const attribute of attributes) {
        const [key = '', val = ''] = attribute.split('=');
        const k = key.trim().toLowerCase();
        if (k === 'path') path = val.trim() || '/';
        else if (k === 'max-age' && Number(val) <= 0) expired = true;
        else if (k === 'expires' && Date.parse(val.trim()) <= Date.now()) expired = true;
      }
      const key = `${name}\u0000${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { value, path });
    }
  }

  header(pathname: string): string | undefined {
    const pairs: string[] = [];
    for (const [key, cookie] of this.cookies) {
      const path = cookie.path;
      if (pathname === path || pathname.startsWith(path.endsWith('/') ? path : `${path}/`)) pairs.push(`${key.split('\u0000')[0]}=${cookie.value}`);
    }
    return pairs.length ? pairs.join('; ') : undefined;
  }
}

interface Answer {
  status: number;
  location?: URL;
  body: string;
  url: URL;
}

const FORM = 'application/x-www-form-urlencoded';
const MAX_HOPS = 20;

function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]*)"/.exec(html);
  if (!match) throw new FlowError(`no csrf field on the login page: ${html.slice(0, 300)}`);
  return match[1]!
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

/**
 * Runs one complete flow and answers the token response. Throws FlowError
 * with what went wrong (the status and the start of the body) otherwise.
 */
export async function runCodeFlow(client: CodeFlowClient, user: CodeFlowUser, signal?: AbortSignal): Promise<TokenSet> {
  const jar = new CookieJar();
  const base = new URL(client.baseUrl);

  const send = async (url: URL, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> => {
    if (url.origin !== base.origin) throw new FlowError(`refusing to leave the server: ${url.href}`);
    const headers: Record<string, string> = { accept: 'text/html,application/json', ...init.headers };
    const cookie = jar.header(url.pathname);
    if (cookie) headers.cookie = cookie;
    if (init.body !== undefined && !headers['content-type']) headers['content-type'] = FORM;
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual', signal });
    jar.store(response.headers.getSetCookie());
    const body = await response.text();
    const location = response.headers.get('location');
    return { status: response.status, body, url, location: location ? new URL(location, url) : undefined };
  };

  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(12).toString('base64url');
  const authorize = new URL('/oauth/v2/authorize', base);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: client.scope,
    state,
    nonce: randomBytes(12).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();

  let answer = await send(authorize);
  let code: string | undefined;
  let loggedIn = false;
  for (let hop = 0; hop < MAX_HOPS && !code; hop++) {
    if (answer.status >= 300 && answer.status < 400 && answer.location) {
      const next = answer.location;
      if (next.href.startsWith(client.redirectUri)) {
        const error = next.searchParams.get('error');
        if (error) throw new FlowError(`redirect_uri got error=${error}: ${next.searchParams.get('error_description') ?? ''}`);
        if (next.searchParams.get('state') !== state) throw new FlowError('state mismatch at the redirect_uri');
        code = next.searchParams.get('code') ?? undefined;
        if (!code) throw new FlowError(`redirect_uri without a code: ${next.href}`);
        break;
      }
      answer = await send(next);
      continue;
    }
    // A login page: login name, then password (which answers a 303 back to the engine).
    if (answer.status === 200 && answer.url.pathname.startsWith('/ui/login/') && !loggedIn && answer.body.includes('name="loginName"')) {
      const page = answer.url.pathname.replace(/\/$/, '');
      const csrf = csrfOf(answer.body);
      const named = await send(new URL(`${page}/login-name`, base), {
        method: 'POST',
        body: new URLSearchParams({ csrf, loginName: user.loginName }).toString(),
      });
      if (named.status !== 200 || !named.body.includes('name="password"'))
        throw new FlowError(`login-name step answered ${named.status}: ${named.body.slice(0, 300)}`);
      answer = await send(new URL(`${page}/password`, base), {
        method: 'POST',
        body: new URLSearchParams({ csrf: csrfOf(named.body), loginName: user.loginName, password: user.password }).toString(),
      });
      if (answer.status !== 303) throw new FlowError(`password step answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      loggedIn = true;
      continue;
    }
    throw new FlowError(`unexpected ${answer.status} at ${answer.url.pathname}: ${answer.body.slice(0, 300)}`);
  }
  if (!code) throw new FlowError(`no code after ${MAX_HOPS} hops`);

  const token = await fetch(new URL('/oauth/v2/token', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.clientId, client.clientSecret), 'content-type': FORM, accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier }).toString(),
    signal,
  });
  const text = await token.text();
  if (token.status !== 200) throw new FlowError(`token endpoint answered ${token.status}: ${text.slice(0, 300)}`);
  const tokens = JSON.parse(text) as TokenSet;
  if (!tokens.access_token) throw new FlowError(`token response without access_token: ${text.slice(0, 300)}`);
  return tokens;
}
