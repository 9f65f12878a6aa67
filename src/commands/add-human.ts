import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { userNameTaken } from '../storage/users.ts';
import { AlreadyExists, InvalidArgument, fieldError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { orgPasswordPolicy } from '../queries/password-policy.ts';
import { prepareHuman, writeHuman, type HumanInput, type OrgSettings } from './setup-org.ts';
import { welcomeMail } from './email-verification.ts';
import type { CodeSettings } from './verification-codes.ts';

export interface AddUserResult {
  userId: string;
  details: WriteDetails;
}

/**
 * The password policy of `prepareHuman`, reported on this body's own
 * `password` field (prepareHuman names it below a prefix such as `human`).
 */
async function hashedPassword(db: Database, human: HumanInput, settings: OrgSettings, orgId: string): Promise<string | null> {
  try {
    const policy = await orgPasswordPolicy(db, settings.passwordComplexity, orgId);
    return (await prepareHuman(human, policy, 'human')).passwordHash;
  } catch (err) {
    if (err instanceof InvalidArgument && err.violations[0]?.field === 'human.password') throw fieldError('password', err.violations[0].description);
    throw err;
  }
}

/**
 * `POST /management/v1/users/human`: a human user in the acting org; its
 * userName is unique there. Without a password it is invited (`InitCode`),
 * else sent `VerifyEmail` unless its address is given as verified.
 */
export async function addHumanUser(
  db: Database,
  settings: OrgSettings,
  codes: CodeSettings,
  actor: Principal,
  orgId: string,
  human: HumanInput,
): Promise<AddUserResult> {
  assertMayManageUsers(actor, orgId);
  const passwordHash = await hashedPassword(db, human, settings, orgId);
  const userId = newId();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    if (await userNameTaken(tx, orgId, human.userName)) throw new AlreadyExists(`a user named "${human.userName}" already exists in this organization`);
    await writeHuman(write, human, { userId, orgId }, passwordHash);
    await welcomeMail(write, codes, userId, human);
    return { userId, details: writeDetails(write, orgId) };
  });
}
