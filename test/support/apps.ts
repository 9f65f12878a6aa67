import type { ChildProcess } from 'node:child_process';
import { generateSecret, secretDigest } from '../../src/security/secrets.ts';
import { newId } from '../../src/domain/ids.ts';
import { apiClient, request, type Api, type ApiResponse } from './api.ts';
import { readAdminPat, secretDigestKey, spawnServer, startInProcess, type InProcessServer } from './server.ts';

// Servers for the projects & apps tests: one in this process (internals at
// hand), or real `src/main.ts` processes (several nodes on one database).

// ---- in-process server

export interface AppsServer extends InProcessServer {
  /** The admin machine user's PAT (IAM_OWNER). */
  pat: string;
  /** Calls with the admin PAT. */
  api: Api;
  /** A PAT for `userId`, inserted straight into the database. */
  insertPat(userId: string): Promise<string>;
}

export async function startAppsServer(extra: Record<string, string> = {}): Promise<AppsServer> {
  const server = await startInProcess({ INSTANCE_DOMAIN: 'example.test', ...extra });
  const pat = readAdminPat(server.dataDir);
  const digestKey = secretDigestKey(server.config);
  return {
    ...server,
    pat,
    api: apiClient(server.url, pat),
    async insertPat(userId) {
      const token = generateSecret();
      await server.running.db.query('INSERT INTO personal_access_tokens (id, user_id, digest, expires_at, created_at) VALUES ($1, $2, $3, NULL, now())', [
        newId(),
        userId,
        secretDigest(digestKey, token),
      ]);
      return token;
    },
  };
}

// ---- child processes

export interface ChildServer {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** What the process wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `spawnServer` with LOG_LEVEL=warn unless given; fails unless the server
 * answers /healthz.
 */
export async function startChild(env: Record<string, string>): Promise<ChildServer> {
  const server = await spawnServer({ LOG_LEVEL: 'warn', ...env });
  const output = () => `${server.stdout()}${server.stderr()}`.slice(-20_000);
  if (!server.healthy) throw new Error(`server exited during start-up (${await server.exited}):\n${output()}`);
  return {
    url: server.url,
    port: server.port,
    dataDir: server.env.DATA_DIR!,
    child: server.child,
    output,
    stop: async () => {
      await server.stop('SIGTERM', 5000);
    },
  };
}

// ---- the OIDC engine

/** `/oauth/v2/authorize` with the given parameters, not following redirects. */
export function authorize(baseUrl: string, params: Record<string, string>): Promise<ApiResponse> {
  return request(`${baseUrl}/oauth/v2/authorize?${new URLSearchParams(params)}`);
}

/** True when the engine sent the browser on to its login page. */
export function wentToLogin(response: ApiResponse, baseUrl: string): boolean {
  const location = response.headers.get('location');
  return response.status === 303 && location !== null && new URL(location, baseUrl).pathname.startsWith('/ui/login/');
}
