import { escapeHtml as e, page } from '../../src/pages/layout.ts';
import { translate } from '../../src/pages/i18n.ts';
import { selfServiceTexts } from '../../src/pages/self-service-i18n.ts';
import { type IdpButton, idpButtons } from './external-idp.ts';
import { type AccountChoice, errorBox, hidden, initial, type PageContext, type PasskeyCeremony, passkeyForm } from './parts.ts';

export function loginNamePage(
  c: PageContext,
  values: { loginName?: string; error?: string; notice?: string; canRegister: boolean; passkey?: PasskeyCeremony; idps?: IdpButton[] },
): string {
  return page(
    c.t.signIn,
    `
<h1>${e(c.t.signIn)}</h1>
<p class="lead">${e(translate(c.t, 'signInTo', { app: c.appName }))}</p>
${values.notice ? `<p class="notice" role="status">${e(values.notice)}</p>` : ''}
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
${values.passkey ? passkeyForm('authenticate', values.passkey, c.t.passkeySignIn, `<p class="or">${e(c.t.or)}</p>`, 'secondary-button') : ''}
${idpButtons(c, values.idps ?? [])}`,
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
</form>
<form method="post" action="${e(c.action)}/password/reset" class="or">
  ${hidden('csrf', c.csrf)}
  ${hidden('loginName', values.loginName)}
  <button type="submit" class="secondary-button" id="forgotPassword">${e(selfServiceTexts(c.lang).forgotPassword)}</button>
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
