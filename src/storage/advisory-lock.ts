import type { Queryable } from './database.ts';

/** What one transaction-scoped lock serialises; each name is one lock per schema. */
export type LockName = 'events' | 'migrate' | 'signing_keys' | 'console_app' | 'first_start';

/**
 * Serialises the rest of the caller's transaction against every other
 * transaction holding the same lock, on every node: the lock is PostgreSQL's
 * (released at commit or rollback) and keyed by the schema too, so test
 * servers sharing a database do not wait for each other.
 */
export async function lockForTransaction(tx: Queryable, name: LockName): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('portcullis.' || $1 || '.' || current_schema()))", [name]);
}
