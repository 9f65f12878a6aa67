import { Redis } from 'ioredis';

export class RedisUnavailable extends Error {
  override name = 'RedisUnavailable';
}

/** A command Redis has not answered within this fails (a hung or unreachable server). */
export const REDIS_COMMAND_TIMEOUT_MS = 1500;

/**
 * Connects to REDIS_URL and proves it answers. Afterwards ioredis reconnects
 * by itself (every 100 ms at first, then each second), and during an outage
 * a command fails at once instead of waiting in a queue: no offline queue,
 * no retry of a command whose connection broke, and a time limit on every
 * command. The request that needed it answers 503 (outage.ts).
 */
export async function connectRedis(url: string, keyPrefix: string): Promise<Redis> {
  const redis = new Redis(url, {
    keyPrefix,
    lazyConnect: true,
    connectTimeout: 2000,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    // Commands issued in the same tick (concurrent requests, the engine's
    // parallel look-ups) share one socket write instead of one each.
    enableAutoPipelining: true,
  });
  // Connection errors surface through the commands that fail and /readyz;
  // without a listener ioredis would print each reconnect attempt. The last
  // one explains a failed start better than ioredis's "Connection is closed".
  let lastError: (Error & { code?: string }) | undefined;
  redis.on('error', (err) => {
    lastError = err;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    const cause = lastError ?? (err as Error & { code?: string });
    const reason = cause.code === 'ECONNREFUSED' ? 'connection refused' : cause.code === 'ENOTFOUND' ? 'host not found' : (cause.code ?? cause.message);
    throw new RedisUnavailable(`Redis at REDIS_URL is unreachable: ${reason}`);
  }
  return redis;
}
