import { randomBytes } from 'node:crypto';
import { AuthThrottle, memoryFailureWindow, type BlockBroadcast, type FailureWindow, type ThrottleSettings } from '../security/auth-throttle.ts';
import { subscriberOf, type RedisClient } from './redis.ts';

// Where the failed authentications of the address throttle
// (src/security/auth-throttle.ts, docs/security.md) are counted and how
// blocks reach the other nodes: Redis when it is configured, else this
// process's memory.

/**
 * Sorted set of failure times per address, trimmed to the newest limit + 1
 * entries: enough to know when the window has room again, bounded whatever
 * an attacker sends. One script, so one round trip, and Redis's clock for
 * every node.
 */
const ADD_FAILURE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(limit + 2))
redis.call('PEXPIRE', KEYS[1], window)
if redis.call('ZCARD', KEYS[1]) <= limit then return 0 end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
`;

export function redisFailureWindow(redis: RedisClient, limit: number, windowSeconds: number): FailureWindow {
  // Members must differ across nodes (hosts may share a pid) for failures in the same millisecond.
  const node = randomBytes(6).toString('hex');
  let sequence = 0;
  return {
    async add(address) {
      const answer = await redis.eval(ADD_FAILURE, 1, `auth-failures:{${address}}`, windowSeconds * 1000, limit, `${node}.${++sequence}`);
      return Number(answer);
    },
  };
}

export async function redisBlockBroadcast(redis: RedisClient, channel: string, onBlock: (address: string, ms: number) => void): Promise<BlockBroadcast> {
  const subscriber = await subscriberOf(redis);
  await subscriber.subscribe(channel);
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    const [address, ms] = message.split(' ');
    if (address && Number(ms) > 0) onBlock(address, Math.min(Number(ms), 86_400_000));
  });
  return {
    publish(address, ms) {
      redis.publish(channel, `${address} ${ms}`).catch(() => {});
    },
    async close() {
      subscriber.disconnect();
    },
  };
}

/** The throttle of one node: counters in Redis (shared by all nodes, blocks broadcast) or in this process. */
export async function createAuthThrottle(
  settings: ThrottleSettings,
  redis: RedisClient | undefined,
  channel: string,
  onStoreError?: (err: unknown) => void,
): Promise<AuthThrottle> {
  const options = { trustProxy: settings.trustProxy, onStoreError };
  if (settings.limit === 0) return new AuthThrottle(undefined, options);
  if (!redis) return new AuthThrottle(memoryFailureWindow(settings.limit, settings.window), options);
  const throttle = new AuthThrottle(redisFailureWindow(redis, settings.limit, settings.window), options);
  throttle.shareBlocks(await redisBlockBroadcast(redis, channel, (address, ms) => throttle.block(address, ms)));
  return throttle;
}
