import Provider, { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { liveBrowserAccounts, readBrowserAccounts } from './browser-accounts.ts';
import { secondFactorMissing, type ForcedMfa } from './second-factor-rule.ts';

const { base, Prompt, Check } = interactionPolicy;

/** Why the login prompt asks a signed-in user again: their session lacks the second factor now required. */
export const SECOND_FACTOR_REASON = 'second_factor_required';

/** Prompt values that decide the page themselves: the account picker is not shown on top of them. */
const PROMPTS_OF_THEIR_OWN = ['login', 'select_account', 'create'];

/**
 * The engine's login and consent prompts, plus the two prompts of
 * docs/oidc.md the engine lacks: `create` (the registration form straight
 * away) and `select_account` (the account picker: asked for, or when the
 * browser holds more than one signed-in user and the request names none
 * of them). A session whose user can no longer sign in (locked, inactive,
 * removed: findAccount finds no account) asks for a login again; the engine
 * itself only looks at the session's account id, and would go on to the
 * consent checks without an account. A session without a second factor,
 * where the login policy (forceMfa) or the app (acr_values=mfa) requires
 * one, asks for it (the login pages show the second-factor step).
 */
export function interactionPolicyFor(forced: ForcedMfa): interactionPolicy.Prompt[] {
  const policy = base();
  policy
    .get('login')!
    .checks.add(
      new Check('account_unavailable', 'the signed-in user can no longer sign in', 'login_required', (ctx: KoaContextWithOIDC) =>
        ctx.oidc.session?.accountId && !ctx.oidc.account ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
      ),
      0,
    );
  // OIDC Core 3.1.2.6: with prompt=none this is interaction_required, the user being signed in.
  policy.get('login')!.checks.add(
    new Check(SECOND_FACTOR_REASON, 'a second factor is required', 'interaction_required', async (ctx: KoaContextWithOIDC) => {
      const { session, params } = ctx.oidc;
      return session?.accountId && (await secondFactorMissing(forced, session.accountId, params?.acr_values, session.acr, session.amr))
        ? Check.REQUEST_PROMPT
        : Check.NO_NEED_TO_PROMPT;
    }),
  );
  policy.add(
    new Prompt(
      { name: 'select_account', requestable: true },
      new Check('multiple_sessions', 'End-User must choose one of the signed-in accounts', 'account_selection_required', async (ctx: KoaContextWithOIDC) => {
        if (!accountUnchosen(ctx)) return Check.NO_NEED_TO_PROMPT;
        const live = await liveBrowserAccounts(ctx.oidc.provider as Provider, readBrowserAccounts(ctx.cookies));
        return live.length > 1 ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
      }),
    ),
    0,
  );
  policy.add(new Prompt({ name: 'create', requestable: true }), 0);
  return policy;
}

/**
 * Nothing chose the account of this request yet: no prompt of its own
 * (prompt=none and the consent that offline_access adds leave the choice
 * open: OIDC Core 3.1.2.6 account_selection_required), no sign-in or pick in
 * this interaction, and no verified id_token_hint naming the session's user
 * (the engine verified it: `IdTokenHint`). Which session the browser used
 * last decides nothing.
 */
function accountUnchosen(ctx: KoaContextWithOIDC): boolean {
  const { oidc } = ctx;
  if (PROMPTS_OF_THEIR_OWN.some((name) => oidc.prompts.has(name))) return false;
  if (oidc.result?.select_account || oidc.result?.login) return false;
  const hinted = (oidc.entities.IdTokenHint as { payload?: { sub?: unknown } } | undefined)?.payload?.sub;
  return !(hinted !== undefined && hinted === oidc.session?.accountId);
}
