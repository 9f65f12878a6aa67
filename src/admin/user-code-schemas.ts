import type { FieldViolation } from '../domain/errors.ts';
import { humanSchema } from './schemas.ts';

// JSON Schemas of the calls that send or hand out codes (docs/api/users.md,
// "Invitations, verification and password reset").

/** `POST .../password/_reset`: exactly one of the two is true (the extra rule `oneDelivery`). */
export const passwordResetSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { sendMail: { type: 'boolean' }, returnCode: { type: 'boolean' } },
} as const;

export function oneDelivery(body: { sendMail?: unknown; returnCode?: unknown }): FieldViolation[] {
  const chosen = [body.sendMail, body.returnCode].filter((value) => value === true).length;
  return chosen === 1 ? [] : [{ field: 'sendMail', description: 'exactly one of sendMail and returnCode must be true' }];
}

/** `PUT .../email`: the create call's email, with its limits. */
export const emailSchema = humanSchema.properties.email;
