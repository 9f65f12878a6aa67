import { conditionKey } from '../domain/actions.ts';
import type { HookFunction } from '../domain/token-hooks.ts';
import { unseal } from '../keys/sealing.ts';
import { functionExecutions } from '../storage/action-executions.ts';
import { findTargets, signingKeyAad } from '../storage/action-targets.ts';
import type { Queryable } from '../storage/database.ts';
import { TtlCache } from '../storage/ttl-cache.ts';

/** A restCall target of a token hook, its signing key open. */
export interface HookTarget {
  id: string;
  endpoint: string;
  timeoutMs: number;
  interruptOnError: boolean;
  signingKey: string;
}

/**
 * Bounds how stale a node's list is when an invalidation message is lost;
 * the change itself clears every node's list at once (storage/invalidation.ts).
 */
export const HOOK_TARGETS_TTL_MS = 5_000;

export interface HookTargets {
  /** The targets of a function in the order they are called; none when no execution is set. */
  of(name: HookFunction): Promise<HookTarget[]>;
  clear(): void;
}

async function loadAll(db: Queryable, sealingKey: Buffer): Promise<Map<string, HookTarget[]>> {
  const executions = await functionExecutions(db);
  const byCondition = new Map<string, HookTarget[]>();
  if (!executions.length) return byCondition;
  const targets = new Map((await findTargets(db, [...new Set(executions.flatMap((e) => e.targetIds))])).map((t) => [t.id, t]));
  for (const execution of executions) {
    const called = execution.targetIds.flatMap((id) => {
      const target = targets.get(id);
      if (!target) return [];
      const signingKey = unseal(sealingKey, target.signingKeySealed, signingKeyAad(target.id)).toString('utf8');
      return [{ id, endpoint: target.endpoint, timeoutMs: target.timeoutMs, interruptOnError: target.interruptOnError, signingKey }];
    });
    byCondition.set(execution.conditionKey, called);
  }
  return byCondition;
}

/**
 * The token hooks' targets per node, read in one go: a token request asks
 * this list, never the database, so with no hook set it costs nothing. A
 * failed read keeps the last list (for one more lifetime) rather than
 * failing token requests that need no database otherwise.
 */
export function hookTargets(db: Queryable, sealingKey: Buffer, onError: (err: unknown) => void): HookTargets {
  let last = new Map<string, HookTarget[]>();
  const load = async () => {
    try {
      last = await loadAll(db, sealingKey);
    } catch (err) {
      onError(err);
    }
    return last;
  };
  const cache = new TtlCache<'all', Map<string, HookTarget[]>>(load, { ttlMs: HOOK_TARGETS_TTL_MS });
  return {
    async of(name) {
      return (await cache.get('all')).get(conditionKey({ kind: 'function', name })) ?? [];
    },
    clear: () => cache.clear(),
  };
}
