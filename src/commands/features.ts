import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { INSTANCE_FEATURES, setFeature } from '../storage/features.ts';
import { InvalidArgument, NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';

/** `PUT /v2/features/instance`: the flags present in the body are set; the others keep their value. */
export type FeaturesInput = Partial<Record<(typeof INSTANCE_FEATURES)[number], boolean>>;

export async function setInstanceFeatures(db: Database, announce: Announce, actor: Principal, input: FeaturesInput): Promise<{ details: WriteDetails }> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('instance features require IAM_OWNER');
  const changes = INSTANCE_FEATURES.flatMap((name) => (input[name] === undefined ? [] : [{ name, enabled: input[name] }]));
  if (!changes.length) throw new InvalidArgument(`no feature given; known features: ${INSTANCE_FEATURES.join(', ')}`);
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instance = await findInstance(tx);
    if (!instance) throw new NotFound('the instance is not set up');
    for (const change of changes) await setFeature(write, { instanceId: instance.id, ...change });
    return { details: writeDetails(write, instance.id) };
  });
  announce('features');
  return result;
}
