import type { Queryable } from './database.ts';

export interface SecondFactors {
  /** A confirmed authenticator app. */
  otp: boolean;
  passkey: boolean;
}

/** Which second factors a user has, in one statement: every password login asks. */
export async function secondFactorsOf(db: Queryable, userId: string): Promise<SecondFactors> {
  const { rows } = await db.query<SecondFactors>(
    `SELECT EXISTS (SELECT 1 FROM user_otp WHERE user_id = $1 AND ready) AS otp,
            EXISTS (SELECT 1 FROM user_passkeys WHERE user_id = $1) AS passkey`,
    [userId],
  );
  return rows[0] ?? { otp: false, passkey: false };
}
