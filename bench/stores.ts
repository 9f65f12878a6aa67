import { spawnSync } from 'node:child_process';
import { startOwnPostgres, startOwnRedis, type OwnRedis } from '../test/support/own-stores.ts';
import { pinProcess } from './processes.ts';

// BENCH_STORES=own: a PostgreSQL and a Redis of the benchmark's own, pinned
// to the load generator's core. The machine's services float between the
// cores, and the scheduler tends to wake a PostgreSQL backend on the core of
// the process that wrote to it: our server's. Their work then counts as the
// server's in its requests per second (bench/PROFILE.md, fourth sitting).
// In a deployment the stores run on machines of their own.

export interface BenchStores {
  databaseUrl: string;
  redisUrl: string;
  /** What results.json records of them. */
  description: string;
  cleanup(): Promise<void>;
}

/** Pins every thread of `pid` and of its child processes to `core`; false if taskset refused. */
function pinTree(taskset: string, pid: number, core: number): boolean {
  const children = (spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout ?? '').split('\n').filter(Boolean).map(Number);
  return [pid, ...children].every((id) => pinProcess(taskset, core, id));
}

/**
 * PostgreSQL (initdb's defaults with Debian's package settings: 128 MB of
 * shared buffers, 100 connections) and Redis (no persistence, as the
 * machine's), each on a free port; pinned to `core` when `taskset` is given.
 * New PostgreSQL backends are forked by the postmaster and inherit its core.
 */
export async function startBenchStores(taskset: string | undefined, core: number): Promise<BenchStores> {
  const postgres = await startOwnPostgres({ settings: { max_connections: '100', shared_buffers: '128MB' } });
  let redis: OwnRedis;
  try {
    redis = await startOwnRedis();
  } catch (err) {
    await postgres.cleanup();
    throw err;
  }
  const cleanup = async () => {
    await Promise.all([postgres.cleanup(), redis.cleanup()]);
  };
  let pinned = false;
  if (taskset) {
    const redisPid = redis.pid();
    pinned = pinTree(taskset, postgres.postmasterPid(), core) && redisPid !== undefined && pinTree(taskset, redisPid, core);
    if (!pinned) {
      await cleanup();
      throw new Error(`could not pin the benchmark's PostgreSQL and Redis to core ${core}`);
    }
  }
  return {
    databaseUrl: postgres.url,
    redisUrl: redis.url,
    description: `own PostgreSQL and Redis${pinned ? `, pinned to core ${core}` : ', not pinned'}`,
    cleanup,
  };
}
