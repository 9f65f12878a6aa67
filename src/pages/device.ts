import type { KoaContextWithOIDC } from 'oidc-provider';
import { escapeHtml as e, page } from './layout.ts';
import { CATALOGUES, chooseLanguage, translate, type Messages } from './i18n.ts';

// The pages of the device flow (RFC 8628 3.3): the engine serves them at
// /ui/login/device and calls these to render them; the sign-in between the
// confirmation and the success page is the normal login (interactions/steps/).

interface DeviceForm {
  action: string;
  xsrf: string;
}

/**
 * Where the engine's own form posts and its anti-forgery token: our pages
 * are plain forms of their own (the engine's carries an inline script
 * handler, which the page policy forbids).
 */
function formOf(engineForm: string): DeviceForm {
  const action = /action="([^"]*)"/.exec(engineForm)?.[1];
  const xsrf = /name="xsrf" value="([^"]*)"/.exec(engineForm)?.[1];
  if (!action || !xsrf) throw new Error('the engine changed its device form');
  return { action, xsrf };
}

/** ui_locales on the page's URL, else Accept-Language. */
function language(ctx: KoaContextWithOIDC): { lang: string; t: Messages } {
  const lang = chooseLanguage(ctx.query.ui_locales, ctx.get('accept-language'));
  return { lang, t: CATALOGUES[lang]! };
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${e(name)}" value="${e(value)}">`;
}

function render(ctx: KoaContextWithOIDC, html: string): void {
  ctx.type = 'html';
  ctx.body = html;
}

function appName(client: { clientName?: string; clientId: string } | undefined): string {
  return client?.clientName ?? client?.clientId ?? '';
}

/** The code input, again with a message after a wrong code or a cancelled sign-in. */
export async function userCodeInputSource(
  ctx: KoaContextWithOIDC,
  engineForm: string,
  _out?: unknown,
  err?: { name?: string; userCode?: string },
): Promise<void> {
  const { lang, t } = language(ctx);
  const { action, xsrf } = formOf(engineForm);
  if (err?.name === 'AbortedError') {
    render(ctx, page(t.deviceTitle, `<h1>${e(t.deviceTitle)}</h1><p role="status">${e(t.deviceAborted)}</p>`, lang));
    return;
  }
  const wrongCode = Boolean(err) && (err!.userCode !== undefined || err!.name === 'NoCodeError');
  // A wrong code is a failed authentication of this address (src/engine/device-flow.ts throttles them).
  if (wrongCode) ctx.state.wrongUserCode = true;
  const message = !err ? '' : wrongCode ? t.deviceWrongCode : t.error;
  render(
    ctx,
    page(
      t.deviceTitle,
      `
<h1>${e(t.deviceTitle)}</h1>
<p class="lead">${e(t.deviceEnterCode)}</p>
${message ? `<p class="error" role="alert">${e(message)}</p>` : ''}
<form method="post" action="${e(action)}" novalidate>
  ${hidden('xsrf', xsrf)}
  <label for="user_code">${e(t.userCode)}</label>
  <input type="text" id="user_code" name="user_code" value="${e(err?.userCode ?? '')}" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus maxlength="64" aria-describedby="userCodeHelp">
  <p class="help" id="userCodeHelp">${e(t.userCodeHelp)}</p>
  <div class="actions"><span></span><button type="submit">${e(t.next)}</button></div>
</form>`,
      lang,
    ),
  );
}

/** Names the app and shows the code, so the user checks it against the device before signing in (RFC 8628 5.4). */
export async function userCodeConfirmSource(
  ctx: KoaContextWithOIDC,
  engineForm: string,
  client: { clientName?: string; clientId: string },
  _deviceInfo: unknown,
  userCode: string,
): Promise<void> {
  const { lang, t } = language(ctx);
  const { action, xsrf } = formOf(engineForm);
  render(
    ctx,
    page(
      t.deviceConfirm,
      `
<h1>${e(t.deviceConfirm)}</h1>
<p class="lead">${e(translate(t, 'deviceConfirmText', { app: appName(client) }))}</p>
<p class="user-code"><strong id="confirmCode">${e(userCode)}</strong></p>
<p class="help">${e(t.deviceConfirmHelp)}</p>
<form method="post" action="${e(action)}">
  ${hidden('xsrf', xsrf)}
  ${hidden('user_code', userCode)}
  <div class="actions">
    <button type="submit" class="secondary" name="abort" value="yes">${e(t.cancel)}</button>
    <button type="submit" name="confirm" value="yes" autofocus>${e(t.continue)}</button>
  </div>
</form>`,
      lang,
    ),
  );
}

export async function successSource(ctx: KoaContextWithOIDC): Promise<void> {
  const { lang, t } = language(ctx);
  const client = ctx.oidc.client as { clientName?: string; clientId: string } | undefined;
  render(ctx, page(t.deviceDone, `<h1>${e(t.deviceDone)}</h1><p role="status">${e(translate(t, 'deviceDoneText', { app: appName(client) }))}</p>`, lang));
}

/** The answer to an address that failed too often: the code page's place, with when to try again. */
export function tooManyUserCodesPage(ctx: KoaContextWithOIDC, seconds: number): void {
  const { lang, t } = language(ctx);
  ctx.status = 429;
  ctx.set('Retry-After', String(seconds));
  render(ctx, page(t.deviceTitle, `<h1>${e(t.deviceTitle)}</h1><p role="alert">${e(translate(t, 'tooManyAttempts', { seconds }))}</p>`, lang));
}
