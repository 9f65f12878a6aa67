import type Router from '@koa/router';
import type { Context } from 'koa';
import type { EffectivePolicy } from '../../src/domain/policies/kind.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { findUser } from '../../src/storage/users.ts';
import { selfServiceTexts } from '../../src/pages/self-service-i18n.ts';
import { mailVerificationCode, verifyEmailWithCode } from '../../src/commands/email-verification.ts';
import type { SelfServiceDeps } from '../../src/commands/password-codes.ts';
import { CODE_PAGES } from '../../src/commands/verification-codes.ts';
import { INTERACTION_PATH } from '../../src/engine/routes.ts';
import { form, type InteractionKit, type Loaded, render, renderMessage, saveResult, throttled } from '../context.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { codeDonePage, type CodePageContext, type CodeFormValues, mailVerificationPage } from '../views/self-service.ts';
import { codeOf, type CodePageKit, refusalText } from './code-page-kit.ts';

/** The login the verification page holds up: its user, under a key of its own (no other step takes it for a pending second factor). */
const WAITING = 'waitingForEmail';
export interface Waiting {
  accountId: string;
  loginName: string;
  /** The first factor was a passkey, which is both factors at once: after the email the login ends, with no second factor to ask. */
  passkey?: boolean;
}

/** What follows a verified email inside a login: the rest of the steps after the first factor. */
export type AfterFirstFactorStep = (ctx: Context, loaded: Loaded, user: Waiting) => Promise<void>;

export interface MailVerificationStep {
  /** Whether the login must stop at the page: the login policy of the user's org asks for a verified email, and it is not. */
  required(accountId: string): Promise<boolean>;
  /** Stops the login at the page; `send`: mails a code first (a registration has just sent one); `extra` joins the interaction's result. */
  begin(ctx: Context, loaded: Loaded, user: Waiting, send?: boolean, extra?: Record<string, unknown>): Promise<void>;
  /** The page's POST inside a login: the code, then `proceed`. */
  post(proceed: AfterFirstFactorStep): (ctx: Context) => Promise<void>;
  /** "Send a new code". */
  resend(ctx: Context): Promise<void>;
}

type Deps = Pick<SelfServiceDeps, 'db' | 'codes' | 'announce'> & { policies: EffectivePolicy; throttle?: AuthThrottle };

/**
 * Email verification (docs/self-service.md) as a step of the login: with the login
 * policy's `requireEmailVerification`, a user whose address is not verified
 * stops here after the password until a code from the mail is entered.
 */
export function mailVerificationStep(kit: InteractionKit, deps: Deps): MailVerificationStep {
  async function required(accountId: string): Promise<boolean> {
    const user = await findUser(deps.db, accountId);
    return Boolean(user && !user.email_verified && (await deps.policies(LOGIN_POLICY, user.org_id)).requireEmailVerification);
  }

  async function show(ctx: Context, loaded: Loaded, waiting: Waiting, values: CodeFormValues, status = 200): Promise<void> {
    const { page } = loaded;
    const s = selfServiceTexts(page.lang);
    const user = await findUser(deps.db, waiting.accountId);
    const c: CodePageContext = { lang: page.lang, t: page.t, s, action: `${page.action}/mail/verification`, csrf: page.csrf };
    const lead = s.verifySentTo.replace('{email}', user?.email ?? '');
    render(ctx, mailVerificationPage(c, lead, { ...values, resendAction: `${page.action}/mail/verification/resend` }), status);
  }

  async function begin(ctx: Context, loaded: Loaded, user: Waiting, send = true, extra: Record<string, unknown> = {}): Promise<void> {
    await saveResult(loaded, { ...extra, [WAITING]: user });
    if (send) await mailVerificationCode(deps, user.accountId);
    await show(ctx, loaded, user, {});
  }

  /** The waiting login, or undefined after rendering the "session expired" page. */
  async function waiting(ctx: Context): Promise<{ loaded: Loaded; user: Waiting } | undefined> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return undefined;
    const user = loaded.interaction.result?.[WAITING] as Waiting | undefined;
    if (!user) return void renderMessage(ctx, loaded, 'sessionExpired', 400);
    return { loaded, user };
  }

  const post = (proceed: AfterFirstFactorStep) => async (ctx: Context) => {
    const found = await waiting(ctx);
    if (!found) return;
    const { loaded, user } = found;
    if (throttled(ctx, loaded.page, deps.throttle)) return;
    const code = codeOf({ code: typeof form(ctx).code === 'string' ? (form(ctx).code as string) : '' });
    const result = code ? (await verifyEmailWithCode(deps, user.accountId, code)).result : 'malformed';
    if (result === 'ok') {
      await saveResult(loaded, { [WAITING]: undefined });
      return proceed(ctx, loaded, user);
    }
    await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
    await show(ctx, loaded, user, { error: refusalText(loaded.page.t, selfServiceTexts(loaded.page.lang), result) }, 400);
  };

  async function resend(ctx: Context): Promise<void> {
    const found = await waiting(ctx);
    if (!found) return;
    await mailVerificationCode(deps, found.user.accountId);
    await show(ctx, found.loaded, found.user, { notice: selfServiceTexts(found.loaded.page.lang).codeSentAgain });
  }

  return { required, begin, post, resend };
}

/**
 * `/ui/login/mail/verification` opened from the mail's link (outside any
 * login): the code pre-filled, the user named by the link's `userID`.
 */
export function mailVerificationLinkRoutes(router: Router, pages: CodePageKit, deps: Pick<SelfServiceDeps, 'db' | 'codes' | 'announce'>): void {
  const path = CODE_PAGES.email;
  // The router's prefix is the login UI's path.
  const local = path.slice(INTERACTION_PATH.length);
  const again = (ctx: Context, c: CodePageContext, values: CodeFormValues, status = 200) =>
    render(ctx, mailVerificationPage(c, c.s.verifyLead, values), status);

  router.get(local, (ctx) => {
    again(ctx, pages.context(ctx, path), pages.values(ctx.query));
  });
  router.post(local, async (ctx) => {
    const c = pages.posted(ctx, path);
    if (!c || pages.throttled(ctx, c)) return;
    const values = pages.values(form(ctx));
    const code = codeOf(values);
    const result = code && values.userId ? (await verifyEmailWithCode(deps, values.userId, code)).result : code ? 'wrong' : 'malformed';
    if (result === 'ok') return render(ctx, codeDonePage(c, c.s.verifyTitle, c.s.verifyDone, pages.continueUrl(values.authRequestId)));
    await pages.failed(ctx);
    again(ctx, c, { ...values, error: refusalText(c.t, c.s, result) }, 400);
  });
}
