import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Redis } from 'ioredis';
import { decodeMasterKey, loadConfig, type ConfigResult } from '../../config/load.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { deriveKey } from '../../src/keys/master-key.ts';
import { generateSecret, secretDigest } from '../../src/security/secrets.ts';
import { newId } from '../../src/domain/ids.ts';
import { DATABASE_URL, REDIS_URL, uniqueName } from './stores.ts';

// Servers for the projects & apps tests: one in this process (internals at
// hand), or real `src/main.ts` processes (several nodes on one database).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE = join(ROOT, 'node_modules/.bin/node');
const MAIN = join(ROOT, 'src/main.ts');

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

export function randomMasterKey(): string {
  return randomBytes(32).toString('hex');
}

export async function dropSchema(schema: string): Promise<void> {
  if (!DATABASE_URL) return;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export async function deleteRedisPrefix(prefix: string): Promise<void> {
  if (!REDIS_URL) return;
  const plain = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
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

/**
 * Storage settings for one test server (or several sharing them): a unique
 * PostgreSQL schema and Redis prefix when those servers are configured.
 */
export function sharedStorageEnv(): { env: Record<string, string>; cleanup(): Promise<void> } {
  const env: Record<string, string> = {};
  const schema = uniqueName('t');
  const prefix = `${uniqueName('apps')}:`;
  if (DATABASE_URL) Object.assign(env, { DATABASE_URL, DATABASE_SCHEMA: schema, MASTER_KEY: randomMasterKey() });
  if (REDIS_URL) Object.assign(env, { REDIS_URL, REDIS_PREFIX: prefix });
  return {
    env,
    async cleanup() {
      if (DATABASE_URL) await dropSchema(schema);
      if (REDIS_URL) await deleteRedisPrefix(prefix);
    },
  };
}

// ---- HTTP

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** A request that must never be answered with a 500. */
export async function request(url: string, init: RequestInit = {}): Promise<ApiResponse> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  assert.ok(response.status < 500, `${init.method ?? 'GET'} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  return { status: response.status, headers: response.headers, text, json };
}

export type Api = (method: string, path: string, options?: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string> }) => Promise<ApiResponse>;

/** JSON calls to the admin/management API with a bearer token (null: none). */
export function apiClient(baseUrl: string, defaultToken: string): Api {
  return (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? defaultToken : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.raw !== undefined || options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = options.raw ?? JSON.stringify(options.body);
    }
    return request(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  };
}

// ---- in-process server

export interface InProcessServer {
  url: string;
  issuer: string;
  config: ConfigResult;
  running: RunningServer;
  dataDir: string;
  /** The admin machine user's PAT (IAM_OWNER). */
  pat: string;
  masterKey: Buffer;
  api: Api;
  /** A PAT for `userId`, inserted straight into the database. */
  insertPat(userId: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startInProcess(extra: Record<string, string> = {}): Promise<InProcessServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-apps-'));
  const storage = sharedStorageEnv();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    INSTANCE_DOMAIN: 'example.test',
    ...storage.env,
    ...extra,
  });
  let running: RunningServer;
  try {
    running = await startServer(config, createLogger('silent'));
  } catch (err) {
    await storage.cleanup().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const masterKey = config.masterKey ?? decodeMasterKey(readFileSync(join(dataDir, 'master.key'), 'utf8'));
  const pat = readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim();
  const digestKey = deriveKey(masterKey, 'secret digests');
  return {
    url: running.url,
    issuer: config.issuer,
    config,
    running,
    dataDir,
    pat,
    masterKey,
    api: apiClient(running.url, pat),
    async insertPat(userId) {
      const token = generateSecret();
      await running.db.query('INSERT INTO personal_access_tokens (id, user_id, digest, expires_at, created_at) VALUES ($1, $2, $3, NULL, now())', [
        newId(),
        userId,
        secretDigest(digestKey, token),
      ]);
      return token;
    },
    async stop() {
      await running.stop();
      await storage.cleanup().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---- child processes

export interface ChildServer {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** What the process wrote to stderr so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node src/main.ts` with PATH, HOME and `env` (plus LOG_LEVEL=warn,
 * HOST, PORT and a fresh DATA_DIR unless given) and waits for /healthz.
 */
export async function startChild(env: Record<string, string>): Promise<ChildServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'portcullis-apps-'));
  const child = spawn(NODE, [MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  child.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`server exited during start-up (${child.exitCode ?? child.signalCode}):\n${output}`);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server did not answer /healthz within 20 s:\n${output}`);
    }
    await sleep(100);
  }
  return { url, port, dataDir, child, output: () => output, stop };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- management helpers

/** The field names of a 400's BadRequest details. */
export function violatedFields(response: ApiResponse): string[] {
  const details = (response.json?.details ?? []) as Array<{ '@type': string; fieldViolations?: Array<{ field: string }> }>;
  return details.flatMap((d) => (d.fieldViolations ?? []).map((v) => v.field));
}

/** Asserts a 400 gRPC-style error naming exactly `fields`. */
export function assertInvalid(response: ApiResponse, fields: string[], what = ''): void {
  assert.equal(response.status, 400, `${what}: expected 400, got ${response.status} ${response.text.slice(0, 300)}`);
  assert.equal(response.json?.code, 3, `${what}: code 3 expected`);
  assert.deepEqual(violatedFields(response).sort(), [...fields].sort(), `${what}: fields named in ${response.text.slice(0, 500)}`);
}

/** `/oauth/v2/authorize` with the given parameters, not following redirects. */
export function authorize(baseUrl: string, params: Record<string, string>): Promise<ApiResponse> {
  return request(`${baseUrl}/oauth/v2/authorize?${new URLSearchParams(params)}`);
}

/** True when the engine sent the browser on to its login page. */
export function wentToLogin(response: ApiResponse, baseUrl: string): boolean {
  const location = response.headers.get('location');
  return response.status === 303 && location !== null && new URL(location, baseUrl).pathname.startsWith('/ui/login/');
}
