import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadConfig, type ConfigResult } from '../../config/load.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { DATABASE_URL, REDIS_URL, uniqueName } from './stores.ts';

// Servers for tests: in this process (fast, full access to internals) or as a
// child process started exactly like `npm start` (real start-up, signals,
// exit codes). Each gets its own data folder, PostgreSQL schema and Redis
// key prefix, removed again by `stop`.

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NODE = join(ROOT, 'node_modules/.bin/node');
export const MAIN = join(ROOT, 'src/main.ts');

/** A TCP port that was free a moment ago (bind to 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

export function tempDir(prefix = 'portcullis-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** 32 random bytes as 64 hex characters, the MASTER_KEY format. */
export function randomMasterKey(): string {
  return randomBytes(32).toString('hex');
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

export interface InProcessServer {
  /** Where to send requests: http://127.0.0.1:PORT. */
  url: string;
  issuer: string;
  config: ConfigResult;
  running: RunningServer;
  /** Stops the server and removes its data folder, schema and Redis keys. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /**
   * Use the PostgreSQL / Redis of DATABASE_URL / REDIS_URL from the test
   * run's environment when set (default true); false: embedded PGlite only.
   */
  sharedStores?: boolean;
}

/**
 * Starts the real server in this process on a free port of 127.0.0.1. Unless
 * `env` says otherwise: ISSUER is http://127.0.0.1:PORT, DATA_DIR a fresh
 * temporary folder, and with DATABASE_URL / REDIS_URL in the test run's
 * environment the server uses them with a schema and key prefix of its own.
 */
export async function startInProcess(env: Record<string, string> = {}, options: StartOptions = {}): Promise<InProcessServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const ownDataDir = env.DATA_DIR ? undefined : tempDir();
  const shared = options.sharedStores ?? true;
  const full: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'silent',
    ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}),
  };
  let ownSchema: string | undefined;
  let ownPrefix: string | undefined;
  if (shared && DATABASE_URL && env.DATABASE_URL === undefined) {
    ownSchema = uniqueName('t');
    Object.assign(full, { DATABASE_URL, DATABASE_SCHEMA: ownSchema, MASTER_KEY: randomMasterKey() });
  }
  if (shared && REDIS_URL && env.REDIS_URL === undefined) {
    ownPrefix = `${uniqueName('test')}:`;
    Object.assign(full, { REDIS_URL, REDIS_PREFIX: ownPrefix });
  }
  Object.assign(full, env);

  const cleanup = async () => {
    if (ownSchema) await dropSchema(DATABASE_URL, ownSchema).catch(() => {});
    if (ownPrefix) await deleteRedisPrefix(REDIS_URL, ownPrefix).catch(() => {});
    if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
  };

  const config = loadConfig(full);
  let running: RunningServer;
  try {
    running = await startServer(config, createLogger('silent'));
  } catch (err) {
    await cleanup();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: running.url,
    issuer: config.issuer,
    config,
    running,
    stop: () =>
      (stopped ??= (async () => {
        await running.stop();
        await cleanup();
      })()),
  };
}

export interface SpawnedServer {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  child: ChildProcess;
  /** The environment the child was given (after defaults). */
  env: Record<string, string>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) once the child has exited. */
  exited: Promise<number | null>;
  /** True once the child has exited. */
  hasExited(): boolean;
  /** Whether GET /healthz answered before the child exited. */
  healthy: boolean;
  /** Sends `signal` and resolves with the exit code; SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

const children = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Kills (SIGKILL) every child spawned here that is still running; for `after` hooks. */
export async function killAllChildren(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SpawnOptions {
  /** Give up waiting for /healthz after this long (default 20 s); the child is killed then. */
  readyTimeoutMs?: number;
  /** Add no HOST default (the server's own default, 0.0.0.0, applies). */
  noHostDefault?: boolean;
}

/**
 * Starts `node src/main.ts` as `npm start` would, with only PATH and HOME
 * inherited (never DATABASE_URL or REDIS_URL unless passed in `env`), HOST
 * 127.0.0.1, a free PORT and a fresh DATA_DIR (removed when the child exits)
 * unless given. Resolves once
 * GET /healthz answers or the process has exited (see `healthy`, `exited`).
 */
export async function spawnServer(env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<SpawnedServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const full: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    ...(options.noHostDefault ? {} : { HOST: '127.0.0.1' }),
    PORT: String(port),
    ...env,
  };
  const ownDataDir = full.DATA_DIR === undefined ? tempDir() : undefined;
  if (ownDataDir) full.DATA_DIR = ownDataDir;
  const url = `http://127.0.0.1:${port}`;

  const child = spawn(NODE, [MAIN], { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      done = true;
      children.delete(child);
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
      // Let the pipes drain so stdout()/stderr() are complete.
      setImmediate(() => resolve(code));
    });
  });

  const handle: SpawnedServer = {
    url,
    port,
    child,
    env: full,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => done,
    healthy: false,
    async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000) {
      if (!done) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      }
      return exited;
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  while (!done && Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) {
        handle.healthy = true;
        return handle;
      }
    } catch {
      // not listening yet
    }
    await Promise.race([sleep(100), exited]);
  }
  if (done) {
    await exited;
    return handle;
  }
  child.kill('SIGKILL');
  await exited;
  throw new Error(`server did not answer /healthz within ${options.readyTimeoutMs ?? 20_000} ms\nstdout:\n${out}\nstderr:\n${err}`);
}
