import { lookup } from 'node:dns/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { addressRefusal } from './address-policy.ts';
import { OutboundRefused } from './errors.ts';
import type { SmtpSettings } from './smtp-settings.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Names the outbox file: the message type and the user it is for. */
  type: string;
  userId: string;
}

/** Sends one mail or throws; the outbox folder's sender answers the file it wrote, for the log. */
export interface MailSender {
  send(mail: OutgoingMail): Promise<{ file?: string }>;
  readonly kind: 'smtp' | 'file';
}

const TIMEOUT_MS = 15_000;

/**
 * The one address the SMTP connection goes to. SMTP is set by the instance's
 * owner, so loopback and private servers are allowed (docs/security.md,
 * "Outbound calls"), but never link-local or metadata addresses. nodemailer
 * opens its own sockets: the host is resolved and checked here, and the
 * socket connects to that checked address (TLS still verifies the name).
 */
async function checkedAddress(host: string): Promise<string> {
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  for (const address of addresses) {
    const refusal = addressRefusal(address, true);
    if (refusal) throw new OutboundRefused(host, refusal);
  }
  return addresses[0]!;
}

function sender(settings: Pick<SmtpSettings, 'senderAddress' | 'senderName'>): string | { name: string; address: string } {
  return settings.senderName ? { name: settings.senderName, address: settings.senderAddress } : settings.senderAddress;
}

/** Mails through an SMTP server, one connection per mail. */
export function smtpSender(settings: SmtpSettings): MailSender {
  return {
    kind: 'smtp',
    async send(mail) {
      const transport = nodemailer.createTransport({
        host: await checkedAddress(settings.host),
        port: settings.port,
        secure: settings.tls === 'implicit',
        requireTLS: settings.tls === 'starttls',
        ignoreTLS: settings.tls === 'none',
        tls: { servername: isIP(settings.host) ? undefined : settings.host },
        ...(settings.user ? { auth: { user: settings.user, pass: settings.password ?? '' } } : {}),
        connectionTimeout: TIMEOUT_MS,
        greetingTimeout: TIMEOUT_MS,
        socketTimeout: TIMEOUT_MS,
      });
      try {
        await transport.sendMail({ from: sender(settings), to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      } finally {
        transport.close();
      }
      return {};
    },
  };
}

/**
 * Without an SMTP server: each mail as an RFC 5322 file in `folder`
 * (0700; files 0600, as they may carry a code), named
 * `{time}-{type}-{userId}.eml`.
 */
export function outboxFileSender(folder: string, from: Pick<SmtpSettings, 'senderAddress' | 'senderName'>): MailSender {
  const compose = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'file',
    async send(mail) {
      const { message } = await compose.sendMail({ from: sender(from), to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      const time = new Date().toISOString().replace(/[-:.]/g, '');
      const file = join(folder, `${time}-${mail.type}-${mail.userId.replace(/[^A-Za-z0-9_-]/g, '_')}.eml`);
      writeFileSync(file, message as Buffer, { mode: 0o600, flag: 'wx' });
      return { file };
    },
  };
}
