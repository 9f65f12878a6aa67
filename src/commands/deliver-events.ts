import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../../config/settings.ts';
import type { Logger } from '../logger.ts';
import { unseal } from '../keys/sealing.ts';
import type { OutboundClient } from '../outbound/client.ts';
import { OutboundError } from '../outbound/errors.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../security/webhook-signature.ts';
import {
  advanceCursor,
  claimDueTargets,
  giveUpEvent,
  lastPosition,
  matchingEvents,
  recordFailure,
  releaseLease,
  renewLease,
  type Cursor,
  type LoggedEvent,
} from '../storage/action-deliveries.ts';
import { findTarget, signingKeyAad, type StoredTarget } from '../storage/action-targets.ts';
import type { Database } from '../storage/database.ts';
import { findInstance } from '../storage/instance.ts';
import { retryDelay } from './deliver-notifications.ts';

export type EventDeliveryOutcome = 'delivered' | 'retried' | 'failed';

export interface EventDeliveryOptions {
  db: Database;
  log: Logger;
  outbound: OutboundClient;
  /** Opens the targets' sealed signing keys. */
  sealingKey: Buffer;
  onDelivery(targetId: string, outcome: EventDeliveryOutcome): void;
  /**
   * In seconds: an event failing for `actionsRetryFor` (a day by default) is
   * given up; the first retry waits `actionsRetryDelay`, each next one
   * twice as long, up to `actionsRetryMaxDelay`.
   */
  retry: Pick<Config, 'actionsRetryFor' | 'actionsRetryDelay' | 'actionsRetryMaxDelay'>;
}

/** How often the cursors are looked at: an event reaches its targets within this. */
const POLL_MS = 500;

/** Events read per query; a target works through them in order before reading more. */
const BATCH = 100;
/** A lease outlives the call it covers by this much: the database round trips around it. */
const LEASE_MARGIN_MS = 5_000;

/** The JSON body POSTed for one event (docs/actions.md), in ZITADEL's field names. */
export function eventBody(event: LoggedEvent, instanceId: string): string {
  return JSON.stringify({
    aggregateID: event.aggregateId,
    aggregateType: event.aggregateType,
    resourceOwner: event.resourceOwner,
    instanceID: instanceId,
    version: 'v1',
    sequence: Number(event.position),
    event_type: event.eventType,
    created_at: event.createdAt.toISOString(),
    userID: event.creator ?? '',
    event_payload: event.payload,
  });
}

/** Why an attempt failed, without anything of the answer's body: the status, or the connection's failure. */
function reasonOf(err: unknown): string {
  if (err instanceof OutboundError) return err.message;
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  const text = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return text.split('\n')[0]!.slice(0, 300);
}

/** One signed POST; answers the failure's reason, or undefined after a 2xx. */
async function post(options: EventDeliveryOptions, target: StoredTarget, key: string, body: string, signal: AbortSignal): Promise<string | undefined> {
  const fetcher = options.outbound.fetcher({ trust: 'instance', timeoutMs: target.timeoutMs });
  try {
    const response = await fetcher(target.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signatureHeader(key, body, new Date()) },
      body,
      signal,
    });
    await response.body?.cancel().catch(() => {});
    return response.status >= 200 && response.status < 300 ? undefined : `the target answered HTTP ${response.status}`;
  } catch (err) {
    return reasonOf(err);
  }
}

interface Round {
  options: EventDeliveryOptions;
  owner: string;
  instanceId: string;
  signal: AbortSignal;
}

/** After a failed attempt: retried later (the cursor waits), or given up once it has failed for long enough. */
async function failed(round: Round, target: StoredTarget, cursor: Cursor, event: LoggedEvent, reason: string): Promise<'wait' | 'next'> {
  const { options, owner } = round;
  const attempts = cursor.failures + 1;
  const failingFor = cursor.firstFailureAt ? (Date.now() - cursor.firstFailureAt.getTime()) / 1000 : 0;
  const context = { targetId: target.id, sequence: event.position, eventType: event.eventType, attempts, reason };
  if (failingFor >= options.retry.actionsRetryFor) {
    if (!(await giveUpEvent(options.db, target.id, owner, event.position, attempts, reason))) return 'wait';
    options.log.error(context, 'event delivery given up');
    options.onDelivery(target.id, 'failed');
    Object.assign(cursor, { sequence: event.position, failures: 0, firstFailureAt: null });
    return 'next';
  }
  const delay = retryDelay(attempts, options.retry.actionsRetryDelay, options.retry.actionsRetryMaxDelay);
  await recordFailure(options.db, target.id, owner, delay * 1000, reason);
  options.log.warn({ ...context, retryInSeconds: delay }, 'event not delivered; retrying');
  options.onDelivery(target.id, 'retried');
  return 'wait';
}

/** Delivers a target's due events in order, until one fails or none is left. */
async function serveTarget(round: Round, cursor: Cursor): Promise<void> {
  const { options, owner, signal } = round;
  const target = await findTarget(options.db, cursor.targetId);
  if (!target) return;
  const key = unseal(options.sealingKey, target.signingKeySealed, signingKeyAad(target.id)).toString('utf8');
  const leaseMs = target.timeoutMs + LEASE_MARGIN_MS;
  for (;;) {
    // Read first: every event at or below it is committed, so is in the query below when it matches.
    const head = await lastPosition(options.db);
    const events = await matchingEvents(options.db, target.id, cursor.sequence, BATCH);
    for (const event of events) {
      if (signal.aborted || !(await renewLease(options.db, target.id, owner, leaseMs))) return;
      const reason = await post(options, target, key, eventBody(event, round.instanceId), signal);
      if (signal.aborted) return;
      if (reason !== undefined) {
        if ((await failed(round, target, cursor, event, reason)) === 'wait') return;
        continue;
      }
      if (!(await advanceCursor(options.db, target.id, owner, event.position))) return;
      options.onDelivery(target.id, 'delivered');
      Object.assign(cursor, { sequence: event.position, failures: 0, firstFailureAt: null });
    }
    if (events.length < BATCH) {
      // Nothing else matches up to the head: later rounds start from there.
      if (BigInt(head) > BigInt(cursor.sequence)) await advanceCursor(options.db, target.id, owner, head);
      return;
    }
  }
}

/** One round: claims the due targets and serves them side by side, each in its own order. */
async function deliverRound(options: EventDeliveryOptions, owner: string, signal: AbortSignal): Promise<void> {
  const claimed = await claimDueTargets(options.db, owner, LEASE_MARGIN_MS * 2);
  if (!claimed.length) return;
  const instance = await findInstance(options.db);
  if (!instance) return;
  const round: Round = { options, owner, instanceId: instance.id, signal };
  await Promise.all(
    claimed.map((cursor) =>
      serveTarget(round, cursor)
        .catch((err) => options.log.warn({ targetId: cursor.targetId, reason: reasonOf(err) }, 'event delivery round failed'))
        .finally(() => releaseLease(options.db, cursor.targetId, owner).catch(() => {})),
    ),
  );
}

/**
 * The event delivery worker every node runs (docs/actions.md): targets are
 * claimed through leases in the database, so each is served by one node at
 * a time. `stop` cuts the calls under way and waits for the round.
 */
export function startEventDeliveries(options: EventDeliveryOptions): { stop(): Promise<void> } {
  // Which node holds a lease, for whoever looks at the table: host, process and this start.
  const owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  let round: Promise<unknown> | undefined;
  const run = () => {
    if (stopping.signal.aborted) return;
    round ??= deliverRound(options, owner, stopping.signal)
      .catch((err) => options.log.warn({ reason: reasonOf(err) }, 'event delivery round failed'))
      .finally(() => (round = undefined));
  };
  const timer = setInterval(run, POLL_MS);
  timer.unref();
  run();
  return {
    async stop() {
      stopping.abort();
      clearInterval(timer);
      await round;
    },
  };
}
