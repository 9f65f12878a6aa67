import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { deleteSmsRelay, findSmsRelay, saveSmsRelay, SMS_SIGNING_KEY_AAD } from '../storage/sms-relay.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { seal } from '../keys/sealing.ts';
import { generateSecret } from '../security/secrets.ts';
import { assertMayConfigureSms } from '../queries/sms-relay.ts';

/**
 * `PUT /admin/v1/sms/http` (IAM_OWNER): the relay's endpoint. The first PUT
 * makes the signing key and answers it, once; later ones keep it (a new key
 * needs DELETE then PUT). The key is sealed at rest.
 */
export async function setSmsRelay(
  db: Database,
  sealingKey: Buffer,
  actor: Principal,
  endpoint: string,
): Promise<{ details: WriteDetails; signingKey?: string }> {
  assertMayConfigureSms(actor);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    const stored = await findSmsRelay(tx);
    const signingKey = stored ? undefined : generateSecret(32);
    const signingKeySealed = stored ? stored.signingKeySealed : seal(sealingKey, Buffer.from(signingKey!, 'utf8'), SMS_SIGNING_KEY_AAD);
    await saveSmsRelay(write, instance.id, { endpoint, signingKeySealed });
    return { details: writeDetails(write, instance.id), ...(signingKey ? { signingKey } : {}) };
  });
}

/** `DELETE /admin/v1/sms/http`: no SMS goes out any more (they wait and are retried); 404 when none was set. */
export async function removeSmsRelay(db: Database, actor: Principal): Promise<{ details: WriteDetails }> {
  assertMayConfigureSms(actor);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    if (!(await deleteSmsRelay(write, instance.id))) throw new NotFound('no SMS relay is set');
    return { details: writeDetails(write, instance.id) };
  });
}
