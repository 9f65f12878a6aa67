import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, sleep, tempDir } from './server.ts';

// Redis and PostgreSQL servers a fault test owns: its own binaries on a
// private port and in a temporary folder, killed, stopped and restarted at
// will, and removed afterwards. They never touch the machine's own services
// (127.0.0.1:5432 and :6379).

const run = promisify(execFile);

export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path));

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin/pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

export const POSTGRES_BIN = postgresBin();

/** Reasons to skip a test whose binaries are missing (both are on this machine and in CI). */
export const needsRedisServer = REDIS_SERVER ? false : 'redis-server is not installed';
export const needsPostgresServer = POSTGRES_BIN ? false : 'PostgreSQL server binaries (initdb, pg_ctl) are not installed';

/** Resolves once something accepts TCP connections on 127.0.0.1:port and answers `probe` as expected. */
async function waitForPort(port: number, ms: number, probe?: { send: string; expect: string }): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      const done = (value: boolean) => {
        socket.destroy();
        resolve(value);
      };
      socket.setTimeout(500, () => done(false));
      socket.once('error', () => done(false));
      socket.once('connect', () => (probe ? socket.write(probe.send) : done(true)));
      socket.on('data', (chunk) => {
        answer += chunk.toString();
        if (probe && answer.includes(probe.expect)) done(true);
      });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing answered on port ${port} within ${ms} ms`);
    await sleep(50);
  }
}

// ---- Redis

const children = new Set<ChildProcess>();

// A test that dies leaves no redis-server behind.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface OwnRedis {
  port: number;
  url: string;
  /** Starts the server again on the same port and folder (after kill or stop). */
  start(): Promise<void>;
  /** Sends `signal` (default SIGKILL) and waits for the process to end. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** A command through redis-cli, e.g. `cli('SENTINEL', 'get-master-addr-by-name', 'x')`. */
  cli(...args: string[]): Promise<string>;
  /** The running server's process id. */
  pid(): number | undefined;
  /** Kills the server and removes its folder. */
  cleanup(): Promise<void>;
}

export interface OwnRedisOptions {
  port?: number;
  /** Run as a Sentinel watching this master (quorum 1, down after 1 s). */
  sentinelOf?: { name: string; masterPort: number };
}

/**
 * A redis-server on a free port of 127.0.0.1, in a folder of its own,
 * without persistence; `args` are more command-line options.
 */
export async function startOwnRedis(args: string[] = [], options: OwnRedisOptions = {}): Promise<OwnRedis> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed');
  const port = options.port ?? (await freePort());
  const dir = tempDir('portcullis-redis-');
  const { sentinelOf } = options;
  if (sentinelOf) {
    // A Sentinel rewrites its configuration file, so it gets one of its own.
    writeFileSync(
      join(dir, 'sentinel.conf'),
      [
        `sentinel monitor ${sentinelOf.name} 127.0.0.1 ${sentinelOf.masterPort} 1`,
        `sentinel down-after-milliseconds ${sentinelOf.name} 1000`,
        `sentinel failover-timeout ${sentinelOf.name} 5000`,
        '',
      ].join('\n'),
    );
  }
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    const base = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--protected-mode', 'no'];
    const argv = sentinelOf ? [join(dir, 'sentinel.conf'), '--sentinel', ...base] : [...base, '--save', '', '--appendonly', 'no', ...args];
    const proc = spawn(REDIS_SERVER, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    proc.stdout!.on('data', (chunk) => (log = (log + chunk).slice(-4000)));
    proc.stderr!.on('data', (chunk) => (log = (log + chunk).slice(-4000)));
    child = proc;
    try {
      await waitForPort(port, 10_000, { send: 'PING\r\n', expect: '+PONG' });
    } catch (err) {
      proc.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not start: ${(err as Error).message}\n${log}`);
    }
  };
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(signal);
    });
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    kill,
    pid: () => child?.pid,
    async cli(...command) {
      const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...command]);
      return stdout.trim();
    },
    async cleanup() {
      await kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- PostgreSQL

export interface OwnPostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  start(): Promise<void>;
  /** `pg_ctl stop` in the given mode (immediate: like a crash, no shutdown checkpoint). */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** The running postmaster's process id (its backends are its children). */
  postmasterPid(): number;
  cleanup(): Promise<void>;
}

export interface OwnPostgresOptions {
  /** `name=value` server settings instead of the small defaults a fault test needs. */
  settings?: Record<string, string>;
}

/**
 * initdb + pg_ctl on a free port, data and socket in a temporary folder.
 * PostgreSQL refuses to run as root; as root its binaries run as the
 * `postgres` user.
 */
export async function startOwnPostgres(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
  if (!POSTGRES_BIN) throw new Error('PostgreSQL server binaries are not installed');
  const port = await freePort();
  const dir = tempDir('portcullis-pg-');
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, tool), ...args]) : run(join(POSTGRES_BIN, tool), args);
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const settings = { max_connections: '50', shared_buffers: '16MB', ...options.settings };
  const settingFlags = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`);
  const serverOptions = [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, ...settingFlags].join(' ');
  const start = async () => {
    await pgRun('pg_ctl', ['-D', data, '-o', serverOptions, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
    await waitForPort(port, 10_000);
  };
  const stop = async (mode: 'immediate' | 'fast' = 'fast') => {
    await pgRun('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']).catch(() => {});
  };
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // The test database must answer queries, not only accept connections.
  const probe = new pg.Client({ connectionString: url });
  await probe.connect();
  await probe.end();
  return {
    port,
    url,
    start,
    stop,
    postmasterPid: () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    async cleanup() {
      await stop('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- Redis Cluster

export interface OwnRedisCluster {
  nodes: OwnRedis[];
  /** `127.0.0.1:port,…`, the REDIS_CLUSTER_NODES of the masters. */
  addresses: string;
  cleanup(): Promise<void>;
}

/** `masters` redis-servers in cluster mode, their slots spread by `redis-cli --cluster create`, no replicas. */
export async function startOwnRedisCluster(masters = 3): Promise<OwnRedisCluster> {
  const nodes: OwnRedis[] = [];
  try {
    for (let i = 0; i < masters; i += 1) {
      // The cluster bus needs a port of its own (by default port + 10000, which may not exist).
      const busPort = await freePort();
      nodes.push(
        await startOwnRedis([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '2000',
          '--cluster-port',
          String(busPort),
        ]),
      );
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    const deadline = Date.now() + 15_000;
    for (const node of nodes) {
      while (!(await node.cli('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error('the Redis Cluster did not become ready');
        await sleep(100);
      }
    }
  } catch (err) {
    await Promise.all(nodes.map((n) => n.cleanup()));
    throw err;
  }
  return {
    nodes,
    addresses: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    cleanup: async () => {
      await Promise.all(nodes.map((n) => n.cleanup()));
    },
  };
}
