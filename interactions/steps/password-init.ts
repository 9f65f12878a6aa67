import type Router from '@koa/router';
import type { Context } from 'koa';
import { requestPasswordReset, setPasswordWithCode, type CodeHolder, type SelfServiceDeps } from '../../src/commands/password-codes.ts';
import { CODE_PAGES } from '../../src/commands/verification-codes.ts';
import { INTERACTION_PATH } from '../../src/engine/routes.ts';
import { passwordPolicyText } from '../../src/pages/password-rules.ts';
import { form, type InteractionKit, render, text } from '../context.ts';
import { codeDonePage, type CodeFormValues, type CodePageContext, codePasswordPage } from '../views/self-service.ts';
import { codeOf, type CodePageKit, refusalText } from './code-page-kit.ts';

/**
 * "Forgot password?" on the password page (`POST /ui/login/{uid}/password/reset`):
 * a reset code mailed to the user the login name means, if any, then the
 * reset page, which reads the same whether or not it does.
 */
export function forgotPasswordStep(kit: InteractionKit, deps: Pick<SelfServiceDeps, 'db' | 'codes'>): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const loginName = text(form(ctx).loginName, 500).trim();
    if (loginName) await requestPasswordReset(deps, loginName);
    const query = new URLSearchParams({ loginName, authRequestID: loaded.interaction.uid });
    ctx.status = 303;
    ctx.redirect(`${CODE_PAGES.reset}?${query}`);
  };
}

/**
 * The pages that set a password with a code (docs/self-service.md):
 * `/ui/login/user/init` (an invitation's) and `/ui/login/password/init` (a
 * reset's). Each takes the code and the new password twice; the link
 * pre-fills the code and names the user (`userID`), "Forgot password?"
 * names the login name instead.
 */
export function passwordCodeRoutes(router: Router, pages: CodePageKit, deps: SelfServiceDeps, purpose: 'init' | 'reset'): void {
  const path = CODE_PAGES[purpose];
  // The router's prefix is the login UI's path.
  const local = path.slice(INTERACTION_PATH.length);
  const leadOf = (c: CodePageContext, values: CodeFormValues) =>
    purpose === 'init' ? c.s.initLead : values.loginName && !values.userId ? c.s.resetSentLead : c.s.resetLinkLead;
  const show = (ctx: Context, c: CodePageContext, values: CodeFormValues, status = 200) =>
    render(ctx, codePasswordPage(c, purpose, leadOf(c, values), values), status);

  router.get(local, (ctx) => {
    const c = pages.context(ctx, path);
    show(ctx, c, pages.values(ctx.query));
  });

  router.post(local, async (ctx) => {
    const c = pages.posted(ctx, path);
    if (!c || pages.throttled(ctx, c)) return;
    const values = pages.values(form(ctx));
    const password = text(form(ctx).password);
    if (!password) return show(ctx, c, { ...values, error: c.t.fieldRequired }, 400);
    if (password !== text(form(ctx).passwordRepeat)) return show(ctx, c, { ...values, error: c.t.passwordsDiffer }, 400);
    const code = codeOf(values);
    const holder: CodeHolder | undefined = values.userId ? { userId: values.userId } : values.loginName ? { loginName: values.loginName } : undefined;
    const outcome = code
      ? holder
        ? await setPasswordWithCode(deps, purpose, holder, code, password)
        : { result: 'wrong' as const }
      : { result: 'malformed' as const };
    if (outcome.result === 'ok') {
      const title = purpose === 'init' ? c.s.initTitle : c.s.resetTitle;
      return render(ctx, codeDonePage(c, title, purpose === 'init' ? c.s.initDone : c.s.resetDone, pages.continueUrl(values.authRequestId)));
    }
    if (outcome.result === 'password')
      return show(ctx, c, { ...values, error: c.s.passwordRejected.replace('{reason}', passwordPolicyText(c.t, password, outcome.policy) ?? '') }, 400);
    await pages.failed(ctx);
    show(ctx, c, { ...values, error: refusalText(c.t, c.s, outcome.result) }, 400);
  });
}
