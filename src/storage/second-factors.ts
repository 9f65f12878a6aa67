import type { Queryable } from './database.ts';

export interface SecondFactors {
  /** A confirmed authenticator app. */
  otp: boolean;
  passkey: boolean;
  /** Codes by mail, while the email address is verified. */
  otpEmail: boolean;
  /** Codes by SMS, while the phone number is verified. */
  otpSms: boolean;
}

/** Which second factors a user has, in one statement: every password login asks. */
export async function secondFactorsOf(db: Queryable, userId: string): Promise<SecondFactors> {
  const { rows } = await db.query<SecondFactors>(
    `SELECT EXISTS (SELECT 1 FROM user_otp WHERE user_id = $1 AND ready) AS otp,
            EXISTS (SELECT 1 FROM user_passkeys WHERE user_id = $1) AS passkey,
            EXISTS (SELECT 1 FROM user_code_factors f JOIN users u ON u.id = f.user_id
                     WHERE f.user_id = $1 AND f.channel = 'email' AND u.email_verified AND u.email IS NOT NULL) AS "otpEmail",
            EXISTS (SELECT 1 FROM user_code_factors f JOIN users u ON u.id = f.user_id
                     WHERE f.user_id = $1 AND f.channel = 'sms' AND u.phone_verified AND u.phone IS NOT NULL) AS "otpSms"`,
    [userId],
  );
  return rows[0] ?? { otp: false, passkey: false, otpEmail: false, otpSms: false };
}
