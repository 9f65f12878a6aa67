import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import type { CodeChannel } from '../domain/code-factors.ts';

// Second factors made of codes sent to the user (migration 0062): by mail to
// its email address, by SMS to its phone. Only the set-up is kept here; the
// codes themselves are verification codes (digests only).

type UserRef = { id: string; orgId: string };

const EVENT_NAMES: Record<CodeChannel, string> = { email: 'user.human.otp.email', sms: 'user.human.otp.sms' };

/** Confirms the factor (`user.human.otp.email.added` / `…sms.added`); false when the user already had it. */
export async function addCodeFactor(write: Write, user: UserRef, channel: CodeChannel): Promise<boolean> {
  const { rowCount } = await write.tx.query(
    'INSERT INTO user_code_factors (user_id, channel, created_at) VALUES ($1, $2, $3) ON CONFLICT (user_id, channel) DO NOTHING',
    [user.id, channel, write.at],
  );
  if (rowCount !== 1) return false;
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: `${EVENT_NAMES[channel]}.added`, resourceOwner: user.orgId });
  return true;
}

/** Removes the factor (`….removed`); false when the user did not have it. */
export async function removeCodeFactor(write: Write, user: UserRef, channel: CodeChannel): Promise<boolean> {
  const { rowCount } = await write.tx.query('DELETE FROM user_code_factors WHERE user_id = $1 AND channel = $2', [user.id, channel]);
  if (rowCount !== 1) return false;
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: `${EVENT_NAMES[channel]}.removed`, resourceOwner: user.orgId });
  return true;
}

/** The channels the user has set up, whether or not their address or number is verified now. */
export async function codeFactorsOf(db: Queryable, userId: string): Promise<CodeChannel[]> {
  const { rows } = await db.query<{ channel: CodeChannel }>('SELECT channel FROM user_code_factors WHERE user_id = $1 ORDER BY channel', [userId]);
  return rows.map((row) => row.channel);
}
