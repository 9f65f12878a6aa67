import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { EngineHolder } from '../src/engine/engine-holder.ts';
import { INTERACTION_PATH } from '../src/engine/routes.ts';
import { liveBrowserAccounts, readBrowserAccounts } from '../src/engine/browser-accounts.ts';
import { acrOf } from '../src/engine/acr.ts';
import { PAGE_HEADERS } from '../src/pages/layout.ts';
import { CATALOGUES, chooseLanguage, translate } from '../src/pages/i18n.ts';
import { messagePage } from '../src/pages/messages.ts';
import { StoreUnavailable } from '../src/storage/outage.ts';
import type { AuthThrottle } from '../src/security/auth-throttle.ts';
import type { ExternalIdentity } from '../src/outbound/upstream.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import type { PageContext } from './views/parts.ts';

export type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** One request's interaction, its app and the page context its pages share. */
export interface Loaded {
  provider: Provider;
  interaction: Interaction;
  page: PageContext;
  client: { clientId: string; clientName?: string; org_id?: string } | undefined;
}

/** A request whose interaction is gone (expired, finished, other browser) gets a page saying so. */
export class InteractionGone extends Error {}

export function form(ctx: Context): Record<string, unknown> {
  return (ctx.request.body ?? {}) as Record<string, unknown>;
}

export function text(value: unknown, max = 1024): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

export function render(ctx: Context, html: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set(PAGE_HEADERS);
  ctx.body = html;
}

/** A message page in the interaction's language. */
export function renderMessage(ctx: Context, loaded: Loaded, message: keyof Loaded['page']['t'], status: number): void {
  render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t[message]), status);
}

/** An address past the failure limit gets the 429 page (docs/security.md): true when it did. */
export function throttled(ctx: Context, page: Pick<PageContext, 'lang' | 't'>, throttle: AuthThrottle | undefined): boolean {
  const wait = throttle?.retryAfterOf(ctx.req);
  if (wait === undefined) return false;
  ctx.set('Retry-After', String(wait));
  render(ctx, messagePage(page.lang, page.t, translate(page.t, 'tooManyAttempts', { seconds: wait })), 429);
  return true;
}

function epochNow(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * A login whose first factor was right and which still owes a second one
 * (`setup`: one it must first set up; `verified`: set up and confirmed with
 * `factor`, the recovery codes on screen): kept in the interaction, server side.
 */
export interface PendingLogin {
  accountId: string;
  loginName: string;
  setup?: boolean;
  verified?: boolean;
  factor?: string;
  /** The first factor was a sign-in through an external provider: its `amr` (`fed` and the upstream's) leads the login's. */
  federated?: string[];
}

const PENDING = 'pendingSecondFactor';

async function saveInteraction(interaction: Interaction): Promise<void> {
  await interaction.save(Math.max(1, (interaction.exp ?? epochNow() + 60) - epochNow()));
}

/** `extra` joins the interaction's result too (a registration's `create`), to be there when the login finishes. */
export async function savePending(loaded: Loaded, pending: PendingLogin, extra: Record<string, unknown> = {}): Promise<void> {
  const { interaction } = loaded;
  interaction.result = { ...interaction.result, ...extra, [PENDING]: pending };
  await saveInteraction(interaction);
}

/** Keeps `fields` in the interaction's result (a step's own state, under its own key), server side. */
export async function saveResult(loaded: Loaded, fields: Record<string, unknown>): Promise<void> {
  loaded.interaction.result = { ...loaded.interaction.result, ...fields };
  await saveInteraction(loaded.interaction);
}

/**
 * An identity an external provider vouched for that is linked to no user
 * yet (docs/idps.md): kept in the interaction, server side, while the user
 * signs in to the account to link it to, or registers one.
 */
export interface PendingExternal {
  idpId: string;
  idpName: string;
  identity: ExternalIdentity;
  /** The provider's isCreationAllowed: the registration form is offered, filled in from the identity. */
  creationAllowed: boolean;
}

const EXTERNAL = 'pendingExternal';

export async function savePendingExternal(loaded: Loaded, pending: PendingExternal): Promise<void> {
  await saveResult(loaded, { [EXTERNAL]: pending });
}

export function pendingExternalOf(loaded: Loaded): PendingExternal | undefined {
  return loaded.interaction.result?.[EXTERNAL] as PendingExternal | undefined;
}

/** The pending login, or undefined after rendering the "session expired" page. */
export function pendingOf(ctx: Context, loaded: Loaded): PendingLogin | undefined {
  const pending = loaded.interaction.result?.[PENDING] as PendingLogin | undefined;
  if (!pending) renderMessage(ctx, loaded, 'sessionExpired', 400);
  return pending;
}

/** The login-name page with a message: where a step that cannot go on sends the user back to. */
export type ShowLoginName = (ctx: Context, loaded: Loaded, values: { loginName?: string; error?: string; notice?: string }, status?: number) => Promise<void>;

/** What the steps share: loading the interaction, the CSRF check, finishing it. */
export interface InteractionKit {
  load(ctx: Context): Promise<Loaded>;
  /** POSTs must carry the interaction's CSRF token: false after rendering the "form expired" page. */
  checkCsrf(ctx: Context, loaded: Loaded): boolean;
  /** Saves the result and sends the browser back to the engine to finish the authorization. */
  finish(ctx: Context, loaded: Loaded, result: Record<string, unknown>): Promise<void>;
  /**
   * Signs `accountId` in, with the methods used (RFC 8176 `amr`, which the
   * engine puts in the ID token); password alone when not given.
   */
  finishLogin(ctx: Context, loaded: Loaded, accountId: string, extra?: Record<string, unknown>, amr?: readonly string[]): Promise<void>;
  /** Moves the browser to `accountId`'s own session, or a new one, when the current one is another user's. */
  switchSession(ctx: Context, loaded: Loaded, accountId: string): Promise<void>;
}

export interface KitSettings {
  engine: EngineHolder;
  csrfKey: Buffer;
  sessionLifetime: number;
  /** SameSite of the engine's session cookie (none while ENABLE_HTTP_POST_METHODS lets apps POST cross-site). */
  sessionSameSite: 'lax' | 'none';
}

export function interactionKit(settings: KitSettings): InteractionKit {
  async function load(ctx: Context): Promise<Loaded> {
    const provider = settings.engine.provider;
    let interaction: Interaction;
    try {
      interaction = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      throw new InteractionGone();
    }
    if (interaction.uid !== ctx.params.uid) throw new InteractionGone();
    const params = interaction.params as Record<string, unknown>;
    const client = typeof params.client_id === 'string' ? ((await provider.Client.find(params.client_id)) as unknown as Loaded['client']) : undefined;
    const lang = chooseLanguage(params.ui_locales, ctx.get('accept-language'));
    return {
      provider,
      interaction,
      client,
      page: {
        lang,
        t: CATALOGUES[lang]!,
        action: `${INTERACTION_PATH}/${interaction.uid}`,
        csrf: csrfToken(settings.csrfKey, interaction.uid),
        appName: client?.clientName ?? client?.clientId ?? '',
      },
    };
  }

  function checkCsrf(ctx: Context, loaded: Loaded): boolean {
    if (csrfValid(settings.csrfKey, loaded.interaction.uid, text(form(ctx).csrf, 200))) return true;
    renderMessage(ctx, loaded, 'formExpired', 403);
    return false;
  }

  async function finish(ctx: Context, loaded: Loaded, result: Record<string, unknown>): Promise<void> {
    const { interaction } = loaded;
    const { [PENDING]: _done, [EXTERNAL]: _linked, ...earlier } = interaction.result ?? {};
    interaction.result = { ...earlier, ...result };
    await saveInteraction(interaction);
    ctx.status = 303;
    ctx.redirect(interaction.returnTo);
  }

  /**
   * When the browser's current session belongs to another user, that
   * session is kept for them (the account picker lists it).
   */
  async function switchSession(ctx: Context, loaded: Loaded, accountId: string): Promise<void> {
    const { provider, interaction } = loaded;
    const current = interaction.session?.accountId;
    if (!current || current === accountId) return;
    const pctx = provider.createContext(ctx.req, ctx.res);
    const live = await liveBrowserAccounts(provider, readBrowserAccounts(pctx.cookies));
    const own = live.find((a) => a.accountId === accountId);
    pctx.cookies.set(provider.cookieName('session'), own ? own.sessionId : null, {
      httpOnly: true,
      sameSite: settings.sessionSameSite,
      path: '/',
      maxAge: settings.sessionLifetime * 1000,
    });
    delete (interaction as { session?: unknown }).session;
  }

  async function finishLogin(ctx: Context, loaded: Loaded, accountId: string, extra: Record<string, unknown> = {}, amr?: readonly string[]): Promise<void> {
    await switchSession(ctx, loaded, accountId);
    // Signing in is also choosing the account: a pending select_account
    // prompt (requested, or several users in this browser) is settled too.
    // So is consent, which our apps get without a page: the first-party rule
    // (src/engine/first-party-grant.ts) grants the requested scopes when the
    // engine resumes, so a consent prompt (the one offline_access asks for)
    // would only cost the browser another round trip through this UI.
    const federated = (loaded.interaction.result?.[PENDING] as PendingLogin | undefined)?.federated;
    const methods = federated ? [...new Set([...federated, ...(amr ?? []).filter((m) => m !== 'pwd')])] : [...(amr ?? ['pwd'])];
    await finish(ctx, loaded, {
      ...extra,
      select_account: {},
      consent: {},
      // The acr the login achieved (src/engine/acr.ts), in the ID token whether or not acr_values asked.
      login: { accountId, remember: true, amr: methods, acr: acrOf(methods) },
    });
  }

  return { load, checkCsrf, finish, finishLogin, switchSession };
}
