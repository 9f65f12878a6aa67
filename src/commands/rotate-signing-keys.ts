import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { advanceSigningKeysIn } from '../keys/rotation.ts';
import { PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';

export interface KeyRotationSettings {
  sealingKey: Buffer;
  /** KEY_ROTATION_INTERVAL in seconds. */
  interval: number;
}

/** On-demand rotation (docs/api/signing-keys.md): the published next key signs from now on; logged as an event. */
export async function rotateSigningKeys(db: Database, settings: KeyRotationSettings, actor: Principal): Promise<{ details: WriteDetails }> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('rotating signing keys requires IAM_OWNER');
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await advanceSigningKeysIn(tx, settings.sealingKey, { interval: settings.interval, force: true });
    const instance = await findInstance(tx);
    const instanceId = instance?.id ?? 'instance';
    await write.append({ aggregateType: 'instance', aggregateId: instanceId, type: 'instance.signing_keys.rotated', resourceOwner: instanceId });
    return { details: writeDetails(write, instanceId) };
  });
}
