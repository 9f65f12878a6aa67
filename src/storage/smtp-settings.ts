import type { SmtpTls } from '../outbound/smtp-settings.ts';
import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

/** The SMTP server set through the admin API, its password still sealed. */
export interface StoredSmtpSettings {
  senderAddress: string;
  senderName: string;
  host: string;
  port: number;
  user: string;
  passwordSealed: Buffer | null;
  tls: SmtpTls;
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

/** What the password's seal is bound to (src/keys/sealing.ts). */
export const SMTP_PASSWORD_AAD = 'smtp_settings.password';

interface Row {
  sender_address: string;
  sender_name: string;
  host: string;
  port: number;
  username: string;
  password_sealed: Buffer | Uint8Array | null;
  tls: SmtpTls;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

export async function findSmtpSettings(db: Queryable): Promise<StoredSmtpSettings | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT sender_address, sender_name, host, port, username, password_sealed, tls, sequence::text AS sequence, creation_date, change_date FROM smtp_settings`,
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    senderAddress: row.sender_address,
    senderName: row.sender_name,
    host: row.host,
    port: row.port,
    user: row.username,
    passwordSealed: row.password_sealed ? Buffer.from(row.password_sealed) : null,
    tls: row.tls,
    sequence: row.sequence,
    creationDate: new Date(row.creation_date),
    changeDate: new Date(row.change_date),
  };
}

export type SmtpSettingsChange = Omit<StoredSmtpSettings, 'sequence' | 'creationDate' | 'changeDate'>;

/** Sets the one SMTP server, with its event (which never carries the password). */
export async function saveSmtpSettings(write: Write, instanceId: string, settings: SmtpSettingsChange): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'instance',
    aggregateId: instanceId,
    type: 'instance.smtp.config.set',
    resourceOwner: instanceId,
    payload: {
      senderAddress: settings.senderAddress,
      senderName: settings.senderName,
      host: settings.host,
      port: settings.port,
      user: settings.user,
      tls: settings.tls,
      hasPassword: settings.passwordSealed !== null,
    },
  });
  await write.tx.query(
    `INSERT INTO smtp_settings (id, sender_address, sender_name, host, port, username, password_sealed, tls, sequence, creation_date, change_date)
     VALUES (true, $1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     ON CONFLICT (id) DO UPDATE SET sender_address = EXCLUDED.sender_address, sender_name = EXCLUDED.sender_name, host = EXCLUDED.host,
       port = EXCLUDED.port, username = EXCLUDED.username, password_sealed = EXCLUDED.password_sealed, tls = EXCLUDED.tls,
       sequence = EXCLUDED.sequence, change_date = EXCLUDED.change_date`,
    [settings.senderAddress, settings.senderName, settings.host, settings.port, settings.user, settings.passwordSealed, settings.tls, sequence, write.at],
  );
}

/** Removes the SMTP server; answers whether there was one. */
export async function deleteSmtpSettings(write: Write, instanceId: string): Promise<boolean> {
  const { rowCount } = await write.tx.query('DELETE FROM smtp_settings');
  if (!rowCount) return false;
  await write.append({ aggregateType: 'instance', aggregateId: instanceId, type: 'instance.smtp.config.removed', resourceOwner: instanceId });
  return true;
}
