import type { Queryable } from '../storage/database.ts';
import { featureEnabled, featureState, type FeatureName } from '../storage/features.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';

export type { FeatureName } from '../storage/features.ts';

export interface InstanceFeaturesView {
  details: WriteDetails;
  oidcTokenExchange: { enabled: boolean };
}

/** `GET /v2/features/instance`: every flag, off unless set. */
export async function getInstanceFeatures(db: Queryable, actor: Principal): Promise<InstanceFeaturesView> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('instance features require IAM_OWNER');
  const state = await featureState(db);
  if (!state) throw new NotFound('the instance is not set up');
  return {
    details: readDetails({ sequence: state.sequence, creation_date: state.creationDate, change_date: state.changeDate }, state.instanceId),
    oidcTokenExchange: { enabled: state.flags.get('oidcTokenExchange') ?? false },
  };
}

/** Whether an instance feature is on (for the engine, e.g. token exchange); off when never set. */
export function isFeatureEnabled(db: Queryable, name: FeatureName): Promise<boolean> {
  return featureEnabled(db, name);
}
