import { InvalidArgument, NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { seal } from '../keys/sealing.ts';
import { smtpSender } from '../outbound/mail-senders.ts';
import type { SmtpSettings } from '../outbound/smtp-settings.ts';
import { testMail } from '../pages/mail-render.ts';
import { assertMayConfigureSmtp, effectiveSmtpSettings, TLS_NAMES, type SmtpTlsName } from '../queries/smtp-settings.ts';
import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { deleteSmtpSettings, findSmtpSettings, saveSmtpSettings, SMTP_PASSWORD_AAD } from '../storage/smtp-settings.ts';

/** `PUT /admin/v1/smtp` (docs/api/notifications.md). */
export interface SmtpSettingsInput {
  senderAddress: string;
  senderName?: string;
  host: string;
  port: number;
  user?: string;
  password?: string;
  tls: SmtpTlsName;
}

const TLS_MODES = Object.fromEntries(Object.entries(TLS_NAMES).map(([mode, name]) => [name, mode])) as Record<SmtpTlsName, SmtpSettings['tls']>;

/**
 * Sets the instance's SMTP server. A password left out is kept only for the
 * same host and user: a stored password is never sent to another server.
 */
export async function setSmtpSettings(db: Database, sealingKey: Buffer, actor: Principal, input: SmtpSettingsInput): Promise<{ details: WriteDetails }> {
  assertMayConfigureSmtp(actor);
  const user = input.user ?? '';
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    const stored = await findSmtpSettings(tx);
    const kept = stored && stored.host === input.host && stored.user === user ? stored.passwordSealed : null;
    const passwordSealed = input.password ? seal(sealingKey, Buffer.from(input.password, 'utf8'), SMTP_PASSWORD_AAD) : user ? kept : null;
    await saveSmtpSettings(write, instance.id, {
      senderAddress: input.senderAddress,
      senderName: input.senderName ?? '',
      host: input.host,
      port: input.port,
      user,
      passwordSealed,
      tls: TLS_MODES[input.tls],
    });
    return { details: writeDetails(write, instance.id) };
  });
}

/** `DELETE /admin/v1/smtp`: mails go to SMTP_URL's server again, or to the outbox folder. */
export async function removeSmtpSettings(db: Database, actor: Principal): Promise<{ details: WriteDetails }> {
  assertMayConfigureSmtp(actor);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    if (!(await deleteSmtpSettings(write, instance.id))) throw new NotFound('no SMTP server is set');
    return { details: writeDetails(write, instance.id) };
  });
}

/**
 * `POST /admin/v1/smtp/_test`: one mail through the SMTP server mails go
 * through now; the server's refusal or the connection's failure is the
 * answer's message (never a password: nodemailer's errors carry none).
 */
export async function sendTestMail(
  db: Database,
  sealingKey: Buffer,
  fromEnvironment: SmtpSettings | undefined,
  actor: Principal,
  receiverAddress: string,
): Promise<Record<string, never>> {
  assertMayConfigureSmtp(actor);
  const settings = await effectiveSmtpSettings(db, sealingKey, fromEnvironment);
  if (!settings) throw new InvalidArgument('no SMTP server is set: mails go to the outbox folder');
  try {
    await smtpSender(settings).send({ to: receiverAddress, ...testMail(), type: 'Test', userId: actor.userId });
  } catch (err) {
    throw new InvalidArgument(`the test mail was not sent: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 500)}`);
  }
  return {};
}
