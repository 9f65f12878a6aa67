import { escapeHtml as e, page } from '../../src/pages/layout.ts';
import { translate } from '../../src/pages/i18n.ts';
import { errorBox, hidden, type PageContext } from './parts.ts';
import { brandMark, brandOf } from './idp-brands.ts';

/** A provider the login-name page offers. */
export interface IdpButton {
  id: string;
  name: string;
  /** IDP_TYPE_…: how its button looks (idp-brands.ts). */
  type?: string;
}

/** One button per provider of the login policy (docs/idps.md); each a POST, so it carries the CSRF token. */
export function idpButtons(c: PageContext, idps: IdpButton[]): string {
  if (!idps.length) return '';
  const buttons = idps
    .map((idp) => {
      const brand = brandOf(idp.type);
      return `
<form method="post" action="${e(c.action)}/idp/${e(idp.id)}">
  ${hidden('csrf', c.csrf)}
  <button type="submit" class="idp idp-${brand}">${brandMark(brand)}<span>${e(translate(c.t, 'idpSignInWith', { idp: idp.name }))}</span></button>
</form>`;
    })
    .join('');
  return `<p class="or">${e(c.t.or)}</p><div class="idps">${buttons}</div>`;
}

/** An LDAP provider's own sign-in (docs/idps.md, LDAP): the directory's login name and password, posted here and checked by a bind. */
export function ldapLoginPage(c: PageContext, values: { idp: IdpButton; loginName?: string; error?: string }): string {
  const title = translate(c.t, 'idpSignInWith', { idp: values.idp.name });
  return page(
    title,
    `
<h1>${e(title)}</h1>
<p class="lead">${e(translate(c.t, 'signInTo', { app: c.appName }))}</p>
${errorBox(values.error)}
<form method="post" action="${e(c.action)}/ldap/${e(values.idp.id)}" novalidate>
  ${hidden('csrf', c.csrf)}
  <label for="loginName">${e(c.t.loginName)}</label>
  <input type="text" id="loginName" name="loginName" value="${e(values.loginName ?? '')}" autocomplete="username" autocapitalize="none" spellcheck="false" required${values.loginName ? '' : ' autofocus'} maxlength="500">
  <label for="password">${e(c.t.password)}</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required${values.loginName ? ' autofocus' : ''} maxlength="1024">
  <div class="actions">
    <a class="secondary button" href="${e(c.action)}?other=1">${e(c.t.useOther)}</a>
    <button type="submit">${e(c.t.signIn)}</button>
  </div>
</form>`,
    c.lang,
  );
}
