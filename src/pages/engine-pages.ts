import { escapeHtml, page, PAGE_ASSETS } from './layout.ts';

// The few HTML pages the engine renders itself: its error page (shown when
// the redirect_uri cannot be trusted, so the error must not be redirected)
// and the logout steps.

export function errorPage(error: string, description?: string): string {
  return page(
    'Sign-in error',
    `<h1>Something went wrong</h1>
<p><code>${escapeHtml(error)}</code></p>
${description ? `<p>${escapeHtml(description)}</p>` : ''}
<p>Go back to the application and try again.</p>`,
  );
}

/** What the logout pages say, in the page's language (src/pages/i18n.ts). */
export interface LogoutTexts {
  lang: string;
  logoutTitle: string;
  logoutQuestion: string;
  logoutIgnore: string;
  signOut: string;
  loggingOut: string;
  loggedOutTitle: string;
  loggedOut: string;
}

/** The engine's logout form (its xsrf field inside) with the fields and button of ours. */
function logoutForm(form: string, inside: string): string {
  return form.replace('</form>', `<input type="hidden" name="logout" value="yes">${inside}</form>`);
}

/**
 * The logout confirmation (RP-Initiated Logout 1.0 2 and 6): the user signs
 * out only by the button, a form with the engine's xsrf secret, so a link
 * from another site cannot sign anyone out.
 */
export function logoutConfirmationPage(form: string, t: LogoutTexts): string {
  return page(
    t.logoutTitle,
    `<h1>${escapeHtml(t.logoutTitle)}</h1>
<p class="lead">${escapeHtml(t.logoutQuestion)}</p>
${logoutForm(form, `<div class="actions"><button type="submit">${escapeHtml(t.signOut)}</button></div>`)}
<p class="help">${escapeHtml(t.logoutIgnore)}</p>`,
    t.lang,
  );
}

/** A logout the app asked for with a valid id_token_hint: the engine's form submits itself. */
export function logoutPage(form: string, t: LogoutTexts): string {
  return page(
    t.loggingOut,
    `<h1>${escapeHtml(t.loggingOut)}</h1>
${logoutForm(form, `<noscript><button type="submit">${escapeHtml(t.signOut)}</button></noscript>`)}
<script src="${PAGE_ASSETS.autoSubmit.path}"></script>`,
    t.lang,
  );
}

export function loggedOutPage(t: LogoutTexts): string {
  return page(t.loggedOutTitle, `<h1>${escapeHtml(t.loggedOutTitle)}</h1><p>${escapeHtml(t.loggedOut)}</p>`, t.lang);
}
