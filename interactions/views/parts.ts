import { escapeHtml as e, PAGE_ASSETS } from '../../src/pages/layout.ts';
import type { Messages } from '../../src/pages/i18n.ts';

// Server-rendered pages: plain forms that work without JavaScript, each
// field labelled, the first field focused, errors announced to screen readers.
// The parts every page of the login UI is made of.

export interface PageContext {
  lang: string;
  t: Messages;
  /** Form action base: /ui/login/{uid} */
  action: string;
  csrf: string;
  appName: string;
}

export interface AccountChoice {
  accountId: string;
  name: string;
  loginName: string;
}

export interface SecurityContext {
  lang: string;
  t: Messages;
  /** Base of the forms: /ui/login/security */
  action: string;
  csrf: string;
  /** Why the set-up page is shown (a login that requires a second factor). */
  lead?: string;
  /** Where "cancel" leads; the security page by default. */
  cancel?: string;
  /** Where the set-up's code goes; the security page's by default. */
  confirm?: string;
}

export function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${e(name)}" value="${e(value)}">`;
}

export function errorBox(message?: string): string {
  return message ? `<p class="error" role="alert">${e(message)}</p>` : '';
}

export function initial(name: string): string {
  return e([...name.trim()][0]?.toUpperCase() ?? '?');
}

/** A passkey ceremony the page offers: where its response goes, and the options of its single-use challenge. */
export interface PasskeyCeremony {
  action: string;
  csrf: string;
  challengeId: string;
  options: unknown;
}

const PASSKEY_SCRIPTS = `<script src="${PAGE_ASSETS.webauthn.path}"></script><script src="${PAGE_ASSETS.passkeyForms.path}"></script>`;

/** A form whose button runs the WebAuthn ceremony in the browser (our served script) and posts its response. */
export function passkeyForm(kind: 'register' | 'authenticate', ceremony: PasskeyCeremony, label: string, fields = '', buttonClass = ''): string {
  return `<form method="post" action="${e(ceremony.action)}" data-passkey="${kind}" data-options="${e(JSON.stringify(ceremony.options))}" class="passkey" hidden>
  ${hidden('csrf', ceremony.csrf)}
  ${hidden('challengeId', ceremony.challengeId)}
  <input type="hidden" name="response" value="">
  ${fields}
  <button type="button" data-start id="passkey-${kind}"${buttonClass ? ` class="${buttonClass}"` : ''}>${e(label)}</button>
</form>
${PASSKEY_SCRIPTS}`;
}

/** What the set-up of an authenticator app shows: the QR code (inline SVG) and the key in base32. */
export interface OtpSetup {
  qrSvg: string;
  secret: string;
}

/** The QR code, the key, and the form of the code that confirms them; `error` marks the code field (its message shows elsewhere when not `shown`). */
export function otpSetupForm(c: SecurityContext, values: OtpSetup, error: string | undefined, shown: boolean): string {
  // The key in groups of four, as apps show it; spaces do not matter to them.
  const grouped = values.secret.replace(/(.{4})(?=.)/g, '$1 ');
  return `<p class="lead" id="setupHelp">${e(c.t.otpSetupLead)}</p>
<div class="qr" role="img" aria-label="QR code">${values.qrSvg}</div>
<p>${e(c.t.otpSecret)}: <code id="otpSecret">${e(grouped)}</code></p>
${shown ? errorBox(error) : ''}
<form method="post" action="${e(c.confirm ?? `${c.action}/otp/confirm`)}" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="code">${e(c.t.otpCode)}</label>
  <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus maxlength="64" aria-describedby="setupHelp"${error ? ' aria-invalid="true"' : ''}>
  <div class="actions">
    <a class="secondary button" href="${e(c.cancel ?? c.action)}">${e(c.t.cancel)}</a>
    <button type="submit">${e(c.t.otpConfirm)}</button>
  </div>
</form>`;
}

/** The form of a code sent by mail or SMS: where it posts, where "send a new code" posts, and where the code went. */
export interface SentCodeForm {
  /** The factor's id: it names the form's fields, unique on a page showing several. */
  id: 'otpEmail' | 'otpSms';
  action: string;
  resend: string;
  csrf: string;
  sentTo: string;
}

/** A sent code's form: the code field, its button, and "send a new code" beside it. */
export function sentCodeForm(t: Messages, form: SentCodeForm, error: string | undefined, button: string): string {
  const field = `code-${form.id}`;
  return `<h2>${e(form.id === 'otpEmail' ? t.codeFactorEmail : t.codeFactorSms)}</h2>
<p class="lead" id="${e(field)}-help">${e(t.codeFactorSent.replace('{to}', form.sentTo))}</p>
<form method="post" action="${e(form.action)}" novalidate>
  ${hidden('csrf', form.csrf)}
  <label for="${e(field)}">${e(t.otpCode)}</label>
  <input type="text" id="${e(field)}" name="code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required maxlength="64" aria-describedby="${e(field)}-help"${error ? ' aria-invalid="true"' : ''}>
  <div class="actions">
    <span></span>
    <button type="submit" id="${e(field)}-submit">${e(button)}</button>
  </div>
</form>
<form method="post" action="${e(form.resend)}">${hidden('csrf', form.csrf)}<button type="submit" class="secondary" id="${e(field)}-resend">${e(t.codeFactorSendAgain)}</button></form>`;
}
