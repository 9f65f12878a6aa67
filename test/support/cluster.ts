import { apiClient, basicHeader, request, type ApiResponse } from './api.ts';
import { freePort, readAdminPat, sharedStorageEnv, spawnServer, type SpawnedServer } from './server.ts';
import { DATABASE_URL, REDIS_URL } from './stores.ts';

// Several real `src/main.ts` processes behind one ISSUER, sharing one
// PostgreSQL schema, one Redis key prefix and one MASTER_KEY, as docs/operations.md runs
// them behind a load balancer. Node 0 starts first and creates the instance
// (its DATA_DIR holds admin.pat); the others start after it, together.

export interface ClusterNode {
  name: string;
  port: number;
  /** http://127.0.0.1:PORT, for requests from this process. */
  url: string;
  /** http://localhost:PORT, for the browser (one cookie host with the issuer). */
  browserUrl: string;
  server: SpawnedServer;
}

export interface Cluster {
  /** http://localhost:<port of the first node>, the ISSUER of every node. */
  issuer: string;
  nodes: ClusterNode[];
  /** The first-start admin machine user's PAT (IAM_OWNER). */
  adminPat: string;
  /** A JSON call to a node's admin/management API with the admin PAT; fails on 5xx. */
  api(node: ClusterNode, method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** Everything the nodes wrote to stdout and stderr, for failure messages. */
  output(): string;
  /** Stops every node, drops the schema and deletes the Redis keys. */
  stop(): Promise<void>;
}

/** A form POST (token, introspection, revocation), with client_secret_basic when `basic` is given; fails the test on any 5xx answer. */
export function postForm(url: string, form: Record<string, string>, basic?: { clientId: string; clientSecret: string }): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic) headers.authorization = basicHeader(basic.clientId, basic.clientSecret);
  return request(url, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
}

const NAMES = ['A', 'B', 'C', 'D', 'E'];

export async function startCluster(count = 3, extraEnv: Record<string, string> = {}): Promise<Cluster> {
  if (!DATABASE_URL || !REDIS_URL) throw new Error('a cluster needs DATABASE_URL and REDIS_URL');
  const storage = sharedStorageEnv();
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const issuer = `http://localhost:${ports[0]}`;
  const shared: Record<string, string> = {
    ...storage.env,
    ISSUER: issuer,
    INSTANCE_DOMAIN: 'example.test',
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT: '2',
    ...extraEnv,
  };
  const nodes: ClusterNode[] = [];
  const output = () =>
    nodes.map((n) => `--- node ${n.name} (port ${n.port}) ---\n${n.server.stdout().slice(-4000)}${n.server.stderr().slice(-4000)}`).join('\n');
  const stopAll = async () => {
    await Promise.all(nodes.map((n) => n.server.stop('SIGTERM', 5000).catch(() => null)));
    await storage.cleanup().catch(() => {});
  };
  const start = async (i: number) => {
    const server = await spawnServer({ ...shared, PORT: String(ports[i]) });
    const node: ClusterNode = { name: NAMES[i] ?? `N${i}`, port: ports[i]!, url: server.url, browserUrl: `http://localhost:${ports[i]}`, server };
    nodes.push(node);
    if (!server.healthy) throw new Error(`node ${node.name} did not start (exit ${await server.exited}):\n${server.stdout()}\n${server.stderr()}`);
    return node;
  };

  let adminPat: string;
  try {
    // The first node creates the instance; the others find it.
    const first = await start(0);
    adminPat = readAdminPat(first.server.env.DATA_DIR!);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => start(i + 1)));
  } catch (err) {
    await stopAll();
    throw err;
  }
  nodes.sort((a, b) => NAMES.indexOf(a.name) - NAMES.indexOf(b.name));

  let stopped: Promise<void> | undefined;
  return {
    issuer,
    nodes,
    adminPat,
    api: (node, method, path, body) => apiClient(node.url, adminPat)(method, path, { body }),
    output,
    stop: () => (stopped ??= stopAll()),
  };
}
