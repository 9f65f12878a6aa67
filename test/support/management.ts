import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { loadConfig } from '../../config/load.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { deriveKey, resolveMasterKey } from '../../src/keys/master-key.ts';
import { DATABASE_URL, REDIS_URL, uniqueName } from './stores.ts';

// One real server in this process for the management API tests: its own
// port, DATA_DIR, PostgreSQL schema (with DATABASE_URL) and Redis prefix
// (with REDIS_URL), and a logger writing into memory so tests can prove
// that no secret reaches the log.

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

async function deleteRedisKeys(prefix: string): Promise<void> {
  const plain = new Redis(REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
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

export interface ApiResponse {
  status: number;
  /** The parsed JSON body (undefined when empty). */
  body: any;
  /** The body as sent, to assert on what it must never contain. */
  text: string;
}

export interface CallOptions {
  /** Bearer token; default: the admin PAT; null: no Authorization header. */
  token?: string | null;
  body?: unknown;
  /** Raw body text (sent as application/json unless `contentType` says otherwise). */
  raw?: string;
  contentType?: string;
  /** `x-service-orgid`. */
  orgId?: string;
}

export interface ManagementServer {
  url: string;
  running: RunningServer;
  /** The PAT of the first-start admin machine user (IAM_OWNER). */
  adminPat: string;
  /** The key of the secret digests, as the server derives it. */
  secretKey: Buffer;
  /** Everything the server logged so far. */
  logText(): string;
  /** A call to the API; fails the test on any 5xx answer. */
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  stop(): Promise<void>;
}

export async function startManagementServer(): Promise<ManagementServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-mgmt-'));
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    INSTANCE_DOMAIN: 'example.test',
    SHUTDOWN_TIMEOUT: '2',
  };
  const schema = DATABASE_URL ? uniqueName('t') : undefined;
  if (schema) Object.assign(env, { DATABASE_URL, DATABASE_SCHEMA: schema, MASTER_KEY: randomBytes(32).toString('hex') });
  const redisPrefix = REDIS_URL ? `${uniqueName('test')}:` : undefined;
  if (redisPrefix) Object.assign(env, { REDIS_URL, REDIS_PREFIX: redisPrefix });

  const cleanup = async () => {
    if (schema) await dropSchema(schema).catch(() => {});
    if (redisPrefix) await deleteRedisKeys(redisPrefix).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  };

  let log = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      log += String(chunk);
      done();
    },
  });
  const config = loadConfig(env);
  let running: RunningServer;
  try {
    running = await startServer(config, pino({ level: 'info' }, sink));
  } catch (err) {
    await cleanup();
    throw err;
  }
  const adminPat = readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim();
  const secretKey = deriveKey(resolveMasterKey(config.masterKey, dataDir).key, 'secret digests');

  async function call(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? adminPat : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.orgId !== undefined) headers['x-service-orgid'] = options.orgId;
    let payload: string | undefined = options.raw;
    if (options.body !== undefined) payload = JSON.stringify(options.body);
    if (payload !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    const res = await fetch(`${running.url}${path}`, { method, headers, body: payload });
    const text = await res.text();
    assert.ok(res.status < 500, `${method} ${path} answered ${res.status}: ${text}`);
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  }

  let stopped: Promise<void> | undefined;
  return {
    url: running.url,
    running,
    adminPat,
    secretKey,
    logText: () => log,
    call,
    stop: () =>
      (stopped ??= (async () => {
        await running.stop();
        await cleanup();
      })()),
  };
}

/** The fields named by a 400 answer's fieldViolations. */
export function violatedFields(response: ApiResponse): string[] {
  const badRequest = (response.body?.details ?? []).find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
  return (badRequest?.fieldViolations ?? []).map((v: { field: string }) => v.field);
}

/** Asserts a 400 whose fieldViolations name `field` (and, when given, only the fields listed). */
export function assertInvalid(response: ApiResponse, ...fields: string[]): void {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.code, 3);
  const named = violatedFields(response);
  for (const field of fields) assert.ok(named.includes(field), `expected a violation of ${field}, got ${JSON.stringify(named)}`);
}

/** Asserts the error status and its gRPC code (SPEC 3). */
export function assertError(response: ApiResponse, status: 401 | 403 | 404 | 409): void {
  const codes = { 401: 16, 403: 7, 404: 5, 409: 6 };
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, codes[status]);
}

/** A SEED 2.6 details object owned by `resourceOwner`. */
export function assertDetails(details: any, resourceOwner: string): void {
  assert.match(details.sequence, /^\d+$/);
  assert.ok(!Number.isNaN(Date.parse(details.creationDate)));
  assert.ok(!Number.isNaN(Date.parse(details.changeDate)));
  assert.equal(details.resourceOwner, resourceOwner);
}
