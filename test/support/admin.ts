import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig, decodeMasterKey } from '../../config/load.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { deriveKey } from '../../src/keys/master-key.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { DATABASE_URL, REDIS_URL, uniqueName } from './stores.ts';

// An in-process server for the admin API tests: its own port, DATA_DIR,
// PostgreSQL schema (or PGlite folder) and Redis prefix, all removed again.

/** A free TCP port on 127.0.0.1, chosen by the OS. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The isolated settings of one test server; `cleanup` removes its stores. */
export interface TestEnvironment {
  env: Record<string, string>;
  dataDir: string;
  cleanup(): Promise<void>;
}

export async function prepareEnvironment(extra: Record<string, string> = {}): Promise<TestEnvironment> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-admin-'));
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    INSTANCE_DOMAIN: 'example.test',
    LOG_LEVEL: 'silent',
    SHUTDOWN_TIMEOUT: '2',
  };
  const schema = uniqueName('t');
  if (DATABASE_URL) {
    Object.assign(env, { DATABASE_URL, DATABASE_SCHEMA: schema, DATABASE_POOL_SIZE: '8', MASTER_KEY: randomBytes(32).toString('hex') });
  }
  const redisPrefix = `${uniqueName('test')}:`;
  if (REDIS_URL) Object.assign(env, { REDIS_URL, REDIS_PREFIX: redisPrefix });
  Object.assign(env, extra);

  return {
    env,
    dataDir,
    async cleanup() {
      if (DATABASE_URL) {
        const db = await openDatabase({ databaseUrl: DATABASE_URL, databaseSchema: schema, databasePoolSize: 1, dataDir });
        try {
          await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await db.close();
        }
      }
      if (REDIS_URL) {
        const plain = new Redis(REDIS_URL, { lazyConnect: true });
        await plain.connect();
        let cursor = '0';
        do {
          const [next, keys] = await plain.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 500);
          if (keys.length) await plain.del(...keys);
          cursor = next;
        } while (cursor !== '0');
        plain.disconnect();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts the real server in this process with `env` (and nothing from process.env). */
export function startWith(env: Record<string, string>): Promise<RunningServer> {
  return startServer(loadConfig(env), createLogger('silent'));
}

export interface AdminServer {
  running: RunningServer;
  url: string;
  env: Record<string, string>;
  dataDir: string;
  /** The first-start admin PAT (IAM_OWNER). */
  pat: string;
  /** Key of the PAT digests, derived from the master key the server uses. */
  secretKey: Buffer;
  stop(): Promise<void>;
}

export async function startAdminServer(extra: Record<string, string> = {}): Promise<AdminServer> {
  const environment = await prepareEnvironment(extra);
  let running: RunningServer;
  try {
    running = await startWith(environment.env);
  } catch (err) {
    await environment.cleanup();
    throw err;
  }
  const { env, dataDir } = environment;
  const master = env.MASTER_KEY ? decodeMasterKey(env.MASTER_KEY) : decodeMasterKey(readFileSync(join(dataDir, 'master.key'), 'utf8'));
  return {
    running,
    url: running.url,
    env,
    dataDir,
    pat: readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim(),
    secretKey: deriveKey(master, 'secret digests'),
    async stop() {
      try {
        await running.stop();
      } finally {
        await environment.cleanup();
      }
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: any;
}

/**
 * One HTTP call. Every answer of the admin API is checked to be no 500
 * (SPEC 3: caller mistakes are 4xx, never 500) and, when it is an error, to
 * carry the SEED 2.7 body.
 */
export async function call(url: string, init: RequestInit = {}): Promise<ApiResponse> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  assert.ok(response.status < 500, `${init.method ?? 'GET'} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  if (response.status >= 400) assertErrorBody({ status: response.status, headers: response.headers, text, body });
  return { status: response.status, headers: response.headers, text, body };
}

/** SEED 2.7: `{code: integer, message: string, details: [{'@type': string}]}`. */
export function assertErrorBody(response: ApiResponse, code?: number): void {
  const { body } = response;
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `error body is not a JSON object (HTTP ${response.status}): ${response.text.slice(0, 300)}`);
  assert.equal(typeof body.code, 'number', `error body has no numeric code: ${response.text.slice(0, 300)}`);
  assert.ok(Number.isInteger(body.code));
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.details), 'error body has no details array');
  for (const detail of body.details) assert.equal(typeof detail['@type'], 'string');
  if (code !== undefined) assert.equal(body.code, code, `expected code ${code}, got ${body.code}: ${body.message}`);
}

/** The fields named by the `google.rpc.BadRequest` detail of a 400. */
export function violatedFields(response: ApiResponse): string[] {
  const detail = (response.body?.details ?? []).find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
  return (detail?.fieldViolations ?? []).map((v: { field: string }) => v.field);
}

/** A 400 with code 3 naming exactly these fields (in any order). */
export function assertViolations(response: ApiResponse, fields: string[]): void {
  assert.equal(response.status, 400, `expected 400, got ${response.status}: ${response.text.slice(0, 300)}`);
  assertErrorBody(response, 3);
  assert.deepEqual(violatedFields(response).sort(), [...fields].sort(), response.body.message);
}
