import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type ConfigResult } from '../../config/load.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { deriveKey, resolveMasterKey } from '../../src/keys/master-key.ts';
import { generateSecret, secretDigest } from '../../src/security/secrets.ts';
import { newId } from '../../src/domain/ids.ts';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { apiClient, type Api } from './api.ts';
import { DATABASE_URL, REDIS_URL, deleteRedisPrefix, dropSchema, seedPgliteDataDir, uniqueName } from './stores.ts';

// Their home is stores.ts; the benchmark (bench/run.ts) imports them from here.
export { deleteRedisPrefix, dropSchema };

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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The first-start admin machine user's PAT (IAM_OWNER), as written into DATA_DIR. */
export function readAdminPat(dataDir: string): string {
  return readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim();
}

/** The key of the secret digests (PATs, client secrets), derived from the master key the server uses. */
export function secretDigestKey(config: ConfigResult): Buffer {
  return deriveKey(resolveMasterKey(config.masterKey, config.dataDir).key, 'secret digests');
}

export interface StorageSettings {
  /** DATABASE_URL, DATABASE_SCHEMA and MASTER_KEY; REDIS_URL and REDIS_PREFIX (each when used). */
  env: Record<string, string>;
  /** Drops the schema and deletes the Redis keys. */
  cleanup(): Promise<void>;
}

/**
 * Storage settings for one test server, or several sharing them: with
 * DATABASE_URL / REDIS_URL in the test run's environment, a PostgreSQL schema
 * (and MASTER_KEY) and a Redis key prefix of their own. `use` leaves either out.
 */
export function sharedStorageEnv(use: { postgres?: boolean; redis?: boolean } = {}): StorageSettings {
  const env: Record<string, string> = {};
  const schema = (use.postgres ?? true) && DATABASE_URL ? uniqueName('t') : undefined;
  const prefix = (use.redis ?? true) && REDIS_URL ? `${uniqueName('test')}:` : undefined;
  if (schema) Object.assign(env, { DATABASE_URL, DATABASE_SCHEMA: schema, MASTER_KEY: randomMasterKey() });
  if (prefix) Object.assign(env, { REDIS_URL, REDIS_PREFIX: prefix });
  return {
    env,
    async cleanup() {
      // Both, even when one of them fails.
      const results = await Promise.allSettled([schema && dropSchema(DATABASE_URL, schema), prefix && deleteRedisPrefix(REDIS_URL, prefix)]);
      for (const result of results) if (result.status === 'rejected') throw result.reason;
    },
  };
}

export interface StartOptions {
  /**
   * Use the PostgreSQL / Redis of DATABASE_URL / REDIS_URL from the test
   * run's environment when set (default true); false: embedded PGlite only.
   */
  sharedStores?: boolean;
  /** The server's logger (default: a silent one), e.g. one writing into memory. */
  logger?: Logger;
}

/** The settings of one test server; `cleanup` removes its data folder (when made here), schema and Redis keys. */
export interface TestEnvironment {
  /** Everything the server is configured with (nothing comes from process.env). */
  env: Record<string, string>;
  dataDir: string;
  cleanup(): Promise<void>;
}

/**
 * The settings of `testServer`: unless `env` says otherwise, PORT a free
 * port of 127.0.0.1, ISSUER http://127.0.0.1:PORT, DATA_DIR a fresh temporary
 * folder, AUTH_FAILURE_LIMIT 0 (no throttling), and with DATABASE_URL / REDIS_URL in the test run's environment a
 * schema and key prefix of its own; without a DATABASE_URL, the fresh folder
 * starts with an empty PGlite cluster (stores.ts, `seedPgliteDataDir`).
 */
export async function prepareEnvironment(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestEnvironment> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const ownDataDir = env.DATA_DIR ? undefined : tempDir();
  const shared = options.sharedStores ?? true;
  const storage = sharedStorageEnv({ postgres: shared && env.DATABASE_URL === undefined, redis: shared && env.REDIS_URL === undefined });
  const full: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'silent',
    // Every test request comes from 127.0.0.1 and many fail on purpose: the
    // throttle of failed authentication is off unless a test turns it on.
    AUTH_FAILURE_LIMIT: '0',
    ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}),
    ...storage.env,
    ...env,
  };
  if (ownDataDir && !full.DATABASE_URL) await seedPgliteDataDir(ownDataDir);
  return {
    env: full,
    dataDir: full.DATA_DIR!,
    async cleanup() {
      await storage.cleanup().catch(() => {});
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}

export interface InProcessServer {
  /** Where to send requests: http://127.0.0.1:PORT. */
  url: string;
  issuer: string;
  config: ConfigResult;
  /** The settings the server was started with. */
  env: Record<string, string>;
  dataDir: string;
  running: RunningServer;
  /** Stops the server and removes its data folder, schema and Redis keys. */
  stop(): Promise<void>;
}

export interface TestServerOptions extends StartOptions {
  /** Settings over the defaults of `prepareEnvironment` (and INSTANCE_DOMAIN example.test, SHUTDOWN_TIMEOUT 2). */
  env?: Record<string, string>;
  /** Log at info into memory (`logText`) instead of not at all: for tests that prove no secret is logged. */
  captureLog?: boolean;
}

export interface TestServer extends InProcessServer {
  /** The first-start admin machine user's PAT (IAM_OWNER). */
  pat: string;
  /** Key of the secret and PAT digests, as the server derives it from its master key. */
  secretKey: Buffer;
  /** JSON calls of the admin and management API with the admin PAT by default; never a 5xx. */
  api: Api;
  /** What the server logged so far (with `captureLog`). */
  logText(): string;
}

/**
 * The one way tests start the real server in this process: its own port,
 * DATA_DIR, PostgreSQL schema and Redis prefix (removed again by `stop`),
 * with the admin PAT and an API client at hand. Scenes of several apps and
 * users (test/support/*-world) build on it.
 */
export async function testServer(options: TestServerOptions = {}): Promise<TestServer> {
  let log = '';
  const logger = options.captureLog
    ? pino(
        { level: 'info' },
        new Writable({
          write(chunk, _encoding, done) {
            log += String(chunk);
            done();
          },
        }),
      )
    : options.logger;
  const env = { INSTANCE_DOMAIN: 'example.test', SHUTDOWN_TIMEOUT: '2', ...(DATABASE_URL ? { DATABASE_POOL_SIZE: '8' } : {}), ...options.env };
  const environment = await prepareEnvironment(env, options);
  let config: ConfigResult;
  let running: RunningServer;
  try {
    config = loadConfig(environment.env);
    running = await startServer(config, logger ?? createLogger('silent'));
  } catch (err) {
    await environment.cleanup();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  const pat = readAdminPat(environment.dataDir);
  return {
    url: running.url,
    issuer: config.issuer,
    config,
    env: environment.env,
    dataDir: environment.dataDir,
    running,
    pat,
    secretKey: secretDigestKey(config),
    api: apiClient(running.url, pat, { strictJson: true }),
    logText: () => log,
    stop: () =>
      (stopped ??= (async () => {
        await running.stop();
        await environment.cleanup();
      })()),
  };
}

/** A PAT for `userId`, inserted straight into the database (for users the API gives none, e.g. humans). */
export async function insertPat(server: TestServer, userId: string): Promise<string> {
  const token = generateSecret();
  await server.running.db.query('INSERT INTO personal_access_tokens (id, user_id, digest, expires_at, created_at) VALUES ($1, $2, $3, NULL, now())', [
    newId(),
    userId,
    secretDigest(server.secretKey, token),
  ]);
  return token;
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

export interface SpawnOptions {
  /** Give up waiting for /healthz after this long (default 60 s); the child is killed then. */
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

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
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
  throw new Error(`server did not answer /healthz within ${options.readyTimeoutMs ?? 60_000} ms\nstdout:\n${out}\nstderr:\n${err}`);
}
