import { UsageError, type Values } from './args.ts';
import type { Command } from './command.ts';
import { count } from './option-values.ts';

// The lockout policy commands: show, set and reset the org's policy or,
// with --instance, the instance default.

/** Where a lockout policy command acts: the instance default (--instance) or the org. */
function lockoutPath(values: Values): string {
  return values.instance === true ? '/admin/v1/policies/lockout' : '/management/v1/policies/lockout';
}

function lockoutLines(policy: Record<string, any>): string[] {
  const lock = policy.lockoutDurationSeconds === 0 ? 'until an admin unlocks' : `${policy.lockoutDurationSeconds} s`;
  const attempts = (n: number) => (n === 0 ? '0 (no lockout)' : String(n));
  return [
    `maxPasswordAttempts: ${attempts(policy.maxPasswordAttempts)}`,
    `maxOtpAttempts: ${attempts(policy.maxOtpAttempts)}`,
    `lockoutDurationSeconds: ${policy.lockoutDurationSeconds} (locked ${lock})`,
  ];
}

export const POLICY_COMMANDS: Command[] = [
  {
    name: 'lockout-policy',
    summary: 'show the lockout policy of the org (or with --instance the instance default)',
    options: { instance: { type: 'boolean', description: 'the instance default (needs IAM_OWNER)' } },
    required: [],
    request: (values) => ({ method: 'GET', path: lockoutPath(values) }),
    describe: (r, v) => [
      v.instance === true ? 'Instance default lockout policy' : `Lockout policy of the org (${r.isDefault ? 'the instance default' : 'its own'})`,
      ...lockoutLines(r.policy),
    ],
  },
  {
    name: 'set-lockout-policy',
    summary: 'set the lockout policy of the org (or with --instance the instance default); options not given keep their value',
    options: {
      instance: { type: 'boolean', description: 'set the instance default (needs IAM_OWNER)' },
      'max-password-attempts': { type: 'string', arg: '<n>', description: 'failed password checks before the user is locked; 0: never lock' },
      'max-otp-attempts': { type: 'string', arg: '<n>', description: 'failed second-factor codes before the user is locked; 0: never lock' },
      'lockout-seconds': { type: 'string', arg: '<n>', description: 'how long a lock lasts; 0: until an admin unlocks' },
    },
    required: [],
    request(values) {
      const body = {
        maxPasswordAttempts: count('set-lockout-policy', values, 'max-password-attempts'),
        maxOtpAttempts: count('set-lockout-policy', values, 'max-otp-attempts'),
        lockoutDurationSeconds: count('set-lockout-policy', values, 'lockout-seconds'),
      };
      const given = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
      if (!Object.keys(given).length)
        throw new UsageError('give at least one of --max-password-attempts, --max-otp-attempts, --lockout-seconds', 'set-lockout-policy');
      return { method: 'PUT', path: lockoutPath(values), body: given };
    },
    describe: (_r, v) => [v.instance === true ? 'Set the instance default lockout policy.' : 'Set the lockout policy of the org.'],
  },
  {
    name: 'reset-lockout-policy',
    summary: "remove the org's own lockout policy: the instance default applies again",
    options: {},
    required: [],
    request: () => ({ method: 'DELETE', path: '/management/v1/policies/lockout' }),
    describe: () => ['The org follows the instance default lockout policy again.'],
  },
];
