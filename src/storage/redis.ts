import { Redis } from 'ioredis';

export class RedisUnavailable extends Error {
  override name = 'RedisUnavailable';
}

/**
 * Connects to REDIS_URL and proves it answers. Afterwards ioredis reconnects
 * by itself; a command during an outage fails fast (one retry) so that a
 * request gets an error instead of hanging.
 */
export async function connectRedis(url: string, keyPrefix: string): Promise<Redis> {
  const redis = new Redis(url, {
    keyPrefix,
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
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
