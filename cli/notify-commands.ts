import { isUtf8 } from 'node:buffer';
import { UsageError, type Options, type Values } from './args.ts';
import type { Command } from './command.ts';
import { readSecretFile } from './files.ts';
import { table } from './list-commands.ts';
import { secretLines } from './output.ts';
import { mapped, str } from './option-values.ts';
import { MESSAGE_TEXT_FIELDS, MESSAGE_TEXT_LANGUAGES, MESSAGE_TEXT_TYPES } from '../src/domain/message-texts.ts';

// The notification commands (docs/cli.md): the SMTP server and its test
// mail, the SMS relay, the mails an admin sends a user, a user's metadata
// and an org's message texts, each one call of docs/api/.

const id = (value: string) => encodeURIComponent(value);

const TLS_CHOICES = { starttls: 'TLS_MODE_STARTTLS', implicit: 'TLS_MODE_IMPLICIT', none: 'TLS_MODE_NONE' };
const TLS_WORDS: Record<string, string> = {
  TLS_MODE_STARTTLS: 'starttls (STARTTLS required)',
  TLS_MODE_IMPLICIT: 'implicit (TLS from the first byte)',
  TLS_MODE_NONE: 'none (plain SMTP)',
};

const USER: Options = { user: { type: 'string', arg: '<userId>', description: 'user id' } };

/** A whole port 1–65535, or a usage error (never sent as 0). */
function port(command: string, values: Values): number {
  const value = str(values, 'port')!;
  if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535)
    throw new UsageError(`--port must be a whole number from 1 to 65535 (got '${value}')`, command);
  return Number(value);
}

/** The SMTP password from --password or --password-file (not both), if given. */
function smtpPassword(values: Values): string | undefined {
  const file = str(values, 'password-file');
  if (file !== undefined && str(values, 'password') !== undefined) throw new UsageError('give --password or --password-file, not both', 'set-smtp');
  return file !== undefined ? readSecretFile(file, 'password file') : str(values, 'password');
}

/** A metadata value: its bytes as text (UTF-8), or base64 as given with --base64. */
function metadataBody(values: Values): { value: string } {
  const text = str(values, 'value');
  const base64 = str(values, 'base64');
  if ((text === undefined) === (base64 === undefined)) throw new UsageError('give exactly one of --value and --base64', 'set-metadata');
  return { value: base64 ?? Buffer.from(text!, 'utf8').toString('base64') };
}

/** A stored value as text when its bytes are UTF-8, else as base64. */
function shownValue(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  return isUtf8(bytes) ? bytes.toString('utf8') : `(base64) ${base64}`;
}

const MESSAGE_OPTIONS: Options = {
  type: { type: 'string', arg: '<type>', description: `message type: ${MESSAGE_TEXT_TYPES.join(', ')}` },
  lang: { type: 'string', arg: '<lang>', description: `language: ${MESSAGE_TEXT_LANGUAGES.join(', ')}` },
};

/** `/management/v1/text/message/{type}/{lang}`, the two checked against the service's lists. */
function messagePath(command: string, values: Values): string {
  const type = str(values, 'type')!;
  const lang = str(values, 'lang')!;
  if (!(MESSAGE_TEXT_TYPES as readonly string[]).includes(type))
    throw new UsageError(`--type must be one of ${MESSAGE_TEXT_TYPES.join(', ')} (got '${type}')`, command);
  if (!(MESSAGE_TEXT_LANGUAGES as readonly string[]).includes(lang))
    throw new UsageError(`--lang must be one of ${MESSAGE_TEXT_LANGUAGES.join(', ')} (got '${lang}')`, command);
  return `/management/v1/text/message/${type}/${lang}`;
}

/** `preHeader` → `pre-header`: the option of a message text field. */
const optionOf = (field: string) => field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A call on a user that sends a mail: `POST /management/v1/users/{userId}/{action}`. */
function userMailCommand(name: string, action: string, summary: string, done: string): Command {
  return {
    name,
    summary: `${summary} (needs ORG_OWNER or ORG_USER_MANAGER holding every role of the user)`,
    options: USER,
    required: ['user'],
    request: (values) => ({ method: 'POST', path: `/management/v1/users/${id(str(values, 'user')!)}/${action}`, body: {} }),
    describe: (_r, v) => [`${done} to user ${str(v, 'user')}`],
  };
}

export const NOTIFY_COMMANDS: Command[] = [
  {
    name: 'smtp',
    summary: 'show the SMTP server mails go through (needs IAM_OWNER); never its password',
    options: {},
    required: [],
    request: () => ({ method: 'GET', path: '/admin/v1/smtp' }),
    describe: (r) =>
      r.host === undefined
        ? ['No SMTP server is set: mails go to the server of SMTP_URL, else into the outbox folder.']
        : [
            `sender: ${r.senderName ? `${r.senderName} <${r.senderAddress}>` : r.senderAddress}`,
            `server: ${r.host}:${r.port}, TLS ${TLS_WORDS[r.tls] ?? r.tls}`,
            `user: ${r.user || '(none: no SMTP authentication)'}`,
            `password: ${r.hasPassword ? 'set' : 'not set'}`,
          ],
  },
  {
    name: 'set-smtp',
    summary: 'set the SMTP server mails go through (needs IAM_OWNER); nothing connects until test-smtp',
    options: {
      'sender-address': { type: 'string', arg: '<email>', description: 'From address' },
      'sender-name': { type: 'string', arg: '<name>', description: 'From name' },
      host: { type: 'string', arg: '<host>', description: 'host name or IP address' },
      port: { type: 'string', arg: '<port>', description: 'port, 1–65535' },
      tls: { type: 'string', arg: '<mode>', description: 'starttls, implicit (TLS from the first byte, usually port 465) or none' },
      user: { type: 'string', arg: '<user>', description: 'SMTP user; none: no authentication' },
      password: { type: 'string', arg: '<password>', description: 'SMTP password (visible to other local users; prefer --password-file)' },
      'password-file': {
        type: 'string',
        arg: '<file>',
        description: 'file holding the SMTP password; none given: the stored one is kept while host and user stay',
      },
    },
    required: ['sender-address', 'host', 'port', 'tls'],
    request(values) {
      const senderName = str(values, 'sender-name');
      const user = str(values, 'user');
      const password = smtpPassword(values);
      return {
        method: 'PUT',
        path: '/admin/v1/smtp',
        body: {
          senderAddress: str(values, 'sender-address'),
          host: str(values, 'host'),
          port: port('set-smtp', values),
          tls: mapped('set-smtp', 'tls', str(values, 'tls')!, TLS_CHOICES),
          ...(senderName !== undefined ? { senderName } : {}),
          ...(user !== undefined ? { user } : {}),
          ...(password !== undefined ? { password } : {}),
        },
      };
    },
    describe: () => ['Set the SMTP server. Send a test mail with test-smtp.'],
  },
  {
    name: 'remove-smtp',
    summary: "remove the SMTP server: mails go to SMTP_URL's server again, else into the outbox folder (needs IAM_OWNER)",
    options: {},
    required: [],
    request: () => ({ method: 'DELETE', path: '/admin/v1/smtp' }),
    describe: () => ['Removed the SMTP server.'],
  },
  {
    name: 'test-smtp',
    summary: "send a test mail through the SMTP server mails go through now; fails with the server's answer (needs IAM_OWNER)",
    options: { to: { type: 'string', arg: '<email>', description: 'receiver address' } },
    required: ['to'],
    request: (values) => ({ method: 'POST', path: '/admin/v1/smtp/_test', body: { receiverAddress: str(values, 'to') } }),
    describe: (_r, v) => [`The SMTP server accepted the test mail to ${str(v, 'to')}.`],
  },
  {
    name: 'set-sms-relay',
    summary: 'set the HTTP relay SMS are POSTed to (needs IAM_OWNER); the first time prints its signing key once',
    options: { endpoint: { type: 'string', arg: '<url>', description: 'absolute https (or http) URL' } },
    required: ['endpoint'],
    request: (values) => ({ method: 'PUT', path: '/admin/v1/sms/http', body: { endpoint: str(values, 'endpoint') } }),
    describe: (r, v) => [
      `Set the SMS relay ${str(v, 'endpoint')}.`,
      ...(typeof r.signingKey === 'string' ? secretLines('Signing key', r.signingKey) : ['The signing key stays as it was.']),
    ],
  },
  {
    name: 'remove-sms-relay',
    summary: 'remove the SMS relay: SMS wait in the outbox until one is set again, with a new signing key (needs IAM_OWNER)',
    options: {},
    required: [],
    request: () => ({ method: 'DELETE', path: '/admin/v1/sms/http' }),
    describe: () => ['Removed the SMS relay.'],
  },
  {
    name: 'reset-password',
    summary:
      "start a user's password reset: mail the code (--send-mail) or print it for your own delivery (--return-code); needs ORG_OWNER or ORG_USER_MANAGER holding every role of the user",
    options: {
      ...USER,
      'send-mail': { type: 'boolean', description: 'mail the PasswordReset message to the user' },
      'return-code': { type: 'boolean', description: 'send nothing; print the code (it works at /ui/login/password/init)' },
    },
    required: ['user'],
    request(values) {
      const mail = values['send-mail'] === true;
      const code = values['return-code'] === true;
      if (mail === code) throw new UsageError('give exactly one of --send-mail and --return-code', 'reset-password');
      return {
        method: 'POST',
        path: `/management/v1/users/${id(str(values, 'user')!)}/password/_reset`,
        body: mail ? { sendMail: true } : { returnCode: true },
      };
    },
    describe: (r, v) =>
      typeof r.verificationCode === 'string'
        ? [`Password reset code of user ${str(v, 'user')} (single use, valid for 1 hour): ${r.verificationCode}`]
        : [`Sent a password reset mail to user ${str(v, 'user')}`],
  },
  userMailCommand(
    'resend-verification',
    'email/_resend_verification',
    "send a new email verification to a user's unverified address",
    'Sent a verification mail',
  ),
  userMailCommand('resend-invitation', '_resend_initialization', 'send a new invitation to a user who has not set a password yet', 'Sent an invitation'),
  {
    name: 'metadata',
    summary: "show one key of a user's metadata, its value as text when it is UTF-8, else base64 (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: { ...USER, key: { type: 'string', arg: '<key>', description: 'metadata key' } },
    required: ['user', 'key'],
    request: (values) => ({ method: 'GET', path: `/management/v1/users/${id(str(values, 'user')!)}/metadata/${id(str(values, 'key')!)}` }),
    describe: (r) => [`${r.metadata.key}: ${shownValue(r.metadata.value)}`],
  },
  {
    name: 'list-metadata',
    summary: "list a user's metadata keys and values (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: USER,
    required: ['user'],
    request: (values) => ({ method: 'POST', path: `/management/v1/users/${id(str(values, 'user')!)}/metadata/_search`, body: { query: { limit: 100 } } }),
    describe(r, v) {
      const rows: Array<{ key: string; value: string }> = Array.isArray(r.result) ? r.result : [];
      if (!rows.length) return [`User ${str(v, 'user')} has no metadata.`];
      return table(
        [
          ['KEY', (row) => row.key],
          ['VALUE', (row) => shownValue(row.value)],
        ],
        rows,
      );
    },
  },
  {
    name: 'set-metadata',
    summary: "set one key of a user's metadata, a new value replacing the old (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: {
      ...USER,
      key: { type: 'string', arg: '<key>', description: 'metadata key: letters, digits and _ . : -, not starting with _' },
      value: { type: 'string', arg: '<text>', description: 'the value as text (stored as its UTF-8 bytes)' },
      base64: { type: 'string', arg: '<base64>', description: 'the value as standard base64, for bytes that are not text' },
    },
    required: ['user', 'key'],
    request: (values) => ({
      method: 'POST',
      path: `/management/v1/users/${id(str(values, 'user')!)}/metadata/${id(str(values, 'key')!)}`,
      body: metadataBody(values),
    }),
    describe: (_r, v) => [`Set metadata ${str(v, 'key')} of user ${str(v, 'user')}`],
  },
  {
    name: 'remove-metadata',
    summary: "remove one key of a user's metadata (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: { ...USER, key: { type: 'string', arg: '<key>', description: 'metadata key' } },
    required: ['user', 'key'],
    request: (values) => ({ method: 'DELETE', path: `/management/v1/users/${id(str(values, 'user')!)}/metadata/${id(str(values, 'key')!)}` }),
    describe: (_r, v) => [`Removed metadata ${str(v, 'key')} of user ${str(v, 'user')}`],
  },
  {
    name: 'message-text',
    summary: "show the texts of a message the org's users get: its own, else the built-in ones (needs ORG_OWNER)",
    options: MESSAGE_OPTIONS,
    required: ['type', 'lang'],
    request: (values) => ({ method: 'GET', path: messagePath('message-text', values) }),
    describe: (r) => [
      r.isDefault ? 'The built-in texts (the org has none of its own):' : "The org's own texts:",
      ...MESSAGE_TEXT_FIELDS.map((field) => `${field}:${r.customText?.[field] ? ` ${r.customText[field]}` : ''}`),
    ],
  },
  {
    name: 'set-message-text',
    summary: "set the org's own texts of a message, replacing any it had: a field not given takes the built-in text (needs ORG_OWNER)",
    options: {
      ...MESSAGE_OPTIONS,
      ...Object.fromEntries(
        MESSAGE_TEXT_FIELDS.map((field) => [optionOf(field), { type: 'string', arg: '<text>', description: `${field}; placeholders {{.Code}}, {{.URL}}, …` }]),
      ),
    },
    required: ['type', 'lang'],
    request(values) {
      const path = messagePath('set-message-text', values);
      const body = Object.fromEntries(
        MESSAGE_TEXT_FIELDS.flatMap((field) => (str(values, optionOf(field)) === undefined ? [] : [[field, str(values, optionOf(field))]])),
      );
      if (!Object.keys(body).length)
        throw new UsageError(`give at least one of ${MESSAGE_TEXT_FIELDS.map((f) => `--${optionOf(f)}`).join(', ')}`, 'set-message-text');
      return { method: 'PUT', path, body };
    },
    describe: (_r, v) => [`Set the org's own ${str(v, 'type')} texts (${str(v, 'lang')}).`],
  },
  {
    name: 'remove-message-text',
    summary: "remove the org's own texts of a message: the built-in ones apply again (needs ORG_OWNER)",
    options: MESSAGE_OPTIONS,
    required: ['type', 'lang'],
    request: (values) => ({ method: 'DELETE', path: messagePath('remove-message-text', values) }),
    describe: (_r, v) => [`The org uses the built-in ${str(v, 'type')} texts (${str(v, 'lang')}) again.`],
  },
];
