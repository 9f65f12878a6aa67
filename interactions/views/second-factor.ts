import { escapeHtml as e, page } from '../../src/pages/layout.ts';
import {
  errorBox,
  hidden,
  initial,
  type OtpSetup,
  type PageContext,
  type PasskeyCeremony,
  passkeyForm,
  otpSetupForm,
  type SecurityContext,
  type SentCodeForm,
  sentCodeForm,
} from './parts.ts';

/** A "sent again" notice, announced to screen readers. */
function noticeBox(text?: string): string {
  return text ? `<p class="notice" role="status">${e(text)}</p>` : '';
}

/** The second step of a login: a code from the authenticator app or a recovery code, a code sent by mail or SMS, or a passkey. */
export function otpPage(
  c: Pick<PageContext, 'lang' | 't' | 'csrf'>,
  action: string,
  values: { loginName: string; error?: string; notice?: string; otp?: boolean; passkey?: PasskeyCeremony; sent?: SentCodeForm[] },
): string {
  const sent = (values.sent ?? []).map((form) => sentCodeForm(c.t, form, values.error, c.t.otpVerify)).join('\n');
  const codes = values.otp !== false || sent !== '';
  const passkey = values.passkey
    ? passkeyForm('authenticate', values.passkey, c.t.passkeyUse, codes ? `<p class="or">${e(c.t.or)}</p>` : '', codes ? 'secondary-button' : '')
    : '';
  const totp =
    values.otp === false
      ? ''
      : `<p class="lead" id="otpHelp">${e(c.t.otpPrompt)}</p>
<form method="post" action="${e(action)}" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="code">${e(c.t.otpCode)}</label>
  <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus maxlength="64" aria-describedby="otpHelp"${values.error ? ' aria-invalid="true"' : ''}>
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.t.otpVerify)}</button>
  </div>
</form>`;
  return page(
    c.t.otpTitle,
    `
<h1>${e(c.t.otpTitle)}</h1>
<div class="identity"><span class="avatar" aria-hidden="true">${initial(values.loginName)}</span><span>${e(values.loginName)}</span></div>
${noticeBox(values.notice)}
${errorBox(values.error)}
${totp}
${sent}
${passkey}`,
    c.lang,
  );
}

/**
 * The set-up a login owes before it finishes (forceMfa, acr_values=mfa):
 * every factor the login policy allows, an authenticator app and a passkey.
 */
export function secondFactorSetupPage(
  c: SecurityContext,
  values: { otp?: OtpSetup; passkey?: PasskeyCeremony; sent?: SentCodeForm[]; error?: string; notice?: string },
): string {
  const sent = (values.sent ?? []).map((form) => sentCodeForm(c.t, form, values.error, c.t.otpConfirm)).join('\n');
  const passkey = values.passkey
    ? `<h2>${e(c.t.passkeys)}</h2>
${passkeyForm(
  'register',
  values.passkey,
  c.t.passkeyAdd,
  `<label for="passkeyName">${e(c.t.passkeyName)}</label><input type="text" id="passkeyName" name="name" value="Passkey" maxlength="100" required>`,
  values.otp || sent ? 'secondary-button' : '',
)}`
    : '';
  return page(
    c.t.otpTitle,
    `
<h1>${e(c.t.otpTitle)}</h1>
<p class="lead">${e(c.t.otpRequired)}</p>
${noticeBox(values.notice)}
${errorBox(values.error)}
${values.otp ? `<h2>${e(c.t.otpApp)}</h2>\n${otpSetupForm(c, values.otp, values.error, false)}` : ''}
${sent}
${passkey}`,
    c.lang,
  );
}

/** The recovery codes, shown this once; `proceed` (a login that goes on) replaces the link back to the security page. */
export function recoveryCodesPage(c: Pick<SecurityContext, 'lang' | 't' | 'action'>, codes: string[], proceed?: { action: string; csrf: string }): string {
  const next = proceed
    ? `<form method="post" action="${e(proceed.action)}">${hidden('csrf', proceed.csrf)}<button type="submit">${e(c.t.next)}</button></form>`
    : `<a class="button" href="${e(c.action)}">${e(c.t.done)}</a>`;
  return page(
    c.t.recoveryTitle,
    `
<h1>${e(c.t.recoveryTitle)}</h1>
<p class="lead">${e(c.t.recoveryLead)}</p>
<ul class="codes" id="recoveryCodes">${codes.map((code) => `<li><code>${e(code)}</code></li>`).join('')}</ul>
<div class="actions"><span></span>${next}</div>`,
    c.lang,
  );
}
