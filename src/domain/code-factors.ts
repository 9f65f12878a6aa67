// Second factors made of codes sent to the user (docs/security.md, Second
// factors): by mail to its email address, by SMS to its phone number.

export type CodeChannel = 'email' | 'sms';

/** The verification-code purpose of each channel's sign-in codes. */
export const CODE_FACTOR_PURPOSES = { email: 'otp_email', sms: 'otp_sms' } as const;

/** The user's address or number a code of `channel` goes to is verified: the only place a sign-in code is sent. */
export function channelVerified(
  user: { email: string | null; email_verified: boolean | null; phone: string | null; phone_verified: boolean | null },
  channel: CodeChannel,
): boolean {
  return channel === 'email' ? Boolean(user.email && user.email_verified) : Boolean(user.phone && user.phone_verified);
}

/**
 * Where a password reset and its "password changed" go: to the email once
 * it is verified, else by SMS to a verified phone (a user who can only be
 * reached there), else to the email as it stands (docs/self-service.md).
 */
export function resetChannel(user: Parameters<typeof channelVerified>[0]): CodeChannel {
  return !channelVerified(user, 'email') && channelVerified(user, 'sms') ? 'sms' : 'email';
}
