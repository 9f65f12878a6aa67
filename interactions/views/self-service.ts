import { escapeHtml as e, page } from '../../src/pages/layout.ts';
import type { Messages } from '../../src/pages/i18n.ts';
import type { SelfServiceMessages } from '../../src/pages/self-service-i18n.ts';
import { errorBox, hidden } from './parts.ts';

// The pages of the self-service flows (docs/self-service.md): a password set with a
// code (invitation, reset), an email verified with a code, and what each
// says when done. Plain forms; the code field is pre-filled from the link.

export interface CodePageContext {
  lang: string;
  t: Messages;
  s: SelfServiceMessages;
  /** Where the form posts. */
  action: string;
  csrf: string;
}

/** Who the form is for and where the sign-in goes on: hidden fields the POST carries back. */
export interface CodeFormValues {
  userId?: string;
  loginName?: string;
  /** The login (interaction) that led here, to continue once done. */
  authRequestId?: string;
  code?: string;
  error?: string;
  notice?: string;
}

function carried(values: CodeFormValues): string {
  return [
    values.userId ? hidden('userID', values.userId) : '',
    values.loginName ? hidden('loginName', values.loginName) : '',
    values.authRequestId ? hidden('authRequestID', values.authRequestId) : '',
  ].join('');
}

function notice(text?: string): string {
  return text ? `<p class="notice" role="status">${e(text)}</p>` : '';
}

function codeField(c: CodePageContext, values: CodeFormValues, autofocus: boolean): string {
  return `<label for="code">${e(c.s.code)}</label>
  <input type="text" id="code" name="code" value="${e(values.code ?? '')}" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required maxlength="64"${autofocus ? ' autofocus' : ''}${values.error ? ' aria-invalid="true"' : ''}>`;
}

/** The invitation's or the reset's page: the code and the new password twice. */
export function codePasswordPage(c: CodePageContext, kind: 'init' | 'reset', lead: string, values: CodeFormValues): string {
  const title = kind === 'init' ? c.s.initTitle : c.s.resetTitle;
  return page(
    title,
    `
<h1>${e(title)}</h1>
<p class="lead">${e(lead)}</p>
${notice(values.notice)}
${errorBox(values.error)}
<form method="post" action="${e(c.action)}" novalidate>
  ${hidden('csrf', c.csrf)}
  ${carried(values)}
  ${values.loginName ? `<input type="text" name="username" value="${e(values.loginName)}" autocomplete="username" hidden>` : ''}
  ${codeField(c, values, !values.code)}
  <label for="password">${e(c.s.newPassword)}</label>
  <input type="password" id="password" name="password" autocomplete="new-password" required maxlength="1024"${values.code ? ' autofocus' : ''}>
  <label for="passwordRepeat">${e(c.s.repeatPassword)}</label>
  <input type="password" id="passwordRepeat" name="passwordRepeat" autocomplete="new-password" required maxlength="1024">
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.s.save)}</button>
  </div>
</form>`,
    c.lang,
  );
}

/** The email verification page; `resendAction` offers "send a new code" (inside a login, where the user is known). */
export function mailVerificationPage(c: CodePageContext, lead: string, values: CodeFormValues & { resendAction?: string }): string {
  const resend = values.resendAction
    ? `<form method="post" action="${e(values.resendAction)}" class="or">
  ${hidden('csrf', c.csrf)}
  <button type="submit" class="secondary-button" id="sendAgain">${e(c.s.sendAgain)}</button>
</form>`
    : '';
  return page(
    c.s.verifyTitle,
    `
<h1>${e(c.s.verifyTitle)}</h1>
<p class="lead">${e(lead)}</p>
${notice(values.notice)}
${errorBox(values.error)}
<form method="post" action="${e(c.action)}" novalidate>
  ${hidden('csrf', c.csrf)}
  ${carried(values)}
  ${codeField(c, values, true)}
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.s.verify)}</button>
  </div>
</form>
${resend}`,
    c.lang,
  );
}

/** What a finished flow says, with the way back into the login that led to it, if any. */
export function codeDonePage(c: Pick<CodePageContext, 'lang' | 's'>, title: string, message: string, continueUrl?: string): string {
  return page(
    title,
    `
<h1>${e(title)}</h1>
<p class="notice" role="status">${e(message)}</p>
${continueUrl ? `<div class="actions"><span></span><a class="button" href="${e(continueUrl)}" id="continue">${e(c.s.continueSignIn)}</a></div>` : ''}`,
    c.lang,
  );
}
