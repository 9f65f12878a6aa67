import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../logger.ts';

export class RedisUnavailable extends Error {
  override name = 'RedisUnavailable';
}

/** A standalone Redis or its Sentinel-watched master, or a Redis Cluster: the same commands. */
export type RedisClient = Redis | Cluster;

/** The settings that say where Redis is (config/settings.ts); at most one of the three ways is set. */
export interface RedisSettings {
  redisUrl?: string;
  redisSentinels?: string;
  redisSentinelName?: string;
  redisClusterNodes?: string;
  redisPassword?: string;
  redisPrefix: string;
}

/** A command Redis has not answered within this fails (a hung or unreachable server). */
export const REDIS_COMMAND_TIMEOUT_MS = 1500;

/** Reconnect at once, then every 100 ms more, at most each second. */
const reconnectDelay = (attempt: number) => Math.min(attempt * 100, 1000);

export function redisConfigured(settings: RedisSettings): boolean {
  return Boolean(settings.redisUrl ?? settings.redisSentinels ?? settings.redisClusterNodes);
}

/** `host:port,[::1]:port` as ioredis addresses. */
function addresses(list: string): Array<{ host: string; port: number }> {
  return list.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(at + 1)) };
  });
}

/**
 * During an outage a command fails at once instead of waiting in a queue:
 * no offline queue, no retry of a command whose connection broke, and a
 * time limit on every command. The request that needed it answers 503
 * (outage.ts), and ioredis reconnects by itself.
 */
const COMMAND_OPTIONS = {
  connectTimeout: 2000,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  maxRetriesPerRequest: 0,
} satisfies RedisOptions;

function createClient(settings: RedisSettings): { client: RedisClient; where: string } {
  const common = {
    keyPrefix: settings.redisPrefix,
    lazyConnect: true,
    enableOfflineQueue: false,
    // Commands issued in the same tick (concurrent requests, the engine's
    // parallel look-ups) share one socket write instead of one each.
    enableAutoPipelining: true,
  };
  if (settings.redisClusterNodes) {
    const client = new Cluster(addresses(settings.redisClusterNodes), {
      ...common,
      clusterRetryStrategy: reconnectDelay,
      slotsRefreshTimeout: 2000,
      redisOptions: { ...COMMAND_OPTIONS, ...(settings.redisPassword ? { password: settings.redisPassword } : {}) },
    });
    return { client, where: 'the Redis Cluster at REDIS_CLUSTER_NODES' };
  }
  if (settings.redisSentinels) {
    // ioredis asks the Sentinels for the current master on every
    // (re)connection; the failover detector drops the connection to a
    // master the Sentinels have just replaced, and a READONLY answer (a
    // master demoted to replica) reconnects too.
    const client = new Redis({
      ...common,
      ...COMMAND_OPTIONS,
      sentinels: addresses(settings.redisSentinels),
      name: settings.redisSentinelName,
      ...(settings.redisPassword ? { password: settings.redisPassword } : {}),
      retryStrategy: reconnectDelay,
      sentinelRetryStrategy: reconnectDelay,
      failoverDetector: true,
      reconnectOnError: (err) => err.message.startsWith('READONLY'),
    });
    return { client, where: `the Redis master "${settings.redisSentinelName}" of REDIS_SENTINELS` };
  }
  const client = new Redis(settings.redisUrl!, { ...common, ...COMMAND_OPTIONS, retryStrategy: reconnectDelay });
  return { client, where: 'Redis at REDIS_URL' };
}

/** Connects to Redis as the settings say and proves it answers. */
export async function connectRedis(settings: RedisSettings): Promise<RedisClient> {
  const { client, where } = createClient(settings);
  // Connection errors surface through the commands that fail and /readyz;
  // without a listener ioredis would print each reconnect attempt. The last
  // one explains a failed start better than ioredis's "Connection is closed".
  let lastError: (Error & { code?: string }) | undefined;
  client.on('error', (err: Error & { code?: string }) => {
    lastError = err;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    const cause = lastError ?? (err as Error & { code?: string });
    const reason = cause.code === 'ECONNREFUSED' ? 'connection refused' : cause.code === 'ENOTFOUND' ? 'host not found' : (cause.code ?? cause.message);
    throw new RedisUnavailable(`${where} is unreachable: ${reason}`);
  }
  return client;
}

/**
 * A second connection for pub/sub (a subscribed connection runs nothing
 * else), connected before it is used: commands are not queued while a
 * client connects. Its errors surface through the main connection.
 */
export async function subscriberOf(client: RedisClient): Promise<RedisClient> {
  const subscriber: RedisClient = client instanceof Cluster ? client.duplicate() : client.duplicate();
  subscriber.on('error', () => {});
  await subscriber.connect();
  return subscriber;
}

/**
 * Logs each loss of the connection to Redis, and its return: once each, not
 * at every reconnect attempt. (A closed client reconnects no more, so
 * shutdown logs nothing.)
 */
export function logConnectionChanges(client: RedisClient, log: Pick<Logger, 'warn' | 'info'>): void {
  let lost = false;
  client.on('reconnecting', () => {
    if (lost) return;
    lost = true;
    log.warn('Redis connection lost; requests that need Redis answer 503 until it is back');
  });
  client.on('ready', () => {
    if (!lost) return;
    lost = false;
    log.info('Redis connection restored');
  });
}

/**
 * Closes the connections for good. QUIT alone leaves the Sentinel failover
 * detector's connections open (and reconnecting), so they are dropped too.
 */
export async function closeRedis(client: RedisClient): Promise<void> {
  await client.quit().catch(() => {});
  client.disconnect();
}
