import { escapeHtml as e, page, PAGE_ASSETS } from './layout.ts';
import { translate, type Messages } from './i18n.ts';
import { messagePage } from './messages.ts';

// The pages of the SAML IdP (docs/saml.md): the form that carries a
// message to the service provider (SAML 2.0 Bindings 3.5.4, HTTP-POST),
// sent by our served auto-submit script (no inline script, so the pages'
// policy holds), and the refusal page.

export interface PostedMessage {
  /** The SP's endpoint, from its metadata only. */
  action: string;
  /** SAMLResponse or SAMLRequest. */
  field: 'SAMLResponse' | 'SAMLRequest';
  /** The message, base64. */
  value: string;
  relayState?: string;
  appName: string;
}

/** The form; its heading says where the browser goes (back to the app, or off to an external IdP when we are its SP). */
export function postFormPage(lang: string, t: Messages, message: PostedMessage, heading?: string): string {
  const relay = message.relayState === undefined ? '' : `<input type="hidden" name="RelayState" value="${e(message.relayState)}">`;
  const text = heading ?? translate(t, 'samlSending', { app: message.appName });
  return page(
    text,
    `<h1>${e(text)}</h1><form method="post" action="${e(message.action)}"><input type="hidden" name="${message.field}" value="${e(message.value)}">${relay}<noscript><button type="submit">${e(t.continue)}</button></noscript></form>
<script src="${PAGE_ASSETS.autoSubmit.path}"></script>`,
    lang,
  );
}

/** A refused request: an error page, never a response to the SP (the request may not come from it). */
export function refusedPage(lang: string, t: Messages, reason: string): string {
  return messagePage(lang, t, translate(t, 'samlRefused', { reason }));
}

/** After a single logout whose service provider has no logout endpoint to return to. */
export function loggedOutPage(lang: string, t: Messages): string {
  return page(t.loggedOutTitle, `<h1>${e(t.loggedOutTitle)}</h1><p>${e(t.loggedOut)}</p>`, lang);
}
