import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

// Throttling of failed authentication per client address (docs/security.md):
// more than `limit` failures within a sliding window of `window` seconds
// block every authentication attempt from that address until the window has
// room again.
//
// Only failures touch the counter store (one round trip each). Whether an
// address is blocked is answered from this process's memory: a node learns
// of a block when a failure it records crosses the limit, and from the other
// nodes over Redis pub/sub when theirs do. So a successful request never
// waits for a store.

/** Keeps the failures of each address within the window. */
export interface FailureWindow {
  /**
   * Adds a failure of `address`. Answers how long (ms) until its window has
   * room again: 0 while it holds at most `limit` failures.
   */
  add(address: string): Promise<number>;
}

/** At most this many addresses are tracked in memory; the stalest go first. */
const MAX_TRACKED = 100_000;

export function memoryFailureWindow(limit: number, windowSeconds: number, now: () => number = Date.now): FailureWindow {
  const window = windowSeconds * 1000;
  const failures = new Map<string, number[]>();
  return {
    async add(address) {
      const at = now();
      const times = (failures.get(address) ?? []).filter((time) => time > at - window);
      times.push(at);
      if (times.length > limit + 1) times.splice(0, times.length - (limit + 1));
      // Re-inserted last, so the map's first keys are the stalest.
      failures.delete(address);
      failures.set(address, times);
      if (failures.size > MAX_TRACKED) failures.delete(failures.keys().next().value!);
      return times.length <= limit ? 0 : Math.max(1, times[0]! + window - at);
    },
  };
}

/** Tells the other nodes that an address is blocked for a while. */
export interface BlockBroadcast {
  publish(address: string, ms: number): void;
  close(): Promise<void>;
}

export interface ThrottleSettings {
  /** AUTH_FAILURE_LIMIT; 0 turns throttling off. */
  limit: number;
  /** AUTH_FAILURE_WINDOW, seconds. */
  window: number;
  /** TRUST_PROXY: the client address is the first X-Forwarded-For entry. */
  trustProxy: boolean;
}

export class AuthThrottle {
  private readonly blocked = new Map<string, number>();
  private readonly failures: FailureWindow | undefined;
  private broadcast: BlockBroadcast | undefined;
  private readonly onStoreError: (err: unknown) => void;
  private readonly now: () => number;
  private readonly trustProxy: boolean;

  constructor(failures: FailureWindow | undefined, options: { trustProxy?: boolean; onStoreError?: (err: unknown) => void; now?: () => number } = {}) {
    this.failures = failures;
    this.trustProxy = options.trustProxy ?? false;
    this.onStoreError = options.onStoreError ?? (() => {});
    this.now = options.now ?? Date.now;
  }

  /** The address a request's failures count against (see clientAddress). */
  addressOf(req: IncomingMessage): string {
    return clientAddress(req, this.trustProxy);
  }

  /** Shares blocks with the other nodes (and hears theirs). */
  shareBlocks(broadcast: BlockBroadcast): void {
    this.broadcast = broadcast;
  }

  /**
   * `retryAfter` of the request's address. The hot paths (token,
   * introspection) ask on every request: while no address is blocked, the
   * answer costs one size check and the address is not even worked out.
   */
  retryAfterOf(req: IncomingMessage): number | undefined {
    return this.blocked.size === 0 ? undefined : this.retryAfter(this.addressOf(req));
  }

  /** Whole seconds (at least 1) until `address` may try again, or undefined when it is not blocked. Memory only. */
  retryAfter(address: string): number | undefined {
    if (!this.failures) return undefined;
    const until = this.blocked.get(address);
    if (until === undefined) return undefined;
    const left = until - this.now();
    if (left <= 0) {
      this.blocked.delete(address);
      return undefined;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  /**
   * Counts a failed authentication of `address`. A store that fails is
   * reported and otherwise ignored: the failed request is answered as a
   * failure either way, and throttling resumes with the store.
   */
  async failed(address: string): Promise<void> {
    if (!this.failures) return;
    let ms: number;
    try {
      ms = await this.failures.add(address);
    } catch (err) {
      this.onStoreError(err);
      return;
    }
    if (ms <= 0) return;
    this.block(address, ms);
    this.broadcast?.publish(address, ms);
  }

  /** Marks `address` blocked for `ms` in this process. */
  block(address: string, ms: number): void {
    if (this.blocked.size >= MAX_TRACKED) {
      const now = this.now();
      for (const [key, until] of this.blocked) if (until <= now) this.blocked.delete(key);
      if (this.blocked.size >= MAX_TRACKED) this.blocked.delete(this.blocked.keys().next().value!);
    }
    this.blocked.set(address, this.now() + ms);
  }

  async close(): Promise<void> {
    await this.broadcast?.close();
  }
}

/**
 * The client address of a request: the socket's, or with TRUST_PROXY the
 * first X-Forwarded-For entry (the client as the proxy saw it). IPv4 in
 * IPv6 form counts as the IPv4 address; anything that is no address falls
 * back to the socket's.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const socket = normalise(req.socket.remoteAddress ?? '');
  if (!trustProxy) return socket || 'unknown';
  const header = req.headers['x-forwarded-for'];
  const first = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim() ?? '';
  const forwarded = normalise(first);
  return forwarded || socket || 'unknown';
}

function normalise(address: string): string {
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  return isIP(plain) ? plain : '';
}
