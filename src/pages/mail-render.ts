import type { MessageType, MessageValues } from '../storage/outbox.ts';
import { escapeHtml } from './layout.ts';
import { MAIL_LANGUAGES, MAIL_TEXTS, type MailLanguage } from './mail-texts.ts';
import { MESSAGE_TEXT_FIELDS, type MessageTexts } from '../domain/message-texts.ts';

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

/** The texts of a message: the org's own where it set them, the built-in ones otherwise. */
export function messageTexts(type: MessageType, language: string, custom: Partial<MessageTexts> = {}): MessageTexts {
  const builtIn = MAIL_TEXTS[mailLanguage(language)][type];
  const texts: MessageTexts = {
    title: builtIn.subject,
    preHeader: '',
    subject: builtIn.subject,
    greeting: builtIn.greeting,
    text: builtIn.text,
    buttonText: builtIn.buttonText ?? '',
    footerText: '',
  };
  for (const field of MESSAGE_TEXT_FIELDS) if (custom[field]) texts[field] = custom[field];
  return texts;
}

/**
 * A message's subject, plain text and HTML, from `custom` texts of the
 * user's org over the built-in ones; every value is escaped in the HTML
 * part (the texts too: an org's text is no markup), and left as it is in
 * the plain text.
 */
export function renderMail(type: MessageType, language: string, values: MessageValues, custom?: Partial<MessageTexts>): RenderedMail {
  const texts = messageTexts(type, language, custom);
  const plain = (template: string) => fill(template, values, (value) => value);
  const html = (template: string) => fill(escapeHtml(template), values, escapeHtml);
  const link = values.URL && texts.buttonText;
  const footer = plain(texts.footerText);
  return {
    subject: plain(texts.subject),
    text: [
      plain(texts.greeting),
      '',
      plain(texts.text),
      ...(link ? ['', `${plain(texts.buttonText)}: ${values.URL}`] : []),
      ...(footer ? ['', footer] : []),
    ].join('\n'),
    html: [
      `<!doctype html><html><head><meta charset="utf-8"><title>${html(texts.title)}</title></head>`,
      '<body style="font-family: system-ui, sans-serif; color: #1d2330;">',
      texts.preHeader ? `<div style="display: none; max-height: 0; overflow: hidden;">${html(texts.preHeader)}</div>` : '',
      `<p>${html(texts.greeting)}</p>`,
      `<p>${html(texts.text)}</p>`,
      link ? `<p><a href="${escapeHtml(values.URL)}" style="color: #2f5bea;">${html(texts.buttonText)}</a></p>` : '',
      footer ? `<p style="color: #667085; font-size: .85em;">${html(texts.footerText)}</p>` : '',
      '</body></html>',
    ].join(''),
  };
}

/** An SMS: the `text` of the message's texts (the org's own over the built-in ones), placeholders filled as they are. */
export function renderSms(type: MessageType, language: string, values: MessageValues, custom?: Partial<MessageTexts>): string {
  return fill(messageTexts(type, language, custom).text, values, (value) => value);
}

/** The mail of `POST /admin/v1/smtp/_test`. */
export function testMail(): RenderedMail {
  const text = 'This is a test mail from Portcullis: its SMTP settings work.';
  return { subject: 'Portcullis test mail', text, html: `<!doctype html><html><body><p>${escapeHtml(text)}</p></body></html>` };
}
