import type { Adapter, AdapterPayload } from 'oidc-provider';
import { Cluster, type ChainableCommander } from 'ioredis';
import type { RedisClient } from '../src/storage/redis.ts';

// Sets `consumed` only on a record that still exists: a plain HSET on a
// record that just expired would recreate it as a key without TTL.
const CONSUME_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HSET', KEYS[1], 'consumed', ARGV[1])
end
return 0`;

// A record is replaced in one atomic call: DEL (no stale `consumed`, no
// stale TTL), HSET, EXPIRE.
const REPLACE_SCRIPT = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'payload', ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1`;

// The same with the record's indexes, where all keys may be written in one
// call (not on a Redis Cluster). KEYS: the record, then its grant set, uid
// and user-code index keys, each only when ARGV[3..5] says the record has
// one; ARGV[6] is the record id the indexes point to. One EVALSHA instead
// of a MULTI of up to eight commands: on the server's event loop each
// command costs about as much as the whole script.
const REPLACE_INDEXED_SCRIPT = `
local ttl = tonumber(ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'payload', ARGV[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
local k = 2
if ARGV[3] == '1' then
  redis.call('SADD', KEYS[k], ARGV[6])
  if ttl > 0 then
    redis.call('EXPIRE', KEYS[k], ttl, 'NX')
    redis.call('EXPIRE', KEYS[k], ttl, 'GT')
  else
    redis.call('PERSIST', KEYS[k])
  end
  k = k + 1
end
for i = 4, 5 do
  if ARGV[i] == '1' then
    if ttl > 0 then redis.call('SET', KEYS[k], ARGV[6], 'EX', ttl) else redis.call('SET', KEYS[k], ARGV[6]) end
    k = k + 1
  end
end
return 1`;

// Writes the record only if none is stored under its key; the TTL is set in
// the same atomic step, so a claimed record never lingers without one.
const CLAIM_SCRIPT = `
if redis.call('HSETNX', KEYS[1], 'payload', ARGV[1]) == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

// A record written only if a claim (another record, e.g. a DPoP proof's
// replay record) can be made in the same step: KEYS[1] the claim, KEYS[2]
// the record; ARGV the claim's payload and TTL, then the record's.
const CLAIM_AND_REPLACE_SCRIPT = `
if redis.call('HSETNX', KEYS[1], 'payload', ARGV[1]) == 0 then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'payload', ARGV[3])
if tonumber(ARGV[4]) > 0 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return 1`;

interface RecordScripts {
  replaceRecord(key: string, payload: string, ttl: number): Promise<unknown>;
  /** The number of keys first: a record has zero to three index keys. */
  replaceIndexedRecord(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<unknown>;
  consumeRecord(key: string, now: number): Promise<unknown>;
  claimRecord(key: string, payload: string, ttl: number): Promise<number>;
  claimAndReplaceRecord(claimKey: string, key: string, claimPayload: string, claimTtl: number, payload: string, ttl: number): Promise<number>;
}

/** The scripts, defined once per client: ioredis then sends their SHA (EVALSHA), not their text. */
function scripts(redis: RedisClient): RecordScripts {
  const client = redis as unknown as Partial<RecordScripts>;
  if (!client.replaceRecord) {
    redis.defineCommand('replaceRecord', { numberOfKeys: 1, lua: REPLACE_SCRIPT });
    redis.defineCommand('replaceIndexedRecord', { lua: REPLACE_INDEXED_SCRIPT });
    redis.defineCommand('consumeRecord', { numberOfKeys: 1, lua: CONSUME_SCRIPT });
    redis.defineCommand('claimRecord', { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    redis.defineCommand('claimAndReplaceRecord', { numberOfKeys: 2, lua: CLAIM_AND_REPLACE_SCRIPT });
  }
  return redis as unknown as RecordScripts;
}

function epochSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** EXPIRE takes whole seconds; a falsy expiresIn means the record never expires. */
function ttlSeconds(expiresIn: number | undefined): number | undefined {
  return expiresIn ? Math.ceil(expiresIn) : undefined;
}

/** EXEC reports a failed command in its result list instead of rejecting. */
async function execAll(multi: ChainableCommander): Promise<void> {
  const results = await multi.exec();
  const failure = results?.find(([err]) => err);
  if (failure) throw failure[0];
}

/** A record to be written only once (replay detection), as `claim` takes it, with its model. */
export interface Claim {
  model: string;
  id: string;
  payload: AdapterPayload;
  expiresIn: number;
}

function toPayload(hash: Record<string, string>): AdapterPayload | undefined {
  if (hash.payload === undefined) return undefined;
  const payload = JSON.parse(hash.payload) as AdapterPayload;
  // The engine only tests `consumed` for truthiness; the time is kept for audit.
  return hash.consumed === undefined ? payload : { ...payload, consumed: Number(hash.consumed) };
}

/**
 * oidc-provider storage in Redis. A record is the hash `{model}:{id}` (field
 * `payload`, and `consumed` once consumed) carrying the record's TTL, so
 * Redis itself drops expired records. Secondary look-ups go through index
 * keys that share that TTL: `{model}:uid:{uid}`, `{model}:userCode:{code}`
 * and the set `{model}:grant:{grantId}` of record ids.
 *
 * The client's `keyPrefix` is applied by ioredis to every key argument, so
 * keys here never carry it, and set members are bare ids, not keys.
 *
 * A Redis Cluster runs a MULTI (and any command with several keys) only on
 * keys of one hash slot, and the keys of one record are in several: its id,
 * its grant, its uid each hash elsewhere, and no hash tag can join them, as
 * each is looked up by itself. There, each write touches one key, in an
 * order that keeps revocation whole: the indexes before the record on
 * save, the record before its indexes on removal. An interrupted write
 * leaves at worst an index entry pointing at nothing, which reads as not
 * found; never a record its grant does not list.
 */
export class RedisAdapter implements Adapter {
  readonly model: string;
  readonly redis: RedisClient;
  readonly #clustered: boolean;

  constructor(model: string, redis: RedisClient) {
    this.model = model;
    this.redis = redis;
    this.#clustered = redis instanceof Cluster;
    if (!this.#clustered) this.upsertClaiming = (claim, id, payload, expiresIn) => this.#upsertClaiming(claim, id, payload, expiresIn);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const key = this.recordKey(id);
    const ttl = ttlSeconds(expiresIn) ?? 0;
    const { grantId, uid, userCode } = payload;
    if (!grantId && !uid && !userCode) {
      await scripts(this.redis).replaceRecord(key, JSON.stringify(payload), ttl);
      return;
    }
    if (this.#clustered) {
      await Promise.all(this.indexWrites(payload, id, ttlSeconds(expiresIn)).map((multi) => execAll(multi)));
      await scripts(this.redis).replaceRecord(key, JSON.stringify(payload), ttl);
      return;
    }
    const keys = [key];
    if (grantId) keys.push(this.grantKey(grantId));
    if (uid) keys.push(this.uidKey(uid));
    if (userCode) keys.push(this.userCodeKey(userCode));
    const flags = [grantId, uid, userCode].map((index) => (index ? '1' : '0'));
    await scripts(this.redis).replaceIndexedRecord(keys.length, ...keys, JSON.stringify(payload), ttl, ...flags, id);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return toPayload(await this.redis.hgetall(this.recordKey(id)));
  }

  /**
   * Writes the record only if none is stored under `id`, atomically: true
   * when this call wrote it. For records that exist to be seen once
   * (replay detection): two nodes claiming the same id cannot both win.
   */
  async claim(id: string, payload: AdapterPayload, expiresIn: number): Promise<boolean> {
    return (await scripts(this.redis).claimRecord(this.recordKey(id), JSON.stringify(payload), ttlSeconds(expiresIn) ?? 1)) === 1;
  }

  /**
   * Writes a record without indexes only if the claim (see `claim`) is won,
   * both in one atomic step: true when both were written, false (nothing
   * written) when the claim's id was taken. Not on a Redis Cluster, where
   * the two keys may live on different nodes: there the method is absent.
   */
  readonly upsertClaiming?: (claim: Claim, id: string, payload: AdapterPayload, expiresIn?: number) => Promise<boolean>;

  async #upsertClaiming(claim: Claim, id: string, payload: AdapterPayload, expiresIn?: number): Promise<boolean> {
    if (payload.grantId || payload.uid || payload.userCode) throw new Error('upsertClaiming writes records without indexes only');
    const claimed = await scripts(this.redis).claimAndReplaceRecord(
      `${claim.model}:${claim.id}`,
      this.recordKey(id),
      JSON.stringify(claim.payload),
      ttlSeconds(claim.expiresIn) ?? 1,
      JSON.stringify(payload),
      ttlSeconds(expiresIn) ?? 0,
    );
    return claimed === 1;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findByIndex(this.uidKey(uid));
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findByIndex(this.userCodeKey(userCode));
  }

  async consume(id: string): Promise<void> {
    await scripts(this.redis).consumeRecord(this.recordKey(id), epochSeconds());
  }

  async destroy(id: string): Promise<void> {
    const key = this.recordKey(id);
    const stored = await this.redis.hget(key, 'payload');
    if (this.#clustered) {
      await this.redis.del(key);
      if (stored) await Promise.all(this.indexRemovals(JSON.parse(stored) as AdapterPayload, id));
      return;
    }
    const multi = this.redis.multi().del(key);
    if (stored) {
      const { grantId, uid, userCode } = JSON.parse(stored) as AdapterPayload;
      if (grantId) multi.srem(this.grantKey(grantId), id);
      if (uid) multi.del(this.uidKey(uid));
      if (userCode) multi.del(this.userCodeKey(userCode));
    }
    await execAll(multi);
  }

  /**
   * Removes this model's records of the grant only: the engine calls this on
   * each model's adapter in turn. SREM of the ids read (rather than DEL of the
   * set) keeps a record added to the grant in the meantime revocable.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    const grantKey = this.grantKey(grantId);
    const ids = await this.redis.smembers(grantKey);
    if (ids.length === 0) return;
    if (this.#clustered) {
      await Promise.all(ids.map((id) => this.redis.del(this.recordKey(id))));
      await this.redis.srem(grantKey, ...ids);
      return;
    }
    await execAll(
      this.redis
        .multi()
        .del(...ids.map((id) => this.recordKey(id)))
        .srem(grantKey, ...ids),
    );
  }

  /** The index writes of a record, one key each (for a Redis Cluster). */
  private indexWrites(payload: AdapterPayload, id: string, ttl: number | undefined): ChainableCommander[] {
    const writes: ChainableCommander[] = [];
    if (payload.grantId) {
      const multi = this.redis.multi();
      this.addToGrant(multi, payload.grantId, id, ttl);
      writes.push(multi);
    }
    for (const indexKey of [payload.uid && this.uidKey(payload.uid), payload.userCode && this.userCodeKey(payload.userCode)]) {
      if (!indexKey) continue;
      const multi = this.redis.multi();
      this.setIndex(multi, indexKey, id, ttl);
      writes.push(multi);
    }
    return writes;
  }

  /** The index removals of a record, one key each (for a Redis Cluster). */
  private indexRemovals({ grantId, uid, userCode }: AdapterPayload, id: string): Array<Promise<unknown>> {
    const removals: Array<Promise<unknown>> = [];
    if (grantId) removals.push(this.redis.srem(this.grantKey(grantId), id));
    if (uid) removals.push(this.redis.del(this.uidKey(uid)));
    if (userCode) removals.push(this.redis.del(this.userCodeKey(userCode)));
    return removals;
  }

  private async findByIndex(indexKey: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(indexKey);
    return id ? this.find(id) : undefined;
  }

  /**
   * The grant set must live at least as long as its longest-lived record:
   * NX gives a new set this record's TTL, GT only ever extends it. A record
   * without TTL makes the set permanent.
   */
  private addToGrant(multi: ChainableCommander, grantId: string, id: string, ttl: number | undefined): void {
    const grantKey = this.grantKey(grantId);
    multi.sadd(grantKey, id);
    if (ttl) multi.expire(grantKey, ttl, 'NX').expire(grantKey, ttl, 'GT');
    else multi.persist(grantKey);
  }

  private setIndex(multi: ChainableCommander, indexKey: string, id: string, ttl: number | undefined): void {
    if (ttl) multi.set(indexKey, id, 'EX', ttl);
    else multi.set(indexKey, id);
  }

  private recordKey(id: string): string {
    return `${this.model}:${id}`;
  }

  private grantKey(grantId: string): string {
    return `${this.model}:grant:${grantId}`;
  }

  private uidKey(uid: string): string {
    return `${this.model}:uid:${uid}`;
  }

  private userCodeKey(userCode: string): string {
    return `${this.model}:userCode:${userCode}`;
  }
}
