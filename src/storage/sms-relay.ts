import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

/** The SMS relay set through the admin API, its signing key still sealed. */
export interface StoredSmsRelay {
  endpoint: string;
  signingKeySealed: Buffer;
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

/** What the signing key's seal is bound to (src/keys/sealing.ts). */
export const SMS_SIGNING_KEY_AAD = 'sms_relay_settings.signing_key';

export async function findSmsRelay(db: Queryable): Promise<StoredSmsRelay | undefined> {
  const { rows } = await db.query<{ endpoint: string; signing_key_sealed: Uint8Array; sequence: string; creation_date: Date; change_date: Date }>(
    'SELECT endpoint, signing_key_sealed, sequence::text AS sequence, creation_date, change_date FROM sms_relay_settings',
  );
  const row = rows[0];
  return (
    row && {
      endpoint: row.endpoint,
      signingKeySealed: Buffer.from(row.signing_key_sealed),
      sequence: row.sequence,
      creationDate: new Date(row.creation_date),
      changeDate: new Date(row.change_date),
    }
  );
}

/** Sets the relay (`instance.sms.config.http.set`, the endpoint only: never the key). */
export async function saveSmsRelay(write: Write, instanceId: string, relay: { endpoint: string; signingKeySealed: Buffer }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'instance',
    aggregateId: instanceId,
    type: 'instance.sms.config.http.set',
    resourceOwner: instanceId,
    payload: { endpoint: relay.endpoint },
  });
  await write.tx.query(
    `INSERT INTO sms_relay_settings (id, endpoint, signing_key_sealed, sequence, creation_date, change_date) VALUES (true, $1, $2, $3, $4, $4)
     ON CONFLICT (id) DO UPDATE SET endpoint = EXCLUDED.endpoint, signing_key_sealed = EXCLUDED.signing_key_sealed, sequence = EXCLUDED.sequence, change_date = EXCLUDED.change_date`,
    [relay.endpoint, relay.signingKeySealed, sequence, write.at],
  );
}

/** False when none was set (`instance.sms.config.http.removed`). */
export async function deleteSmsRelay(write: Write, instanceId: string): Promise<boolean> {
  const removed = await write.tx.query('DELETE FROM sms_relay_settings');
  if (removed.rowCount === 0) return false;
  await write.append({ aggregateType: 'instance', aggregateId: instanceId, type: 'instance.sms.config.http.removed', resourceOwner: instanceId });
  return true;
}
