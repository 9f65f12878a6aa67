// English and German. The console speaks the browser's first language it
// knows, else English.

import { en, type MessageKey } from './messages/en.ts';
import { de } from './messages/de.ts';

export type { MessageKey };

const CATALOGUES = { en, de } as const;
export type Language = keyof typeof CATALOGUES;

export function pickLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'de' || base === 'en') return base;
  }
  return 'en';
}

export const language: Language = pickLanguage(typeof navigator === 'undefined' ? [] : navigator.languages);

/** The message in the console's language, with `{name}` placeholders filled in. */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  return CATALOGUES[language][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

/** Whether a string names a message (enum values of the API such as USER_STATE_LOCKED). */
function isMessageKey(key: string): key is MessageKey {
  return key in en;
}

/** The message a value names (an API enum such as USER_STATE_LOCKED, a policy field), else the value in words. */
export function labelOf(value: string): string {
  return isMessageKey(value) ? t(value) : inWords(value);
}

/** A name the catalogue does not know yet (a field a newer server added) in words rather than as code: `maxAgeDays` → "Max age days". */
function inWords(name: string): string {
  const words = name
    .replace(/_/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '';
  return new Date(iso).toLocaleString(language === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}

const ERROR_CODES = new Set([3, 5, 6, 7, 8, 13, 14, 16]);

/**
 * An API error in the console's language: by its code where the console
 * knows it (docs/api/README.md), the server's own words otherwise. The
 * English console keeps the server's reason of a refused request, which
 * names what was wrong.
 */
export function errorText(code: number, serverMessage: string): string {
  if (!ERROR_CODES.has(code)) return t('errorPrefix', { message: serverMessage });
  return t(`err${code}` as MessageKey, { message: serverMessage });
}

/** The API's field rules (src/admin/validate.ts) in German; English as the server says them. */
const GERMAN_RULES: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^is required$/, () => 'muss angegeben werden'],
  [/^must not be empty$/, () => 'darf nicht leer sein'],
  [/^must be at least (\d+) characters$/, (m) => `muss mindestens ${m[1]} Zeichen lang sein`],
  [/^must be at most (\d+) characters$/, (m) => `darf höchstens ${m[1]} Zeichen lang sein`],
  [/^must be an email address$/, () => 'muss eine E-Mail-Adresse sein'],
  [/^is not a known field$/, () => 'ist kein bekanntes Feld'],
  [/^must be one of /, () => 'ist keine der erlaubten Möglichkeiten'],
  [/^must match format "email"$/, () => 'muss eine E-Mail-Adresse sein'],
  [/^must be >= (\d+)$/, (m) => `muss mindestens ${m[1]} sein`],
  [/^must be <= (\d+)$/, (m) => `darf höchstens ${m[1]} sein`],
  [/^must be an http or https URL$/, () => 'muss eine http- oder https-Adresse sein'],
  // integrations: the address and timeout rules of identity providers and action targets
  [/^must use https$/, () => 'muss https verwenden'],
  [/^must be an https URL \(http only on a loopback host\)$/, () => 'muss eine https-URL sein (http nur auf einem Loopback-Host)'],
  [/^must be an absolute (https )?URL$/, () => 'muss eine absolute URL sein'],
  [/^must not have a fragment$/, () => 'darf kein Fragment (#) enthalten'],
  [/^must be from (\S+) to (\S+)$/, (m) => `muss zwischen ${m[1]} und ${m[2]} liegen`],
];

export function ruleText(description: string): string {
  if (language !== 'de') return description;
  for (const [pattern, say] of GERMAN_RULES) {
    const match = pattern.exec(description);
    if (match) return say(match);
  }
  return 'ist ungültig';
}
