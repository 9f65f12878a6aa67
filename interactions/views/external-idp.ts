import { escapeHtml as e } from '../../src/pages/layout.ts';
import { translate } from '../../src/pages/i18n.ts';
import { hidden, type PageContext } from './parts.ts';

/** A provider the login-name page offers. */
export interface IdpButton {
  id: string;
  name: string;
}

/** One button per provider of the login policy (docs/idps.md); each a POST, so it carries the CSRF token. */
export function idpButtons(c: PageContext, idps: IdpButton[]): string {
  if (!idps.length) return '';
  const buttons = idps
    .map(
      (idp) => `
<form method="post" action="${e(c.action)}/idp/${e(idp.id)}">
  ${hidden('csrf', c.csrf)}
  <button type="submit" class="secondary-button idp">${e(translate(c.t, 'idpSignInWith', { idp: idp.name }))}</button>
</form>`,
    )
    .join('');
  return `<p class="or">${e(c.t.or)}</p><div class="idps">${buttons}</div>`;
}
