import type { Database } from '../storage/database.ts';
import { beginWrite } from '../storage/event-log.ts';
import { emailOrLoginTaken, userNameTaken } from '../storage/users.ts';
import { AlreadyExists } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { orgPasswordPolicy } from '../queries/password-policy.ts';
import { prepareHuman, writeHuman, type HumanInput, type OrgSettings } from './setup-org.ts';
import { welcomeMail } from './email-verification.ts';
import type { CodeSettings } from './verification-codes.ts';

/**
 * Self-registration at the login UI (prompt=create): a human in the org of
 * the app being signed in to, with the email address as userName. The input
 * is schema-valid; the password policy is checked here. Its address is
 * not verified yet: it is sent `VerifyEmail`.
 */
export async function registerHuman(db: Database, settings: OrgSettings, codes: CodeSettings, orgId: string, human: HumanInput): Promise<string> {
  const policy = await orgPasswordPolicy(db, settings.passwordComplexity, orgId);
  const { passwordHash } = await prepareHuman(human, policy, 'human');
  const userId = newId();
  await db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    // The email is the new login name: it must not be anyone's email or
    // login name already. The answer is the same whichever org holds it, so
    // registration tells nothing about accounts of other orgs.
    if ((await userNameTaken(tx, orgId, human.userName)) || (await emailOrLoginTaken(tx, human.email.email))) {
      throw new AlreadyExists('this login name is not available');
    }
    await writeHuman(write, human, { userId, orgId }, passwordHash);
    await welcomeMail(write, codes, userId, human);
  });
  return userId;
}
