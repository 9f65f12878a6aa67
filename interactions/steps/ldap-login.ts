import type { Context } from 'koa';
import type { Database } from '../../src/storage/database.ts';
import { countDirectoryRefusal, linkedUserLocked } from '../../src/commands/external-login.ts';
import type { LdapSignIn } from '../../src/outbound/ldap.ts';
import type { LoginIdp } from '../../src/queries/idps.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { form, type InteractionKit, type Loaded, render, renderMessage, text, throttled } from '../context.ts';
import type { LoginEvents } from '../login-events.ts';
import { ldapLoginPage } from '../views/external-idp.ts';
import type { ExternalIdpDeps, ExternalIdpStep } from './external-idp.ts';

export interface LdapLoginDeps {
  db: Database;
  events: LoginEvents;
  /** Tells every node a user was locked (the user cache). */
  announce: () => void;
  /** Counts wrong passwords and unknown login names per client address, like the password page. */
  throttle?: AuthThrottle;
  ldapFor: ExternalIdpDeps['ldapFor'];
}

export interface LdapLoginStep {
  /** The provider's form (the login-name page's button for it leads here). */
  show(ctx: Context, loaded: Loaded, login: LoginIdp, values?: { loginName?: string; error?: string }): void;
  /** `POST /ui/login/{uid}/ldap/{idpId}`: the bind with the typed password, then what follows any provider's answer. */
  post(ctx: Context): Promise<void>;
}

/**
 * Signing in through an LDAP provider (docs/idps.md, LDAP): the directory
 * checks the password, and the login goes on as after any provider. A wrong
 * password and an unknown name get one answer and count against the
 * client address, a wrong password also against the linked user's lockout;
 * a locked linked user gets that answer too, whatever the password. A
 * directory that is down or slow gets the provider's failure page.
 */
export function ldapLoginStep(
  kit: InteractionKit,
  deps: LdapLoginDeps,
  external: Pick<ExternalIdpStep, 'loginIdp' | 'afterUpstream' | 'failed'>,
): LdapLoginStep {
  function show(ctx: Context, loaded: Loaded, login: LoginIdp, values: { loginName?: string; error?: string } = {}): void {
    render(ctx, ldapLoginPage(loaded.page, { idp: { id: login.idp.id, name: login.idp.name }, ...values }));
  }

  async function post(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    if (throttled(ctx, loaded.page, deps.throttle)) return;
    const login = await external.loginIdp(loaded, ctx.params.idpId ?? '');
    if (login?.upstream.protocol !== 'ldap') return renderMessage(ctx, loaded, 'sessionExpired', 400);
    const name = text(form(ctx).loginName, 500).trim();
    const password = text(form(ctx).password);
    let answer: LdapSignIn;
    try {
      answer = await deps.ldapFor({ orgId: login.idp.orgId }).authenticate(login.upstream, login.secret, name, password);
    } catch (err) {
      return external.failed(ctx, loaded, login.idp.name, err);
    }
    const locked =
      'identity' in answer
        ? await linkedUserLocked(deps.db, login.idp.id, answer.identity.id)
        : await countDirectoryRefusal(deps.db, login.idp.id, answer.entryId, deps.announce);
    if (!('identity' in answer) || locked) {
      await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      deps.events.failed(ctx, 'login_failed', locked);
      return show(ctx, loaded, login, { loginName: name, error: loaded.page.t.wrongCredentials });
    }
    await external.afterUpstream(ctx, loaded, login.idp, answer.identity);
  }

  return { show, post };
}
