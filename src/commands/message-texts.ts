import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { putMessageTexts, removeMessageTexts } from '../storage/message-texts.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { MESSAGE_TEXT_FIELDS, type MessageTexts } from '../domain/message-texts.ts';
import { assertMayWordMessages, messageTextKey } from '../queries/message-texts.ts';

/**
 * `PUT /management/v1/text/message/{type}/{lang}` (ORG_OWNER): the org's own
 * texts of the message, replacing any it had; a field left out or empty
 * keeps the built-in text. The body is schema-valid.
 */
export async function setMessageTexts(
  db: Database,
  actor: Principal,
  orgId: string,
  path: { type: string; language: string },
  input: Partial<MessageTexts>,
): Promise<{ details: WriteDetails }> {
  const key = { orgId, ...messageTextKey(path.type, path.language) };
  assertMayWordMessages(actor, orgId);
  const texts: Partial<MessageTexts> = {};
  for (const field of MESSAGE_TEXT_FIELDS) if (input[field]) texts[field] = input[field];
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await putMessageTexts(write, key, texts);
    return { details: writeDetails(write, orgId) };
  });
}

/** `DELETE /management/v1/text/message/{type}/{lang}`: back to the built-in texts; 404 when the org had none of its own. */
export async function resetMessageTexts(
  db: Database,
  actor: Principal,
  orgId: string,
  path: { type: string; language: string },
): Promise<{ details: WriteDetails }> {
  const key = { orgId, ...messageTextKey(path.type, path.language) };
  assertMayWordMessages(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    if (!(await removeMessageTexts(write, key))) throw new NotFound('the org has no texts of its own for this message and language');
    return { details: writeDetails(write, orgId) };
  });
}
