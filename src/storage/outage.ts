// A store that does not answer is a temporary condition, not a bug: the
// request gets 503 with Retry-After (RFC 9110 15.6.4, 10.2.3) and the process
// carries on; the stores' clients reconnect by themselves (docs/operations.md,
// "Failure modes").

export type StoreName = 'postgres' | 'redis';

/** Seconds a client is asked to wait before it tries again. */
export const RETRY_AFTER_SECONDS = 5;

const DESCRIPTION = 'the service is temporarily unavailable, try again shortly';

/**
 * A store could not be reached. The engine (oidc-provider) renders an error
 * from its fields: `message` is the OAuth error code (RFC 6749 4.1.2.1,
 * `temporarily_unavailable`), `statusCode` the status, `expose` makes it
 * shown as it is, and `allow_redirect: false` keeps it on our own page
 * instead of sending the browser to the app with it.
 */
export class StoreUnavailable extends Error {
  override name = 'StoreUnavailable';
  readonly store: StoreName;
  readonly status = 503;
  readonly statusCode = 503;
  readonly expose = true;
  readonly error = 'temporarily_unavailable';
  readonly error_description = DESCRIPTION;
  readonly allow_redirect = false;

  constructor(store: StoreName, cause: unknown) {
    super('temporarily_unavailable', { cause });
    this.store = store;
  }
}

/** Errors of our own code (a bad payload, a wrong argument) stay bugs: 500. */
function isProgrammingError(err: unknown): boolean {
  return err instanceof TypeError || err instanceof SyntaxError || err instanceof RangeError;
}

// SQLSTATE classes and codes that say the server, not the statement, failed:
// 08 connection exception, 53 insufficient resources, 57P01–57P03 the server
// shutting down or starting up, 58 system error.
const POSTGRES_OUTAGE = /^(08|53|57P0[1-3]|58)/;

/**
 * Whether a `pg` (or PGlite) error means PostgreSQL is unreachable. Errors
 * PostgreSQL reports carry a SQLSTATE; anything else from the driver
 * (refused or reset connections, "Connection terminated", pool timeouts) is
 * about the connection.
 */
export function isPostgresOutage(err: unknown): boolean {
  if (err instanceof StoreUnavailable || !(err instanceof Error) || isProgrammingError(err)) return false;
  // An error PostgreSQL sent has a severity and a SQLSTATE; a socket error
  // has an errno name (EPIPE is five letters too).
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  if (typeof severity === 'string' && typeof code === 'string') return POSTGRES_OUTAGE.test(code);
  return true;
}

// Replies Redis gives while it cannot serve: loading its data set, a
// replica that lost its master, a cluster without quorum, a slot moving.
const REDIS_OUTAGE_REPLIES = /^(LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

/**
 * Whether an ioredis error means Redis is unreachable: every error except
 * a reply to a command that Redis ran (a ReplyError such as WRONGTYPE),
 * unless that reply is one of the "cannot serve now" ones above.
 */
export function isRedisOutage(err: unknown): boolean {
  if (err instanceof StoreUnavailable || !(err instanceof Error) || isProgrammingError(err)) return false;
  if (err.name === 'ReplyError') return REDIS_OUTAGE_REPLIES.test(err.message);
  return true;
}

/** Rethrows `err` as StoreUnavailable when it is an outage of `store`. */
export function asOutage(store: StoreName, err: unknown): unknown {
  const outage = store === 'postgres' ? isPostgresOutage(err) : isRedisOutage(err);
  return outage ? new StoreUnavailable(store, err) : err;
}
