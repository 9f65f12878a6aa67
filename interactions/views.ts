import { escapeHtml as e, page, PAGE_ASSETS } from '../src/pages/layout.ts';
import { translate, type Messages } from '../src/pages/i18n.ts';

// Server-rendered pages: plain forms that work without JavaScript, each
// field labelled, the first field focused, errors announced to screen readers.

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

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${e(name)}" value="${e(value)}">`;
}

function errorBox(message?: string): string {
  return message ? `<p class="error" role="alert">${e(message)}</p>` : '';
}

function initial(name: string): string {
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
function passkeyForm(kind: 'register' | 'authenticate', ceremony: PasskeyCeremony, label: string, fields = '', buttonClass = ''): string {
  return `<form method="post" action="${e(ceremony.action)}" data-passkey="${kind}" data-options="${e(JSON.stringify(ceremony.options))}" class="passkey" hidden>
  ${hidden('csrf', ceremony.csrf)}
  ${hidden('challengeId', ceremony.challengeId)}
  <input type="hidden" name="response" value="">
  ${fields}
  <button type="button" data-start id="passkey-${kind}"${buttonClass ? ` class="${buttonClass}"` : ''}>${e(label)}</button>
</form>
${PASSKEY_SCRIPTS}`;
}

export function loginNamePage(c: PageContext, values: { loginName?: string; error?: string; canRegister: boolean; passkey?: PasskeyCeremony }): string {
  return page(
    c.t.signIn,
    `
<h1>${e(c.t.signIn)}</h1>
<p class="lead">${e(translate(c.t, 'signInTo', { app: c.appName }))}</p>
${errorBox(values.error)}
<form method="post" action="${e(c.action)}/login-name" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="loginName">${e(c.t.loginName)}</label>
  <input type="text" id="loginName" name="loginName" value="${e(values.loginName ?? '')}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus aria-describedby="loginNameHelp" maxlength="500">
  <p class="help" id="loginNameHelp">${e(c.t.loginNameHelp)}</p>
  <div class="actions">
    ${values.canRegister ? `<a class="secondary button" href="${e(c.action)}/register">${e(c.t.registerLink)}</a>` : '<span></span>'}
    <button type="submit">${e(c.t.next)}</button>
  </div>
</form>
${values.passkey ? passkeyForm('authenticate', values.passkey, c.t.passkeySignIn, `<p class="or">${e(c.t.or)}</p>`, 'secondary-button') : ''}`,
    c.lang,
  );
}

export function passwordPage(c: PageContext, values: { loginName: string; error?: string }): string {
  return page(
    c.t.password,
    `
<h1>${e(c.t.signIn)}</h1>
<div class="identity"><span class="avatar" aria-hidden="true">${initial(values.loginName)}</span><span>${e(values.loginName)}</span></div>
${errorBox(values.error)}
<form method="post" action="${e(c.action)}/password" novalidate>
  ${hidden('csrf', c.csrf)}
  ${hidden('loginName', values.loginName)}
  <input type="text" name="username" value="${e(values.loginName)}" autocomplete="username" hidden>
  <label for="password">${e(c.t.password)}</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required autofocus maxlength="1024">
  <div class="actions">
    <a class="secondary button" href="${e(c.action)}?other=1">${e(c.t.forgotten)}</a>
    <button type="submit">${e(c.t.signIn)}</button>
  </div>
</form>`,
    c.lang,
  );
}

export function accountPickerPage(c: PageContext, accounts: AccountChoice[]): string {
  const items = accounts
    .map(
      (a) => `
    <li><button type="submit" name="accountId" value="${e(a.accountId)}">
      <span class="avatar" aria-hidden="true">${initial(a.name)}</span>
      <span class="who"><strong>${e(a.name)}</strong><span>${e(a.loginName)}</span></span>
    </button></li>`,
    )
    .join('');
  return page(
    c.t.chooseAccount,
    `
<h1>${e(c.t.chooseAccount)}</h1>
<p class="lead">${e(translate(c.t, 'chooseAccountTo', { app: c.appName }))}</p>
<form method="post" action="${e(c.action)}/select">
  ${hidden('csrf', c.csrf)}
  <ul class="accounts">${items}</ul>
</form>
<div class="actions"><a class="secondary button" href="${e(c.action)}?other=1">${e(c.t.useOther)}</a></div>`,
    c.lang,
  );
}

export interface RegistrationValues {
  givenName?: string;
  familyName?: string;
  email?: string;
  errors?: Partial<Record<'givenName' | 'familyName' | 'email' | 'password' | 'passwordRepeat', string>>;
  error?: string;
}

function field(
  name: keyof NonNullable<RegistrationValues['errors']>,
  label: string,
  type: string,
  value: string,
  error: string | undefined,
  extra: string,
): string {
  const describedBy = error ? ` aria-invalid="true" aria-describedby="${name}Error"` : '';
  return `<label for="${name}">${e(label)}</label>
  <input type="${type}" id="${name}" name="${name}" value="${e(value)}" ${extra}${describedBy}>
  ${error ? `<p class="field-error" id="${name}Error">${e(error)}</p>` : ''}`;
}

export function registrationPage(c: PageContext, values: RegistrationValues, minPasswordLength: number): string {
  const err = values.errors ?? {};
  return page(
    c.t.register,
    `
<h1>${e(c.t.register)}</h1>
<p class="lead">${e(translate(c.t, 'registerTo', { app: c.appName }))}</p>
${errorBox(values.error)}
<form method="post" action="${e(c.action)}/register" novalidate>
  ${hidden('csrf', c.csrf)}
  <div class="row">
    <div>${field('givenName', c.t.givenName, 'text', values.givenName ?? '', err.givenName, 'autocomplete="given-name" required autofocus maxlength="200"')}</div>
    <div>${field('familyName', c.t.familyName, 'text', values.familyName ?? '', err.familyName, 'autocomplete="family-name" required maxlength="200"')}</div>
  </div>
  ${field('email', c.t.email, 'email', values.email ?? '', err.email, 'autocomplete="email" required maxlength="200"')}
  ${field('password', translate(c.t, 'passwordNew', { min: minPasswordLength }), 'password', '', err.password, `autocomplete="new-password" required minlength="${minPasswordLength}" maxlength="1024"`)}
  ${field('passwordRepeat', c.t.passwordRepeat, 'password', '', err.passwordRepeat, 'autocomplete="new-password" required maxlength="1024"')}
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.t.register)}</button>
  </div>
</form>`,
    c.lang,
  );
}

/** The second step of a login: a code from the authenticator app, or a recovery code. */
export function otpPage(
  c: Pick<PageContext, 'lang' | 't' | 'csrf'>,
  action: string,
  values: { loginName: string; error?: string; otp?: boolean; passkey?: PasskeyCeremony },
): string {
  const passkey = values.passkey
    ? passkeyForm(
        'authenticate',
        values.passkey,
        c.t.passkeyUse,
        values.otp === false ? '' : `<p class="or">${e(c.t.or)}</p>`,
        values.otp === false ? '' : 'secondary-button',
      )
    : '';
  return page(
    c.t.otpTitle,
    `
<h1>${e(c.t.otpTitle)}</h1>
<div class="identity"><span class="avatar" aria-hidden="true">${initial(values.loginName)}</span><span>${e(values.loginName)}</span></div>
${values.otp === false ? '' : `<p class="lead" id="otpHelp">${e(c.t.otpPrompt)}</p>`}
${errorBox(values.error)}
${
  values.otp === false
    ? passkey
    : `<form method="post" action="${e(action)}" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="code">${e(c.t.otpCode)}</label>
  <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus maxlength="64" aria-describedby="otpHelp"${values.error ? ' aria-invalid="true"' : ''}>
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.t.otpVerify)}</button>
  </div>
</form>${passkey}`
}`,
    c.lang,
  );
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

/** The security page: the signed-in user's second factors. */
export function securityPage(
  c: SecurityContext,
  values: { loginName: string; otp: boolean; passkeys: Array<{ id: string; name: string }>; register?: PasskeyCeremony; error?: string },
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
${errorBox(values.error)}
<h2>${e(c.t.securityFactors)}</h2>
<dl class="factors"><dt>${e(c.t.otpApp)}</dt><dd id="otpState">${e(values.otp ? c.t.otpReady : c.t.otpNone)}</dd></dl>
${otpAction}
<h2>${e(c.t.passkeys)}</h2>
${passkeys}
${register}
<div class="actions"><span></span><form method="post" action="${e(c.action)}/sign-out">${hidden('csrf', c.csrf)}<button type="submit" class="secondary">${e(c.t.signOut)}</button></form></div>`,
    c.lang,
  );
}

/** What the set-up of an authenticator app shows: the QR code (inline SVG) and the key in base32. */
export interface OtpSetup {
  qrSvg: string;
  secret: string;
}

/** The QR code, the key, and the form of the code that confirms them; `error` marks the code field (its message shows elsewhere when not `shown`). */
function otpSetupForm(c: SecurityContext, values: OtpSetup, error: string | undefined, shown: boolean): string {
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

/**
 * The set-up a login owes before it finishes (forceMfa, acr_values=mfa):
 * every factor the login policy allows, an authenticator app and a passkey.
 */
export function secondFactorSetupPage(c: SecurityContext, values: { otp?: OtpSetup; passkey?: PasskeyCeremony; error?: string }): string {
  const passkey = values.passkey
    ? `<h2>${e(c.t.passkeys)}</h2>
${passkeyForm(
  'register',
  values.passkey,
  c.t.passkeyAdd,
  `<label for="passkeyName">${e(c.t.passkeyName)}</label><input type="text" id="passkeyName" name="name" value="Passkey" maxlength="100" required>`,
  values.otp ? 'secondary-button' : '',
)}`
    : '';
  return page(
    c.t.otpTitle,
    `
<h1>${e(c.t.otpTitle)}</h1>
<p class="lead">${e(c.t.otpRequired)}</p>
${errorBox(values.error)}
${values.otp ? `<h2>${e(c.t.otpApp)}</h2>\n${otpSetupForm(c, values.otp, values.error, false)}` : ''}
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
