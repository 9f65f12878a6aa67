import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Database } from '../../src/storage/database.ts';
import { liveBrowserAccounts, readBrowserAccounts } from '../../src/engine/browser-accounts.ts';
import { findUser } from '../../src/storage/users.ts';
import { loginName } from '../../src/domain/users.ts';
import { form, type InteractionKit, type Loaded, render, type ShowLoginName, text } from '../context.ts';
import type { AccountChoice } from '../views/parts.ts';
import { accountPickerPage } from '../views/sign-in.ts';
import { userMayAct } from '../../src/domain/may-act.ts';

/** The active users with a live session in this browser. */
async function accountChoices(db: Database, ctx: Context, provider: Provider): Promise<AccountChoice[]> {
  const live = await liveBrowserAccounts(provider, readBrowserAccounts(provider.createContext(ctx.req, ctx.res).cookies));
  const users = await Promise.all(live.map((a) => findUser(db, a.accountId)));
  return users.flatMap((user) =>
    userMayAct(user)
      ? [{ accountId: user.id, name: user.display_name ?? user.name ?? user.user_name, loginName: loginName(user.user_name, user.primary_domain) }]
      : [],
  );
}

export interface SelectAccountStep {
  /** The account picker, or false (declined) when this browser has no account to pick. */
  enter(ctx: Context, loaded: Loaded): Promise<boolean>;
  post(ctx: Context): Promise<void>;
}

export function selectAccountStep(kit: InteractionKit, db: Database, showLoginName: ShowLoginName): SelectAccountStep {
  async function enter(ctx: Context, loaded: Loaded): Promise<boolean> {
    const choices = await accountChoices(db, ctx, loaded.provider);
    if (!choices.length) return false;
    render(ctx, accountPickerPage(loaded.page, choices));
    return true;
  }

  async function post(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const accountId = text(form(ctx).accountId, 64);
    const choices = await accountChoices(db, ctx, loaded.provider);
    if (!choices.some((c) => c.accountId === accountId)) return showLoginName(ctx, loaded, {});
    await kit.switchSession(ctx, loaded, accountId);
    await kit.finish(ctx, loaded, { select_account: {} });
  }

  return { enter, post };
}
