import { escapeHtml as e, page } from './layout.ts';
import { CATALOGUES, type Messages } from './i18n.ts';

// One-line pages of any step: an error or refusal, and the store outage.

export function messagePage(lang: string, t: Messages, message: string): string {
  return page(t.error, `<h1>${e(t.error)}</h1><p>${e(message)}</p>`, lang);
}

/** The page of a store outage (503): the login cannot go on, but will again shortly. */
export function unavailablePage(lang: string): string {
  const t = CATALOGUES[lang] ?? CATALOGUES.en!;
  return page(t.unavailableTitle, `<h1>${e(t.unavailableTitle)}</h1><p>${e(t.unavailable)}</p>`, lang);
}
