import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { apiClient, violatedFields, type Api, type ApiResponse } from './api.ts';
import { readAdminPat, secretDigestKey, startInProcess, type InProcessServer } from './server.ts';

// One real server in this process for the management API tests: its own
// port, DATA_DIR, PostgreSQL schema (with DATABASE_URL) and Redis prefix
// (with REDIS_URL), and a logger writing into memory so tests can prove
// that no secret reaches the log.

export interface ManagementServer extends InProcessServer {
  /** The PAT of the first-start admin machine user (IAM_OWNER). */
  adminPat: string;
  /** The key of the secret digests, as the server derives it. */
  secretKey: Buffer;
  /** Everything the server logged so far. */
  logText(): string;
  /** A call to the API with the admin PAT by default; fails the test on any 5xx answer or a body that is not JSON. */
  call: Api;
}

export async function startManagementServer(): Promise<ManagementServer> {
  let log = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      log += String(chunk);
      done();
    },
  });
  // pino at info into `log`, without the redaction of src/logger.ts.
  const server = await startInProcess({ INSTANCE_DOMAIN: 'example.test', SHUTDOWN_TIMEOUT: '2' }, { logger: pino({ level: 'info' }, sink) });
  const adminPat = readAdminPat(server.dataDir);
  return {
    ...server,
    adminPat,
    secretKey: secretDigestKey(server.config),
    logText: () => log,
    call: apiClient(server.url, adminPat, { strictJson: true }),
  };
}

/** Asserts a 400 with code 3 whose fieldViolations name each of `fields` (others may be named too). */
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
