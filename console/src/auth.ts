import type { ConsoleConfig } from './config.ts';

// Sign-in as a public client: authorization code with PKCE (RFC 7636, S256)
// and state (RFC 6749 10.12). The tokens live in sessionStorage: this tab
// only, gone when it closes.

const PENDING = 'portcullis.console.pending';
const SESSION = 'portcullis.console.session';
export const API_SCOPE = 'urn:service:iam:api';

export interface Session {
  accessToken: string;
  idToken: string;
  expiresAt: number;
  /** Display name from the ID token (shown only, never trusted for access). */
  name: string;
  /** The user's own org, where the API acts without an x-service-orgid header. */
  orgId: string;
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

export async function startSignIn(config: ConsoleConfig, returnTo: string): Promise<void> {
  const verifier = randomString();
  const state = randomString();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo }));
  const params = new URLSearchParams({
    client_id: config.clientId,
    response_type: 'code',
    redirect_uri: config.redirectUri,
    scope: `openid profile ${API_SCOPE}`,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  });
  location.assign(`${config.authorizationEndpoint}?${params}`);
}

function claimsOf(idToken: string): Record<string, unknown> {
  try {
    const payload = idToken.split('.')[1] ?? '';
    const json = decodeURIComponent(
      Array.from(atob(payload.replace(/-/g, '+').replace(/_/g, '/')), (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''),
    );
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** On the callback page: checks state, redeems the code, keeps the tokens. Returns where to go next. */
export async function completeSignIn(config: ConsoleConfig, search: URLSearchParams): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING);
  const error = search.get('error');
  if (error) throw new Error(search.get('error_description') ?? error);
  if (!pending || search.get('state') !== pending.state) throw new Error('the sign-in answer does not belong to this tab');
  const response = await fetch(config.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: search.get('code') ?? '',
      redirect_uri: config.redirectUri,
      client_id: config.clientId,
      code_verifier: pending.verifier,
    }),
  });
  const tokens = (await response.json()) as { access_token?: string; id_token?: string; expires_in?: number; error_description?: string; error?: string };
  if (!response.ok || !tokens.access_token) throw new Error(tokens.error_description ?? tokens.error ?? `token endpoint answered ${response.status}`);
  const claims = claimsOf(tokens.id_token ?? '');
  const session: Session = {
    accessToken: tokens.access_token,
    idToken: tokens.id_token ?? '',
    expiresAt: Date.now() + (tokens.expires_in ?? 300) * 1000,
    name: String(claims.name ?? claims.preferred_username ?? claims.sub ?? ''),
    orgId: String(claims['urn:service:iam:user:resourceowner:id'] ?? ''),
  };
  sessionStorage.setItem(SESSION, JSON.stringify(session));
  return pending.returnTo.startsWith(config.base) ? pending.returnTo : `${config.base}/`;
}

export function currentSession(): Session | undefined {
  const session = JSON.parse(sessionStorage.getItem(SESSION) ?? 'null') as Session | null;
  return session && session.expiresAt > Date.now() + 5000 ? session : undefined;
}

/** The signed-in user's id (the ID token's `sub`): to warn before users change their own roles, never to grant anything. */
export function signedInUserId(): string | undefined {
  const sub = claimsOf(currentSession()?.idToken ?? '').sub;
  return typeof sub === 'string' ? sub : undefined;
}

export function forgetSession(): void {
  sessionStorage.removeItem(SESSION);
}

export function signOut(config: ConsoleConfig, session: Session): void {
  forgetSession();
  const params = new URLSearchParams({
    client_id: config.clientId,
    post_logout_redirect_uri: config.postLogoutRedirectUri,
    ...(session.idToken ? { id_token_hint: session.idToken } : {}),
  });
  location.assign(`${config.endSessionEndpoint}?${params}`);
}
