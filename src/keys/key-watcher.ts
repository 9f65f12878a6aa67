import type { Database } from '../storage/database.ts';
import type { Logger } from '../logger.ts';
import { loadSigningKeys, type SigningKey } from './signing-keys.ts';
import { advanceSigningKeys } from './rotation.ts';
import { keySchedule } from './schedule.ts';

export interface KeyWatcherOptions {
  db: Database;
  sealingKey: Buffer;
  /** Seconds a retired key stays published (the longest token lifetime). */
  retainFor: number;
  rotationInterval: number;
  pollMs: number;
  log: Logger;
  /** Called with the new key set, current key first, whenever it changes. */
  onChange(keys: SigningKey[]): void;
}

export interface KeyWatcher {
  /** Checks the schedule now (after an on-demand rotation on this node). */
  refresh(): Promise<void>;
  stop(): void;
}

/**
 * Every node polls the key schedule (a cheap query, no decryption) and
 * rebuilds its engine when the published set changes: a rotation on any
 * node, or a next key reaching its activation time, reaches every node
 * within one poll. Housekeeping (retiring, scheduling the next key) is done
 * by whichever node notices first.
 */
export function watchSigningKeys(options: KeyWatcherOptions, initialFingerprint: string): KeyWatcher {
  let fingerprint = initialFingerprint;
  let queue = Promise.resolve();
  let busy = false;

  const check = async () => {
    let schedule = await keySchedule(options.db, options.retainFor);
    if (schedule.needsHousekeeping) {
      await advanceSigningKeys(options.db, options.sealingKey, { interval: options.rotationInterval });
      schedule = await keySchedule(options.db, options.retainFor);
    }
    if (schedule.fingerprint === fingerprint) return;
    const keys = await loadSigningKeys(options.db, options.sealingKey, options.retainFor);
    fingerprint = keys.map((k) => k.kid).join(',');
    options.onChange(keys);
    options.log.info({ kids: keys.map((k) => k.kid) }, 'signing keys changed; engine rebuilt');
  };
  // Checks run one after another; a refresh always runs a check that starts
  // after it was asked for, so it sees a rotation committed just before.
  const refresh = () =>
    (queue = queue.then(async () => {
      busy = true;
      try {
        await check();
      } catch (err) {
        options.log.warn({ err }, 'signing key check failed');
      } finally {
        busy = false;
      }
    }));

  const timer = setInterval(() => {
    if (!busy) void refresh();
  }, options.pollMs);
  timer.unref();
  return { refresh, stop: () => clearInterval(timer) };
}
