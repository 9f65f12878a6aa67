import { loadConfig } from '../../config/load.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { request, type ApiResponse } from './api.ts';
import { prepareEnvironment as prepareServerEnvironment, readAdminPat, secretDigestKey, startInProcess, type InProcessServer, type TestEnvironment } from './server.ts';
import { DATABASE_URL } from './stores.ts';

// An in-process server for the admin API tests: its own port, DATA_DIR,
// PostgreSQL schema (or PGlite folder) and Redis prefix, all removed again.

export type { TestEnvironment };

/** What the admin API tests add to the settings of server.ts. */
function adminEnv(extra: Record<string, string>): Record<string, string> {
  return { INSTANCE_DOMAIN: 'example.test', SHUTDOWN_TIMEOUT: '2', ...(DATABASE_URL ? { DATABASE_POOL_SIZE: '8' } : {}), ...extra };
}

export function prepareEnvironment(extra: Record<string, string> = {}): Promise<TestEnvironment> {
  return prepareServerEnvironment(adminEnv(extra));
}

/** Starts the real server in this process with `env` (and nothing from process.env). */
export function startWith(env: Record<string, string>): Promise<RunningServer> {
  return startServer(loadConfig(env), createLogger('silent'));
}

export interface AdminServer extends InProcessServer {
  /** The first-start admin PAT (IAM_OWNER). */
  pat: string;
  /** Key of the PAT digests, derived from the master key the server uses. */
  secretKey: Buffer;
}

export async function startAdminServer(extra: Record<string, string> = {}): Promise<AdminServer> {
  const server = await startInProcess(adminEnv(extra));
  return { ...server, pat: readAdminPat(server.dataDir), secretKey: secretDigestKey(server.config) };
}

/**
 * One HTTP call, following redirects. Every answer of the admin API is
 * checked to be no 500 (SPEC 3: caller mistakes are 4xx, never 500) and, when
 * it is an error, to carry the SEED 2.7 body.
 */
export function call(url: string, init: RequestInit = {}): Promise<ApiResponse> {
  return request(url, { redirect: 'follow', ...init }, { errorBody: true });
}
