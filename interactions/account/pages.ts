import { escapeHtml as e, page } from '../../src/pages/layout.ts';
import {
  errorBox,
  hidden,
  initial,
  type OtpSetup,
  type PasskeyCeremony,
  passkeyForm,
  otpSetupForm,
  type SecurityContext,
  type SentCodeForm,
  sentCodeForm,
} from '../views/parts.ts';

/** The fresh sign-in in front of the security page. */
export function securitySignInPage(c: SecurityContext, values: { loginName?: string; error?: string }): string {
  return page(
    c.t.securityTitle,
    `
<h1>${e(c.t.securityTitle)}</h1>
<p class="lead">${e(c.t.securityLead)}</p>
${errorBox(values.error)}
<form method="post" action="${e(c.action)}/sign-in" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="loginName">${e(c.t.loginName)}</label>
  <input type="text" id="loginName" name="loginName" value="${e(values.loginName ?? '')}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus maxlength="500">
  <label for="password">${e(c.t.password)}</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1024">
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.t.signIn)}</button>
  </div>
</form>`,
    c.lang,
  );
}

/** What the password form shows after a post: the error of each field, or that the change was made. */
export interface PasswordFormState {
  current?: string;
  next?: string;
  repeat?: string;
  changed?: boolean;
}

function fieldError(id: string, error: string | undefined): { attrs: string; text: string } {
  return error
    ? { attrs: ` aria-invalid="true" aria-describedby="${id}Error"`, text: `<p class="field-error" id="${id}Error">${e(error)}</p>` }
    : { attrs: '', text: '' };
}

/** The password change: current password, new password twice. */
function passwordForm(c: SecurityContext, state: PasswordFormState): string {
  const current = fieldError('currentPassword', state.current);
  const next = fieldError('newPassword', state.next);
  const repeat = fieldError('newPasswordRepeat', state.repeat);
  return `<h2>${e(c.t.passwordChangeTitle)}</h2>
${state.changed ? `<p class="notice" role="status" id="passwordChanged">${e(c.t.passwordChangedNotice)}</p>` : ''}
<form method="post" action="${e(c.action)}/password" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="currentPassword">${e(c.t.passwordCurrent)}</label>
  <input type="password" id="currentPassword" name="currentPassword" autocomplete="current-password" required maxlength="1024"${current.attrs}>
  ${current.text}
  <label for="newPassword">${e(c.t.passwordNewField)}</label>
  <input type="password" id="newPassword" name="newPassword" autocomplete="new-password" required maxlength="1024"${next.attrs}>
  ${next.text}
  <label for="newPasswordRepeat">${e(c.t.passwordRepeat)}</label>
  <input type="password" id="newPasswordRepeat" name="newPasswordRepeat" autocomplete="new-password" required maxlength="1024"${repeat.attrs}>
  ${repeat.text}
  <div class="actions"><span></span><button type="submit" id="changePassword">${e(c.t.passwordChangeButton)}</button></div>
</form>`;
}

/** A factor of codes sent by mail or SMS on the security page: held (removable), or offered for set-up. */
export interface CodeFactorState {
  id: 'otpEmail' | 'otpSms';
  held: boolean;
}

function codeFactorRows(c: SecurityContext, factors: CodeFactorState[]): string {
  return factors
    .map((f) => {
      const name = f.id === 'otpEmail' ? c.t.codeFactorEmail : c.t.codeFactorSms;
      const button = f.held
        ? `<form method="post" action="${e(c.action)}/${f.id}/remove">${hidden('csrf', c.csrf)}<button type="submit" class="secondary" id="${f.id}-remove" aria-label="${e(`${c.t.codeFactorRemove}: ${name}`)}">${e(c.t.codeFactorRemove)}</button></form>`
        : `<form method="post" action="${e(c.action)}/${f.id}">${hidden('csrf', c.csrf)}<button type="submit" id="${f.id}-setup">${e(f.id === 'otpEmail' ? c.t.codeFactorEmailSetUp : c.t.codeFactorSmsSetUp)}</button></form>`;
      return `<dl class="factors"><dt>${e(name)}</dt><dd id="${f.id}State">${e(f.held ? c.t.otpReady : c.t.otpNone)}</dd></dl>\n${button}`;
    })
    .join('\n');
}

/** The user's phone number: verified, or the form of the code sent to verify it. */
function phoneSection(c: SecurityContext, phone: { phone: string; verified: boolean } | undefined): string {
  if (!phone) return '';
  const state = `<dl class="factors"><dt>${e(phone.phone)}</dt><dd id="phoneState">${e(phone.verified ? c.t.phoneVerified : c.t.phoneUnverified)}</dd></dl>`;
  if (phone.verified) return `<h2>${e(c.t.phoneTitle)}</h2>\n${state}`;
  return `<h2>${e(c.t.phoneTitle)}</h2>
${state}
<form method="post" action="${e(c.action)}/phone/verify" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="phoneCode">${e(c.t.otpCode)}</label>
  <input type="text" id="phoneCode" name="code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required maxlength="64">
  <div class="actions"><span></span><button type="submit" id="phoneVerify">${e(c.t.phoneVerify)}</button></div>
</form>
<form method="post" action="${e(c.action)}/phone/resend">${hidden('csrf', c.csrf)}<button type="submit" class="secondary" id="phoneResend">${e(c.t.phoneSendCode)}</button></form>`;
}

/** The security page: the signed-in user's second factors, phone number and password. */
export function securityPage(
  c: SecurityContext,
  values: {
    loginName: string;
    otp: boolean;
    codeFactors?: CodeFactorState[];
    phone?: { phone: string; verified: boolean };
    passkeys: Array<{ id: string; name: string }>;
    register?: PasskeyCeremony;
    error?: string;
    notice?: string;
    password?: PasswordFormState;
  },
): string {
  const passkeys = values.passkeys.length
    ? `<ul class="passkeys" id="passkeys">${values.passkeys.map((p) => `<li><span>${e(p.name)}</span><form method="post" action="${e(c.action)}/passkey/remove">${hidden('csrf', c.csrf)}${hidden('passkeyId', p.id)}<button type="submit" class="secondary" aria-label="${e(`${c.t.passkeyRemove}: ${p.name}`)}">${e(c.t.passkeyRemove)}</button></form></li>`).join('')}</ul>`
    : `<p class="help" id="passkeys">${e(c.t.passkeyNone)}</p>`;
  const register = values.register
    ? passkeyForm(
        'register',
        values.register,
        c.t.passkeyAdd,
        `<label for="passkeyName">${e(c.t.passkeyName)}</label><input type="text" id="passkeyName" name="name" value="Passkey" maxlength="100" required>`,
      )
    : '';
  const otpAction = values.otp
    ? `<form method="post" action="${e(c.action)}/otp/remove">${hidden('csrf', c.csrf)}<button type="submit" class="secondary">${e(c.t.otpRemove)}</button></form>`
    : `<form method="post" action="${e(c.action)}/otp">${hidden('csrf', c.csrf)}<button type="submit">${e(c.t.otpSetUp)}</button></form>`;
  return page(
    c.t.securityTitle,
    `
<h1>${e(c.t.securityTitle)}</h1>
<div class="identity"><span class="avatar" aria-hidden="true">${initial(values.loginName)}</span><span>${e(values.loginName)}</span></div>
${values.notice ? `<p class="notice" role="status">${e(values.notice)}</p>` : ''}
${errorBox(values.error)}
<h2>${e(c.t.securityFactors)}</h2>
<dl class="factors"><dt>${e(c.t.otpApp)}</dt><dd id="otpState">${e(values.otp ? c.t.otpReady : c.t.otpNone)}</dd></dl>
${otpAction}
${codeFactorRows(c, values.codeFactors ?? [])}
${phoneSection(c, values.phone)}
<h2>${e(c.t.passkeys)}</h2>
${passkeys}
${register}
${passwordForm(c, values.password ?? {})}
<div class="actions"><span></span><form method="post" action="${e(c.action)}/sign-out">${hidden('csrf', c.csrf)}<button type="submit" class="secondary">${e(c.t.signOut)}</button></form></div>`,
    c.lang,
  );
}

/** Set-up of an authenticator app: the QR code (inline SVG), the key in base32, and the code that confirms it. */
export function otpSetupPage(c: SecurityContext, values: OtpSetup & { error?: string }): string {
  return page(
    c.t.otpSetUp,
    `
<h1>${e(c.t.otpSetUp)}</h1>
${c.lead ? `<p class="lead">${e(c.lead)}</p>` : ''}
${otpSetupForm(c, values, values.error, true)}`,
    c.lang,
  );
}

/** Set-up of codes by mail or SMS: the code sent to confirm that it arrives. */
export function codeFactorSetupPage(c: SecurityContext, form: SentCodeForm, values: { error?: string; notice?: string }): string {
  const title = form.id === 'otpEmail' ? c.t.codeFactorEmailSetUp : c.t.codeFactorSmsSetUp;
  return page(
    title,
    `
<h1>${e(title)}</h1>
<p class="lead">${e(c.t.codeFactorSetupLead)}</p>
${values.notice ? `<p class="notice" role="status">${e(values.notice)}</p>` : ''}
${errorBox(values.error)}
${sentCodeForm(c.t, form, values.error, c.t.otpConfirm)}
<div class="actions"><a class="secondary button" href="${e(c.action)}">${e(c.t.cancel)}</a><span></span></div>`,
    c.lang,
  );
}
