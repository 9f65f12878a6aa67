import { SECOND_FACTOR_REASON } from '../src/engine/interaction-policy.ts';
import { secondFactorRequired, type ForcedMfa } from '../src/engine/second-factor-rule.ts';
import type { Interaction } from './context.ts';

/**
 * The sign-in as a sequence of steps (docs/architecture.md):
 *
 *   login name → password | passkey → second factor | factor set-up
 *              → select account / consent → done
 *
 * The engine decides which prompt an authorization still owes (login,
 * consent, select_account, create: src/engine/interaction-policy.ts); this
 * module maps that prompt and the login's own pending state to the step
 * that shows the next page. Each step is one file in steps/.
 */
export type Step = 'consent' | 'register' | 'second-factor' | 'select-account' | 'login-name';

/**
 * The steps that may answer the interaction's page, in order: each either
 * renders its page or declines (the second factor of a user who has none,
 * the picker of a browser without accounts), and the login name always
 * answers. `other`: the user asked to sign in with another account.
 */
export function entrySteps(interaction: Pick<Interaction, 'prompt' | 'session'>, other: boolean): Step[] {
  const { prompt, session } = interaction;
  if (prompt.name === 'consent') return ['consent'];
  if (prompt.name === 'create') return ['register'];
  const steps: Step[] = [];
  // A session lacking only the second factor now required: the password is already proven by the session.
  if (prompt.name === 'login' && prompt.reasons.length === 1 && prompt.reasons[0] === SECOND_FACTOR_REASON && session?.accountId) steps.push('second-factor');
  if (prompt.name === 'select_account' && !other) steps.push('select-account');
  return [...steps, 'login-name'];
}

/**
 * After the first factor (a right password, or a new registration): the
 * email verification the login policy asks for (requireEmailVerification)
 * while the user's address is unverified, then the second factor the user
 * has, else the set-up a required second factor needs, else done. Later
 * steps of a login (a sign-in through an external provider) join here as
 * further outcomes.
 */
export type AfterFirstFactor = 'mail-verification' | 'second-factor' | 'factor-setup' | 'done';

export async function afterFirstFactor(state: {
  emailUnverified: () => Promise<boolean>;
  holdsFactor: boolean;
  factorRequired: () => Promise<boolean>;
}): Promise<AfterFirstFactor> {
  if (await state.emailUnverified()) return 'mail-verification';
  if (state.holdsFactor) return 'second-factor';
  return (await state.factorRequired()) ? 'factor-setup' : 'done';
}

/** A second factor is required of this login (src/engine/second-factor-rule.ts: forceMfa or acr_values=mfa). */
export function factorRequired(forcedMfa: ForcedMfa, interaction: Pick<Interaction, 'params'>, accountId: string, amr?: readonly string[]): Promise<boolean> {
  return secondFactorRequired(forcedMfa, accountId, (interaction.params as Record<string, unknown>).acr_values, amr);
}
