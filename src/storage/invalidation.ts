import type { Redis } from 'ioredis';

export type CacheTopic = 'clients' | 'users' | 'features';

/**
 * How a command says what it changed, after its transaction committed: the
 * caches of every node holding that kind of data clear themselves.
 */
export type Announce = (topic: CacheTopic) => void;

const TOPICS: ReadonlySet<string> = new Set<CacheTopic>(['clients', 'users', 'features']);

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

export async function redisInvalidation(redis: Redis, channel: string): Promise<Invalidation> {
  const local = localInvalidation();
  const subscriber = redis.duplicate();
  subscriber.on('error', () => {});
  await subscriber.subscribe(channel);
  subscriber.on('message', (from, topic) => {
    if (from === channel && TOPICS.has(topic)) local.publish(topic as CacheTopic);
  });
  return {
    publish(topic) {
      // This node at once (its next request reads the change), the others
      // through Redis; a failed publish leaves them to the TTL.
      local.publish(topic);
      redis.publish(channel, topic).catch(() => {});
    },
    on: local.on,
    async close() {
      subscriber.disconnect();
    },
  };
}
