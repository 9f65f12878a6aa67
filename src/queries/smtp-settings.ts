import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';
import { unseal } from '../keys/sealing.ts';
import type { SmtpSettings, SmtpTls } from '../outbound/smtp-settings.ts';
import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { findSmtpSettings, SMTP_PASSWORD_AAD } from '../storage/smtp-settings.ts';

export type SmtpTlsName = 'TLS_MODE_NONE' | 'TLS_MODE_STARTTLS' | 'TLS_MODE_IMPLICIT';

export const TLS_NAMES: Record<SmtpTls, SmtpTlsName> = { none: 'TLS_MODE_NONE', starttls: 'TLS_MODE_STARTTLS', implicit: 'TLS_MODE_IMPLICIT' };

/** `GET /admin/v1/smtp`: never the password; `{}` when none is set. */
export interface SmtpSettingsView {
  details?: WriteDetails;
  senderAddress?: string;
  senderName?: string;
  host?: string;
  port?: number;
  user?: string;
  tls?: SmtpTlsName;
  /** Whether a password is stored, so a form can say so without it. */
  hasPassword?: boolean;
}

export function assertMayConfigureSmtp(actor: Principal): void {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('the SMTP settings require IAM_OWNER');
}

export async function getSmtpSettings(db: Queryable, actor: Principal): Promise<SmtpSettingsView> {
  assertMayConfigureSmtp(actor);
  const stored = await findSmtpSettings(db);
  if (!stored) return {};
  const instance = await findInstance(db);
  if (!instance) throw new NotFound('the instance is not set up');
  return {
    details: readDetails({ sequence: stored.sequence, creation_date: stored.creationDate, change_date: stored.changeDate }, instance.id),
    senderAddress: stored.senderAddress,
    senderName: stored.senderName,
    host: stored.host,
    port: stored.port,
    user: stored.user,
    tls: TLS_NAMES[stored.tls],
    hasPassword: stored.passwordSealed !== null,
  };
}

/** The SMTP server mails go through: the admin API's setting, else SMTP_URL's, else none (the outbox folder). */
export async function effectiveSmtpSettings(db: Queryable, sealingKey: Buffer, fromEnvironment: SmtpSettings | undefined): Promise<SmtpSettings | undefined> {
  const stored = await findSmtpSettings(db);
  if (!stored) return fromEnvironment;
  return {
    host: stored.host,
    port: stored.port,
    tls: stored.tls,
    senderAddress: stored.senderAddress,
    ...(stored.senderName ? { senderName: stored.senderName } : {}),
    ...(stored.user ? { user: stored.user } : {}),
    ...(stored.passwordSealed ? { password: unseal(sealingKey, stored.passwordSealed, SMTP_PASSWORD_AAD).toString('utf8') } : {}),
  };
}
