import type Provider from 'oidc-provider';
import type { EngineRule } from './rule-dispatch.ts';

/**
 * A browser may hold several signed-in users at once. The engine's Session
 * holds one account, so each user keeps an engine Session of their own and
 * this signed cookie lists them: account id → session uid. The engine's
 * `_session` cookie points at the one in use; switching users swaps it.
 */
export const ACCOUNTS_COOKIE = '_accounts';
const MAX_ACCOUNTS = 10;

export interface BrowserAccount {
  accountId: string;
  sessionUid: string;
}

/** What reads and writes cookies with the provider's keys: an engine context. */
export interface CookieJar {
  get(name: string, options?: { signed?: boolean }): string | undefined;
  set(name: string, value: string | null, options?: Record<string, unknown>): unknown;
}

export function readBrowserAccounts(cookies: CookieJar): BrowserAccount[] {
  const raw = cookies.get(ACCOUNTS_COOKIE, { signed: true });
  if (!raw) return [];
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter((e): e is [string, string] => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string')
      .map(([accountId, sessionUid]) => ({ accountId, sessionUid }));
  } catch {
    return [];
  }
}

export function writeBrowserAccounts(cookies: CookieJar, accounts: BrowserAccount[], cookieOptions: Record<string, unknown>): void {
  const value = Buffer.from(JSON.stringify(accounts.slice(0, MAX_ACCOUNTS).map((a) => [a.accountId, a.sessionUid]))).toString('base64url');
  cookies.set(ACCOUNTS_COOKIE, accounts.length ? value : null, { ...cookieOptions, signed: true, path: '/', maxAge: 30 * 86400 * 1000 });
}

/** Puts `account` first (the most recent), replacing an older entry of the same user. */
export function rememberAccount(accounts: BrowserAccount[], account: BrowserAccount): BrowserAccount[] {
  return [account, ...accounts.filter((a) => a.accountId !== account.accountId)];
}

export function forgetAccount(accounts: BrowserAccount[], accountId: string): BrowserAccount[] {
  return accounts.filter((a) => a.accountId !== accountId);
}

export interface LiveAccount extends BrowserAccount {
  /** The engine session's id (the value of the `_session` cookie). */
  sessionId: string;
  authTime?: number;
}

/** The listed users whose engine session still exists and still belongs to them. */
export async function liveBrowserAccounts(provider: Provider, accounts: BrowserAccount[]): Promise<LiveAccount[]> {
  const sessions = await Promise.all(accounts.map((a) => provider.Session.findByUid(a.sessionUid)));
  return accounts.flatMap((account, i) => {
    const session = sessions[i] as unknown as { accountId?: string; jti: string; loginTs?: number } | undefined;
    return session && session.accountId === account.accountId ? [{ ...account, sessionId: session.jti, authTime: session.loginTs }] : [];
  });
}

type BrowserSession = { accountId?: string; uid: string; destroyed?: boolean } | undefined;

/** Keeps the browser's list of signed-in users current: a user who signed in (authorization, resume) joins it. */
export function rememberSignedInAccount(cookieOptions: Record<string, unknown>): EngineRule {
  return async (ctx, next) => {
    await next();
    const session = ctx.oidc?.session as unknown as BrowserSession;
    if (!session?.accountId || session.destroyed) return;
    const accounts = readBrowserAccounts(ctx.cookies);
    if (accounts[0]?.accountId !== session.accountId || accounts[0]?.sessionUid !== session.uid) {
      writeBrowserAccounts(ctx.cookies, rememberAccount(accounts, { accountId: session.accountId, sessionUid: session.uid }), cookieOptions);
    }
  };
}

/** A user who signed out (the logout confirmation) leaves the browser's list of signed-in users. */
export function forgetSignedOutAccount(cookieOptions: Record<string, unknown>): EngineRule {
  return async (ctx, next) => {
    await next();
    const session = ctx.oidc?.session as unknown as BrowserSession;
    if (session?.destroyed && session.accountId)
      writeBrowserAccounts(ctx.cookies, forgetAccount(readBrowserAccounts(ctx.cookies), session.accountId), cookieOptions);
  };
}
