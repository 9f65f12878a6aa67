/**
 * The texts of a message (ZITADEL's custom message texts): the parts an org
 * may word itself, per message type and language, with placeholders the
 * renderer fills in (docs/api/message-texts.md).
 */
export const MESSAGE_TEXT_TYPES = ['InitCode', 'VerifyEmail', 'VerifyPhone', 'PasswordReset', 'OtpEmail', 'OtpSms', 'PasswordChanged'] as const;
export type MessageTextType = (typeof MESSAGE_TEXT_TYPES)[number];

export const MESSAGE_TEXT_LANGUAGES = ['en', 'de'] as const;
export type MessageTextLanguage = (typeof MESSAGE_TEXT_LANGUAGES)[number];

export const MESSAGE_TEXT_FIELDS = ['title', 'preHeader', 'subject', 'greeting', 'text', 'buttonText', 'footerText'] as const;
export type MessageTextField = (typeof MESSAGE_TEXT_FIELDS)[number];
export type MessageTexts = Record<MessageTextField, string>;

export const PLACEHOLDERS = ['Code', 'URL', 'UserName', 'FirstName', 'OrgName'] as const;

/**
 * Longest text of each field, in characters. Mails stay readable and an
 * SMS short: `text` is the body of an SMS too.
 */
export const MESSAGE_TEXT_LIMITS: Record<MessageTextField, number> = {
  title: 200,
  preHeader: 200,
  subject: 200,
  greeting: 200,
  text: 2000,
  buttonText: 100,
  footerText: 1000,
};

/** Fields of one line: they end up in a mail header (subject) or a single-line place of the page. */
export const SINGLE_LINE_FIELDS: readonly MessageTextField[] = ['title', 'preHeader', 'subject', 'greeting', 'buttonText'];

const ANY_PLACEHOLDER = /\{\{(.*?)\}\}/g;

/** The placeholders of `value` that the renderer does not know, as written. */
export function unknownPlaceholders(value: string): string[] {
  const known = new Set(PLACEHOLDERS.map((name) => `.${name}`));
  return [...value.matchAll(ANY_PLACEHOLDER)].map((m) => m[0]).filter((whole) => !known.has(whole.slice(2, -2)));
}

export const isMessageTextType = (value: string): value is MessageTextType => (MESSAGE_TEXT_TYPES as readonly string[]).includes(value);
export const isMessageTextLanguage = (value: string): value is MessageTextLanguage => (MESSAGE_TEXT_LANGUAGES as readonly string[]).includes(value);
