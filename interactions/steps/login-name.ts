import type { Context } from 'koa';
import type { EffectivePolicy } from '../../src/domain/policies/kind.ts';
import { findUser } from '../../src/storage/users.ts';
import { loginName } from '../../src/domain/users.ts';
import { form, type InteractionKit, type Loaded, pendingExternalOf, render, type ShowLoginName, text } from '../context.ts';
import type { IdpButton } from '../views/external-idp.ts';
import type { FactorEnv } from '../factors/index.ts';
import { loginNamePage, passwordPage } from '../views/sign-in.ts';
import { passwordlessOffer } from './passkey.ts';
import { canRegister } from './register.ts';

export interface LoginNameStep {
  /** The login-name page, with "Sign in with a passkey" and "Register" where the login policy allows them. */
  show: ShowLoginName;
  /** The interaction's first page: prefilled with the login hint or the session's user, unless the user asked for `other`. */
  enter(ctx: Context, loaded: Loaded, other: boolean): Promise<void>;
  post(ctx: Context): Promise<void>;
}

export function loginNameStep(
  kit: InteractionKit,
  env: FactorEnv,
  policies: EffectivePolicy,
  offered: (loaded: Loaded) => Promise<IdpButton[]>,
): LoginNameStep {
  const show: ShowLoginName = async (ctx, loaded, values, status = 200) => {
    const passkey = await passwordlessOffer(env, policies, loaded);
    // While an external identity waits to be linked, the page is for signing in to the account to link it to.
    const idps = pendingExternalOf(loaded) ? [] : await offered(loaded);
    render(ctx, loginNamePage(loaded.page, { ...values, canRegister: await canRegister(policies, loaded), passkey, idps }), status);
  };

  async function currentLoginName(loaded: Loaded): Promise<string | undefined> {
    const params = loaded.interaction.params as Record<string, unknown>;
    if (typeof params.login_hint === 'string') return params.login_hint.slice(0, 500);
    const accountId = loaded.interaction.session?.accountId;
    const user = accountId ? await findUser(env.db, accountId) : undefined;
    return user ? loginName(user.user_name, user.primary_domain) : undefined;
  }

  async function enter(ctx: Context, loaded: Loaded, other: boolean): Promise<void> {
    await show(ctx, loaded, { loginName: other ? undefined : await currentLoginName(loaded) });
  }

  async function post(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const name = text(form(ctx).loginName, 500).trim();
    if (!name) return show(ctx, loaded, { error: loaded.page.t.fieldRequired });
    // Unknown login names get the password page too: the two steps do not
    // tell who has an account.
    render(ctx, passwordPage(loaded.page, { loginName: name }));
  }

  return { show, enter, post };
}
