import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { digestsEqual, hmacKey } from '../../src/security/secrets.ts';
import { INTERACTION_PATH } from '../../src/engine/routes.ts';
import { CATALOGUES, chooseLanguage, type Messages } from '../../src/pages/i18n.ts';
import { messagePage } from '../../src/pages/messages.ts';
import { type SelfServiceMessages, selfServiceTexts } from '../../src/pages/self-service-i18n.ts';
import { normaliseCode } from '../../src/domain/verification-codes.ts';
import { form, render, text, throttled } from '../context.ts';
import type { CodeFormValues, CodePageContext } from '../views/self-service.ts';

// What the pages a mail's link opens share (docs/self-service.md): they stand
// outside any login, so their forms carry a CSRF token bound to a random
// cookie of their own (SameSite=Lax: a cross-site page can send neither).

const COOKIE = '_codeform';
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Why a code was not taken, as the page names it. */
export type CodeRefusal = 'malformed' | 'wrong' | 'expired' | 'used' | 'locked';

export interface CodePageKit {
  /** The page context of a GET; sets the form cookie when the browser has none. */
  context(ctx: Context, action: string): CodePageContext;
  /** The context of a POST whose CSRF token is valid, or undefined after rendering the "form expired" page. */
  posted(ctx: Context, action: string): CodePageContext | undefined;
  /** The 429 page when the address is past the failure limit: true when it rendered it. */
  throttled(ctx: Context, c: CodePageContext): boolean;
  /** A refused code counts against the client address (docs/security.md). */
  failed(ctx: Context): Promise<void>;
  /** The form's carried fields and code, from the query (GET) or the form (POST). */
  values(input: Record<string, unknown>): CodeFormValues;
  /** The way back into the login that led here, if it named one. */
  continueUrl(authRequestId: string | undefined): string | undefined;
}

const REFUSALS = { malformed: 'codeMalformed', wrong: 'codeWrong', expired: 'codeExpired', used: 'codeUsed' } as const;

/** What the page says of a refused code. */
export function refusalText(t: Messages, s: SelfServiceMessages, refusal: CodeRefusal): string {
  return refusal === 'locked' ? t.accountLocked : s[REFUSALS[refusal]];
}

export function codePageKit(key: Buffer, secure: boolean, throttle: AuthThrottle | undefined): CodePageKit {
  const tokenOf = (nonce: string) => createHmac('sha256', hmacKey(key)).update(`code-form:${nonce}`).digest('base64url');

  function pageOf(ctx: Context, action: string, nonce: string): CodePageContext {
    const lang = chooseLanguage(undefined, ctx.get('accept-language'));
    return { lang, t: CATALOGUES[lang]!, s: selfServiceTexts(lang), action, csrf: tokenOf(nonce) };
  }

  function context(ctx: Context, action: string): CodePageContext {
    let nonce = ctx.cookies.get(COOKIE);
    if (!nonce || !ID.test(nonce)) {
      nonce = randomBytes(16).toString('base64url');
      ctx.cookies.set(COOKIE, nonce, { httpOnly: true, sameSite: 'lax', secure, path: INTERACTION_PATH, overwrite: true });
    }
    return pageOf(ctx, action, nonce);
  }

  function posted(ctx: Context, action: string): CodePageContext | undefined {
    const nonce = ctx.cookies.get(COOKIE) ?? '';
    const c = pageOf(ctx, action, nonce);
    if (ID.test(nonce) && digestsEqual(Buffer.from(c.csrf), Buffer.from(text(form(ctx).csrf, 200)))) return c;
    render(ctx, messagePage(c.lang, c.t, c.t.formExpired), 403);
    return undefined;
  }

  function values(input: Record<string, unknown>): CodeFormValues {
    const userId = text(input.userID, 100);
    const authRequestId = text(input.authRequestID, 100);
    const loginName = text(input.loginName, 500).trim();
    return {
      ...(ID.test(userId) ? { userId } : {}),
      ...(ID.test(authRequestId) ? { authRequestId } : {}),
      ...(loginName ? { loginName } : {}),
      code: text(input.code, 64).trim(),
    };
  }

  return {
    context,
    posted,
    throttled: (ctx, c) => throttled(ctx, c, throttle),
    failed: async (ctx) => {
      await throttle?.failed(throttle.addressOf(ctx.req));
    },
    values,
    continueUrl: (authRequestId) => (authRequestId ? `${INTERACTION_PATH}/${authRequestId}` : undefined),
  };
}

/** The code as its digest was made, or undefined for what cannot be one of ours. */
export function codeOf(values: CodeFormValues): string | undefined {
  return normaliseCode(values.code ?? '');
}
