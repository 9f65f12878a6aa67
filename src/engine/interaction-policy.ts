import Provider, { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { liveBrowserAccounts, readBrowserAccounts } from './browser-accounts.ts';

const { base, Prompt, Check } = interactionPolicy;

/**
 * The engine's login and consent prompts, plus the two prompts of
 * docs/oidc.md the engine lacks: `create` (the registration form straight
 * away) and `select_account` (the account picker: asked for, or when no
 * prompt is given and the browser holds more than one signed-in user). A
 * session whose user can no longer sign in (locked, inactive, removed:
 * findAccount finds no account) asks for a login again; the engine itself
 * only looks at the session's account id, and would go on to the consent
 * checks without an account. A request for acr_values=mfa asks again when
 * the session's login had no second factor.
 */
export function interactionPolicyFor(): interactionPolicy.Prompt[] {
  const policy = base();
  policy
    .get('login')!
    .checks.add(
      new Check('account_unavailable', 'the signed-in user can no longer sign in', 'login_required', (ctx: KoaContextWithOIDC) =>
        ctx.oidc.session?.accountId && !ctx.oidc.account ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
      ),
      0,
    );
  // acr_values=mfa (docs/oidc.md): a session signed in without a second factor signs in again, with one.
  policy.get('login')!.checks.add(
    new Check('mfa_required', 'a second factor is required', 'login_required', (ctx: KoaContextWithOIDC) => {
      const asked = String(ctx.oidc.params?.acr_values ?? '')
        .split(' ')
        .includes('mfa');
      return asked && ctx.oidc.session?.accountId && ctx.oidc.session.acr !== 'mfa' ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
    }),
  );
  policy.add(
    new Prompt(
      { name: 'select_account', requestable: true },
      new Check('multiple_sessions', 'End-User must choose one of the signed-in accounts', 'account_selection_required', async (ctx: KoaContextWithOIDC) => {
        if (ctx.oidc.params?.prompt !== undefined || ctx.oidc.result?.select_account || ctx.oidc.result?.login) return Check.NO_NEED_TO_PROMPT;
        const live = await liveBrowserAccounts(ctx.oidc.provider as Provider, readBrowserAccounts(ctx.cookies));
        return live.length > 1 ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
      }),
    ),
    0,
  );
  policy.add(new Prompt({ name: 'create', requestable: true }), 0);
  return policy;
}
