import type { ChildProcess } from 'node:child_process';
import { request, type ApiResponse } from './api.ts';
import { spawnServer } from './server.ts';

// Real `src/main.ts` processes for the tests of several nodes on one
// database, and the engine's first answers to a browser.

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
