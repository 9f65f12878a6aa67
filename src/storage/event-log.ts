import type { Transaction } from './database.ts';
import { lockForTransaction } from './advisory-lock.ts';

export interface NewEvent {
  aggregateType: string;
  aggregateId: string;
  type: string;
  resourceOwner: string;
  /** Never a secret: the log is kept for good. */
  payload?: Record<string, unknown>;
}

/** The `details` of a write (docs/api/README.md), as written on the wire. */
export interface WriteDetails {
  sequence: string;
  creationDate: string;
  changeDate: string;
  resourceOwner: string;
}

/**
 * One write: a transaction that appends events and updates the current-state
 * tables together. All its events share one timestamp, taken after the lock
 * so that dates grow with positions.
 */
export interface Write {
  tx: Transaction;
  at: Date;
  append(event: NewEvent): Promise<string>;
  /** Position of the last event appended so far. */
  readonly lastSequence: string;
}

/** Who makes a write: a user, possibly acting for another one (an impersonation token). */
export interface Editor {
  userId: string;
  impersonatorId?: string;
}

/**
 * Starts a write inside `tx`. The advisory lock serialises writers, so an
 * event's position is never lower than one committed before it. The events
 * name their editor as creator; under impersonation that is the actor, and
 * the user acted for is kept beside it (docs/security.md).
 */
export async function beginWrite(tx: Transaction, editor: Editor | null): Promise<Write> {
  const creator = editor ? (editor.impersonatorId ?? editor.userId) : null;
  const impersonated = editor?.impersonatorId ? editor.userId : null;
  await lockForTransaction(tx, 'events');
  const { rows } = await tx.query<{ at: Date }>('SELECT clock_timestamp() AS at');
  const at = new Date(rows[0]!.at);
  let lastSequence = '';
  return {
    tx,
    at,
    get lastSequence() {
      return lastSequence;
    },
    async append(event) {
      const result = await tx.query<{ position: string }>(
        `INSERT INTO events (aggregate_type, aggregate_id, event_type, resource_owner, creator, impersonated_user_id, payload, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING position::text AS position`,
        [event.aggregateType, event.aggregateId, event.type, event.resourceOwner, creator, impersonated, JSON.stringify(event.payload ?? {}), at],
      );
      lastSequence = result.rows[0]!.position;
      return lastSequence;
    },
  };
}

export function writeDetails(write: Write, resourceOwner: string): WriteDetails {
  const date = write.at.toISOString();
  return { sequence: write.lastSequence, creationDate: date, changeDate: date, resourceOwner };
}

/** Details of an object on read: its row's sequence and dates. */
export function readDetails(row: { sequence: string | number; creation_date: Date; change_date: Date }, resourceOwner: string): WriteDetails {
  return {
    sequence: String(row.sequence),
    creationDate: new Date(row.creation_date).toISOString(),
    changeDate: new Date(row.change_date).toISOString(),
    resourceOwner,
  };
}
