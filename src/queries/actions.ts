import { conditionFromKey, conditionToWire, timeoutText, type ConditionInput, type TargetType } from '../domain/actions.ts';
import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';
import { pageOf, type PageRequest, type SearchResult } from '../domain/search.ts';
import { deliveryState, type DeliveryState } from '../storage/action-deliveries.ts';
import { listExecutions, type StoredExecution } from '../storage/action-executions.ts';
import { findTarget, listTargets, type StoredTarget } from '../storage/action-targets.ts';
import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';

// The reads of the actions API (docs/api/actions.md): targets without their
// signing keys, executions, and a target's delivery state.

export function assertMayConfigureActions(actor: Principal): void {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('actions require IAM_OWNER');
}

/** A target on read: never its signing key, shown once at creation. */
export interface TargetView {
  id: string;
  details: WriteDetails;
  name: string;
  endpoint: string;
  timeout: string;
  restWebhook?: { interruptOnError: boolean };
  restCall?: { interruptOnError: boolean };
  restAsync?: Record<string, never>;
}

export interface ExecutionView {
  details: WriteDetails;
  condition: ConditionInput;
  targets: Array<{ target: string }>;
}

export function targetTypeFields(type: TargetType, interruptOnError: boolean): Pick<TargetView, TargetType> {
  return type === 'restAsync' ? { restAsync: {} } : { [type]: { interruptOnError } };
}

function details(row: { sequence: string; creationDate: Date; changeDate: Date }, instanceId: string): WriteDetails {
  return readDetails({ sequence: row.sequence, creation_date: row.creationDate, change_date: row.changeDate }, instanceId);
}

function targetView(target: StoredTarget, instanceId: string): TargetView {
  return {
    id: target.id,
    details: details(target, instanceId),
    name: target.name,
    endpoint: target.endpoint,
    timeout: timeoutText(target.timeoutMs),
    ...targetTypeFields(target.type, target.interruptOnError),
  };
}

function executionView(execution: StoredExecution, instanceId: string): ExecutionView {
  return {
    details: details(execution, instanceId),
    condition: conditionToWire(conditionFromKey(execution.conditionKey)),
    targets: execution.targetIds.map((target) => ({ target })),
  };
}

async function instanceId(db: Queryable): Promise<string> {
  const instance = await findInstance(db);
  if (!instance) throw new NotFound('the instance is not set up');
  return instance.id;
}

function searchAnswer<T>(total: number, result: T[]): SearchResult<T> {
  return { details: { totalResult: String(total), viewTimestamp: new Date().toISOString() }, result };
}

export async function getTarget(db: Queryable, actor: Principal, id: string): Promise<{ target: TargetView }> {
  assertMayConfigureActions(actor);
  const target = await findTarget(db, id);
  if (!target) throw new NotFound('no such target');
  return { target: targetView(target, await instanceId(db)) };
}

export async function searchTargets(db: Queryable, actor: Principal, request: { query?: PageRequest }): Promise<SearchResult<TargetView>> {
  assertMayConfigureActions(actor);
  const owner = await instanceId(db);
  const { total, rows } = await listTargets(db, pageOf(request.query));
  return searchAnswer(
    total,
    rows.map((row) => targetView(row, owner)),
  );
}

export async function searchExecutions(db: Queryable, actor: Principal, request: { query?: PageRequest }): Promise<SearchResult<ExecutionView>> {
  assertMayConfigureActions(actor);
  const owner = await instanceId(db);
  const { total, rows } = await listExecutions(db, pageOf(request.query));
  return searchAnswer(
    total,
    rows.map((row) => executionView(row, owner)),
  );
}

/** `GET /v2beta/actions/targets/{id}/state`: the last event delivered (or given up) and the failures at the next one. */
export async function getDeliveryState(db: Queryable, actor: Principal, id: string): Promise<DeliveryState> {
  assertMayConfigureActions(actor);
  const state = await deliveryState(db, id);
  if (!state) throw new NotFound('no such target');
  return state;
}
