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
  });
  // Connection errors surface through the commands that fail and /readyz;
  // without a listener ioredis would print each reconnect attempt.
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    const code = (err as { code?: string }).code;
    throw new RedisUnavailable(`Redis at REDIS_URL is unreachable: ${code === 'ECONNREFUSED' ? 'connection refused' : (code ?? (err as Error).message)}`);
  }
  return redis;
}
