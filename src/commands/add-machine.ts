import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails } from '../storage/event-log.ts';
import { addMachine, userNameTaken } from '../storage/users.ts';
import { AlreadyExists } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { DEFAULT_MACHINE_ACCESS_TOKEN_TYPE, type MachineAccessTokenType } from '../domain/users.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import type { AddUserResult } from './add-human.ts';

/** A machine user as the API describes it (docs/api/users.md), already schema-valid. */
export interface MachineInput {
  userName: string;
  name: string;
  description?: string;
  accessTokenType?: MachineAccessTokenType;
}

/** `POST /management/v1/users/machine`: a machine user in the acting org; its userName is unique there. */
export async function addMachineUser(db: Database, actor: Principal, orgId: string, machine: MachineInput): Promise<AddUserResult> {
  assertMayManageUsers(actor, orgId);
  const userId = newId();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    if (await userNameTaken(tx, orgId, machine.userName)) throw new AlreadyExists(`a user named "${machine.userName}" already exists in this organization`);
    await addMachine(write, {
      id: userId,
      orgId,
      userName: machine.userName,
      name: machine.name,
      description: machine.description || null,
      accessTokenType: machine.accessTokenType ?? DEFAULT_MACHINE_ACCESS_TOKEN_TYPE,
    });
    return { userId, details: writeDetails(write, orgId) };
  });
}
