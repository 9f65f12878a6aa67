/**
 * One kind of policy (lockout, login, ...): its name in paths, events and
 * storage, its built-in defaults and the JSON Schema of its fields. Every
 * kind is stored and served the same way: an instance default that IAM
 * owners set, and an org override that org owners set and remove
 * (docs/api/policies.md).
 */
import type { FieldViolation } from '../errors.ts';

export interface PolicyKind<T extends object> {
  /** `lockout` → `/admin/v1/policies/lockout`, events `instance.policy.lockout.set`. */
  name: string;
  defaults: Readonly<T>;
  /** Schema of a PUT body: the kind's fields, each optional, no others. */
  schema: { type: 'object'; properties: Record<keyof T, object>; additionalProperties: false };
  /** What makes a whole policy unusable although each field is valid (checked on the settings a PUT leads to). */
  problems?(settings: T): FieldViolation[];
}

/** The policy of `kind` that applies to users of `orgId`: the org's override, else the instance default, else the built-in defaults. */
export type EffectivePolicy = <T extends object>(kind: PolicyKind<T>, orgId: string) => Promise<T>;

/** Settings as stored, completed with the defaults of fields stored before they existed. */
export function withDefaults<T extends object>(kind: PolicyKind<T>, stored: Partial<T> | undefined): T {
  const merged = { ...kind.defaults } as T;
  if (!stored) return merged;
  for (const field of Object.keys(kind.defaults) as Array<keyof T>) {
    if (stored[field] !== undefined) merged[field] = stored[field] as T[keyof T];
  }
  return merged;
}
