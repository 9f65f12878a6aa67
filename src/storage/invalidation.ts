import { subscriberOf, type RedisClient } from './redis.ts';

export type CacheTopic = 'clients' | 'users' | 'features' | 'policies' | 'actions';

/**
 * How a command says what it changed, after its transaction committed: the
 * caches of every node holding that kind of data clear themselves.
 */
export type Announce = (topic: CacheTopic) => void;

const TOPICS: ReadonlySet<string> = new Set<CacheTopic>(['clients', 'users', 'features', 'policies', 'actions']);

/**
 * Tells every node that cached data changed. With Redis, a pub/sub channel
 * reaches all nodes at once; without it (one embedded node) only this
 * process listens. Caches also expire by themselves, so a lost message
 * costs at most one cache lifetime of staleness.
 */
export interface Invalidation {
  publish(topic: CacheTopic): void;
  on(topic: CacheTopic, listener: () => void): void;
  close(): Promise<void>;
}

export function localInvalidation(): Invalidation {
  const listeners = new Map<CacheTopic, Array<() => void>>();
  return {
    publish(topic) {
      for (const listener of listeners.get(topic) ?? []) listener();
    },
    on(topic, listener) {
      listeners.set(topic, [...(listeners.get(topic) ?? []), listener]);
    },
    async close() {},
  };
}

export async function redisInvalidation(redis: RedisClient, channel: string): Promise<Invalidation> {
  const local = localInvalidation();
  const subscriber = await subscriberOf(redis);
  await subscriber.subscribe(channel);
  subscriber.on('message', (from: string, topic: string) => {
    if (from === channel && TOPICS.has(topic)) local.publish(topic as CacheTopic);
  });
  return {
    publish(topic) {
      // This node's caches are cleared before the write is answered (its
      // caller reads its own write at once); the others hear it from Redis,
      // and if publishing fails their TTLs do the job.
      local.publish(topic);
      redis.publish(channel, topic).catch(() => {});
    },
    on: local.on,
    async close() {
      subscriber.disconnect();
    },
  };
}
