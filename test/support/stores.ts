import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openDatabase, type Database } from '../../src/storage/database.ts';
import { migrate } from '../../src/storage/migrate.ts';

// Tests isolate themselves: each PostgreSQL user gets its own schema, each
// PGlite its own temporary folder, each Redis user its own key prefix; all
// are removed by `cleanup`.

export const DATABASE_URL = process.env.DATABASE_URL || undefined;
export const REDIS_URL = process.env.REDIS_URL || undefined;

/** Reason to skip a test that needs a server this run was not given. */
export const needsPostgres = DATABASE_URL ? false : 'DATABASE_URL is not set';
export const needsRedis = REDIS_URL ? false : 'REDIS_URL is not set';

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Drops a PostgreSQL schema made for a test (no-op without a URL). */
export async function dropSchema(databaseUrl: string | undefined, schema: string): Promise<void> {
  if (!databaseUrl) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Deletes every Redis key under a prefix (no-op without a URL). */
export async function deleteRedisPrefix(redisUrl: string | undefined, prefix: string): Promise<void> {
  if (!redisUrl || !prefix) return;
  // SCAN patterns are not prefixed by ioredis, so this client has no keyPrefix and matches the full key.
  const plain = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await plain.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await plain.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await plain.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    plain.disconnect();
  }
}

export interface TestDatabase {
  db: Database;
  /** The settings a server process needs to use this same database. */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function openPostgresForTest(): Promise<TestDatabase> {
  if (!DATABASE_URL) throw new Error('DATABASE_URL is not set');
  const schema = uniqueName('t');
  const db = await openDatabase({ databaseUrl: DATABASE_URL, databaseSchema: schema, databasePoolSize: 4, dataDir: tmpdir() });
  await migrate(db);
  return {
    db,
    env: { DATABASE_URL, DATABASE_SCHEMA: schema },
    async cleanup() {
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await db.close();
    },
  };
}

/**
 * A new PGlite cluster costs seconds of CPU (its initdb runs in
 * WebAssembly), and every embedded test database starts from the same empty
 * one. The first test to need one makes it once under node_modules/.cache,
 * keyed by the PGlite version; each test database then starts as a copy.
 * The server opens the copy as it opens any existing DATA_DIR (a restart);
 * migrations, first start and keys run as on a new one. Starting in an
 * empty folder stays covered by the tests that start `node src/main.ts`
 * without DATABASE_URL (test/server/).
 */
const MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url));

async function emptyPgliteCluster(): Promise<string> {
  const version = JSON.parse(readFileSync(join(MODULES, '@electric-sql/pglite/package.json'), 'utf8')).version as string;
  const template = join(MODULES, '.cache', `pglite-${version}`);
  if (existsSync(template)) return template;
  // Made aside and renamed into place: test files starting together never see half a cluster.
  const making = `${template}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const { PGlite } = await import('@electric-sql/pglite');
  const lite = await PGlite.create(making);
  await lite.close();
  try {
    renameSync(making, template);
  } catch {
    // Another test process renamed its copy first; both are the same empty cluster.
    rmSync(making, { recursive: true, force: true });
  }
  return template;
}

/** Puts an empty PGlite cluster where the server looks for it (DATA_DIR/pglite, src/storage/database.ts). */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  cpSync(await emptyPgliteCluster(), join(dataDir, 'pglite'), { recursive: true });
}

export async function openPgliteForTest(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-test-'));
  await seedPgliteDataDir(dataDir);
  const db = await openDatabase({ databaseSchema: 'public', databasePoolSize: 1, dataDir });
  await migrate(db);
  return {
    db,
    env: { DATA_DIR: dataDir },
    async cleanup() {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Real PostgreSQL when DATABASE_URL is set, the embedded PGlite otherwise. */
export function openTestDatabase(): Promise<TestDatabase> {
  return DATABASE_URL ? openPostgresForTest() : openPgliteForTest();
}

export interface TestRedis {
  redis: Redis;
  prefix: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function openRedisForTest(): Promise<TestRedis> {
  if (!REDIS_URL) throw new Error('REDIS_URL is not set');
  const prefix = `${uniqueName('test')}:`;
  const redis = new Redis(REDIS_URL, { keyPrefix: prefix, lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  return {
    redis,
    prefix,
    env: { REDIS_URL, REDIS_PREFIX: prefix },
    async cleanup() {
      try {
        await deleteRedisPrefix(REDIS_URL, prefix);
      } finally {
        redis.disconnect();
      }
    },
  };
}
