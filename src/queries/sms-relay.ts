import type { Queryable } from '../storage/database.ts';
import { findSmsRelay, SMS_SIGNING_KEY_AAD } from '../storage/sms-relay.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';
import { unseal } from '../keys/sealing.ts';
import { smsRelaySender, type SmsSender } from '../outbound/sms-relay.ts';
import type { OutboundFetch } from '../outbound/client.ts';

export function assertMayConfigureSms(actor: Principal): void {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('the SMS relay requires IAM_OWNER');
}

/** `GET /admin/v1/sms/http`: the endpoint, never the signing key; `{}` while none is set. */
export async function getSmsRelay(db: Queryable, actor: Principal): Promise<{ endpoint?: string; details?: WriteDetails }> {
  assertMayConfigureSms(actor);
  const relay = await findSmsRelay(db);
  const instance = await findInstance(db);
  if (!relay || !instance) return {};
  return {
    endpoint: relay.endpoint,
    details: readDetails({ sequence: relay.sequence, creation_date: relay.creationDate, change_date: relay.changeDate }, instance.id),
  };
}

/**
 * The sender of the relay set now, its key unsealed, or undefined while none
 * is set (the worker asks once per batch, so a change applies on every node
 * without a cache). The relay is the instance owner's setting: `fetch` may
 * reach loopback and private addresses.
 */
export async function effectiveSmsSender(db: Queryable, sealingKey: Buffer, fetch: OutboundFetch): Promise<SmsSender | undefined> {
  const relay = await findSmsRelay(db);
  if (!relay) return undefined;
  return smsRelaySender(fetch, { endpoint: relay.endpoint, signingKey: unseal(sealingKey, relay.signingKeySealed, SMS_SIGNING_KEY_AAD).toString('utf8') });
}
