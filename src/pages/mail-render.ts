import type { MessageType, MessageValues } from '../storage/outbox.ts';
import { escapeHtml } from './layout.ts';
import { MAIL_LANGUAGES, MAIL_TEXTS, type MailLanguage } from './mail-texts.ts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const PLACEHOLDER = /\{\{\.(Code|URL|UserName|FirstName|OrgName)\}\}/g;

/** The user's language when there are texts in it, else English. */
export function mailLanguage(preferred: string | undefined): MailLanguage {
  const base = (preferred ?? '').toLowerCase().split(/[-_]/)[0];
  return (MAIL_LANGUAGES as readonly string[]).includes(base ?? '') ? (base as MailLanguage) : 'en';
}

function fill(template: string, values: MessageValues, encode: (value: string) => string): string {
  return template.replace(PLACEHOLDER, (_, name: keyof MessageValues) => encode(values[name] ?? ''));
}

/** A message's subject, plain text and HTML; every value is escaped in the HTML part. */
export function renderMail(type: MessageType, language: string, values: MessageValues): RenderedMail {
  const texts = MAIL_TEXTS[mailLanguage(language)][type];
  const plain = (template: string) => fill(template, values, (value) => value);
  const html = (template: string) => fill(escapeHtml(template), values, escapeHtml);
  const link = values.URL && texts.buttonText;
  return {
    subject: plain(texts.subject),
    text: [plain(texts.greeting), '', plain(texts.text), ...(link ? ['', `${plain(texts.buttonText!)}: ${values.URL}`] : [])].join('\n'),
    html: [
      '<!doctype html><html><body style="font-family: system-ui, sans-serif; color: #1d2330;">',
      `<p>${html(texts.greeting)}</p>`,
      `<p>${html(texts.text)}</p>`,
      link ? `<p><a href="${escapeHtml(values.URL)}" style="color: #2f5bea;">${html(texts.buttonText!)}</a></p>` : '',
      '</body></html>',
    ].join(''),
  };
}

/** The mail of `POST /admin/v1/smtp/_test`. */
export function testMail(): RenderedMail {
  const text = 'This is a test mail from Portcullis: its SMTP settings work.';
  return { subject: 'Portcullis test mail', text, html: `<!doctype html><html><body><p>${escapeHtml(text)}</p></body></html>` };
}
