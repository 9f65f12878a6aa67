import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { digestsEqual, hmacKey } from '../../src/security/secrets.ts';

/** How long the fresh sign-in in front of the security page lasts. */
const FRESH_SECONDS = 600;
const COOKIE = '_security';

/**
 * The security page's state in a signed cookie: a random id (the CSRF
 * tokens are bound to it), the user whose password was right and who still
 * owes a second factor (`pending`), or the signed-in user, and when it ends.
 */
export interface SecurityState {
  id: string;
  pending?: string;
  user?: string;
  exp: number;
}

export interface FreshSignIn {
  read(ctx: Context): SecurityState | undefined;
  write(ctx: Context, state: SecurityState): void;
  clear(ctx: Context): void;
  /** A new id on every change of who is signed in: tokens of before do not carry over. */
  fresh(): SecurityState;
  csrfOf(state: SecurityState): string;
  csrfValid(state: SecurityState, token: string): boolean;
}

/** The cookie, signed with `key`, scoped to `path`; Secure when the issuer is https. */
export function freshSignIn(key: Buffer, path: string, secure: boolean): FreshSignIn {
  const mac = (payload: string) => createHmac('sha256', hmacKey(key)).update(payload).digest('base64url');

  function read(ctx: Context): SecurityState | undefined {
    const raw = ctx.cookies.get(COOKIE) ?? '';
    const [payload = '', signature = ''] = raw.split('.');
    if (!payload || !digestsEqual(Buffer.from(mac(payload)), Buffer.from(signature))) return undefined;
    try {
      const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SecurityState;
      return typeof state.id === 'string' && typeof state.exp === 'number' && state.exp > Date.now() / 1000 ? state : undefined;
    } catch {
      return undefined;
    }
  }

  function write(ctx: Context, state: SecurityState): void {
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
    ctx.cookies.set(COOKIE, `${payload}.${mac(payload)}`, { httpOnly: true, sameSite: 'strict', secure, path, overwrite: true });
  }

  return {
    read,
    write,
    clear: (ctx) => ctx.cookies.set(COOKIE, null, { path }),
    fresh: () => ({ id: randomBytes(16).toString('base64url'), exp: Math.floor(Date.now() / 1000) + FRESH_SECONDS }),
    csrfOf: (state) => mac(`csrf:${state.id}`),
    csrfValid: (state, token) => digestsEqual(Buffer.from(mac(`csrf:${state.id}`)), Buffer.from(token)),
  };
}
