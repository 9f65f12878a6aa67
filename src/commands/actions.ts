import { conditionKey, conditionOf, targetFitsCondition, timeoutMs, type ConditionInput, type FunctionName, type TargetType } from '../domain/actions.ts';
import { AlreadyExists, InvalidArgument, NotFound, type FieldViolation } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { seal } from '../keys/sealing.ts';
import { assertMayConfigureActions } from '../queries/actions.ts';
import { generateSecret } from '../security/secrets.ts';
import { saveExecution, servesFunction } from '../storage/action-executions.ts';
import {
  deleteTarget,
  findTarget,
  findTargets,
  insertTarget,
  signingKeyAad,
  targetNameTaken,
  updateTarget,
  type TargetChange,
} from '../storage/action-targets.ts';
import type { Database, Transaction } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import type { Announce } from '../storage/invalidation.ts';

/** The body of `POST` and `PUT /v2beta/actions/targets` (docs/api/actions.md), checked by its schema. */
export interface TargetInput {
  name: string;
  endpoint: string;
  timeout: string;
  restWebhook?: { interruptOnError?: boolean };
  restCall?: { interruptOnError?: boolean };
  restAsync?: Record<string, never>;
}

export interface ExecutionInput {
  condition: ConditionInput & { function?: { name: FunctionName } };
  targets: Array<{ target: string }>;
}

function targetChange(input: TargetInput): TargetChange {
  const type: TargetType = input.restWebhook ? 'restWebhook' : input.restCall ? 'restCall' : 'restAsync';
  return {
    name: input.name,
    endpoint: input.endpoint,
    // The schema's own check has passed.
    timeoutMs: timeoutMs(input.timeout)!,
    type,
    interruptOnError: (input.restWebhook ?? input.restCall)?.interruptOnError ?? false,
  };
}

async function instanceIdIn(tx: Transaction): Promise<string> {
  const instance = await findInstance(tx);
  if (!instance) throw new NotFound('the instance is not set up');
  return instance.id;
}

async function assertNameFree(tx: Transaction, name: string, exceptId: string | null): Promise<void> {
  if (await targetNameTaken(tx, name, exceptId)) throw new AlreadyExists('a target with this name exists');
}

/** `POST /v2beta/actions/targets`: the signing key is in this answer only; stored sealed. */
export async function addTarget(
  db: Database,
  sealingKey: Buffer,
  actor: Principal,
  input: TargetInput,
): Promise<{ id: string; creationDate: string; signingKey: string; details: WriteDetails }> {
  assertMayConfigureActions(actor);
  const id = newId();
  const signingKey = generateSecret();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const owner = await instanceIdIn(tx);
    await assertNameFree(tx, input.name, null);
    await insertTarget(write, owner, id, targetChange(input), seal(sealingKey, Buffer.from(signingKey, 'utf8'), signingKeyAad(id)));
    const details = writeDetails(write, owner);
    return { id, creationDate: details.creationDate, signingKey, details };
  });
}

/** `PUT /v2beta/actions/targets/{id}`: the signing key stays. */
export async function changeTarget(db: Database, announce: Announce, actor: Principal, id: string, input: TargetInput): Promise<{ details: WriteDetails }> {
  assertMayConfigureActions(actor);
  const change = targetChange(input);
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const owner = await instanceIdIn(tx);
    if (!(await findTarget(tx, id))) throw new NotFound('no such target');
    await assertNameFree(tx, input.name, id);
    if (change.type !== 'restCall') {
      if (await servesFunction(tx, id))
        throw new InvalidArgument('a target of a function execution must stay restCall', [
          { field: 'restCall', description: 'is required: the target serves a function execution' },
        ]);
    }
    await updateTarget(write, owner, id, change);
    return { details: writeDetails(write, owner) };
  });
  announce('actions');
  return result;
}

export async function removeTarget(db: Database, announce: Announce, actor: Principal, id: string): Promise<{ details: WriteDetails }> {
  assertMayConfigureActions(actor);
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const owner = await instanceIdIn(tx);
    if (!(await findTarget(tx, id))) throw new NotFound('no such target');
    await deleteTarget(write, owner, id);
    return { details: writeDetails(write, owner) };
  });
  announce('actions');
  return result;
}

/** Every target named must exist, once, and fit the condition (token hooks need restCall targets). */
async function targetViolations(tx: Transaction, input: ExecutionInput): Promise<FieldViolation[]> {
  const condition = conditionOf(input.condition);
  const ids = input.targets.map((t) => t.target);
  const found = new Map((await findTargets(tx, ids)).map((target) => [target.id, target]));
  return ids.flatMap((id, i): FieldViolation[] => {
    const field = `targets[${i}].target`;
    if (ids.indexOf(id) !== i) return [{ field, description: 'names a target already in the list' }];
    const target = found.get(id);
    if (!target) return [{ field, description: 'is not a known target' }];
    if (!targetFitsCondition(target.type, condition)) return [{ field, description: 'must be a restCall target: a function waits for its answer' }];
    return [];
  });
}

/** `PUT /v2beta/actions/executions`: sets a condition's targets; an empty list removes the execution. */
export async function setExecution(
  db: Database,
  announce: Announce,
  actor: Principal,
  input: ExecutionInput,
): Promise<{ details: WriteDetails; setDate: string }> {
  assertMayConfigureActions(actor);
  const result = await db.transaction(async (tx) => {
    // After the write's lock: no target named here can be removed before this write commits.
    const write = await beginWrite(tx, actor);
    const violations = await targetViolations(tx, input);
    if (violations.length) throw new InvalidArgument(`invalid request: ${violations.map((v) => `${v.field} ${v.description}`).join('; ')}`, violations);
    const owner = await instanceIdIn(tx);
    const key = conditionKey(conditionOf(input.condition));
    if (
      !(await saveExecution(
        write,
        owner,
        key,
        input.targets.map((t) => t.target),
      ))
    )
      throw new NotFound('no execution is set for this condition');
    const details = writeDetails(write, owner);
    return { details, setDate: details.changeDate };
  });
  announce('actions');
  return result;
}
