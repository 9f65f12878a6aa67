import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Child processes of the benchmark: our server and the bare engine, each
// pinned to one core when `taskset` exists, always killed when the
// benchmark ends (normally, on an error or on Ctrl-C).

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Node 24 of the project (the machine's own `node` may be older). */
export const NODE = join(ROOT, 'node_modules/.bin/node');

/** Core the servers run on, core the load generator runs on. */
export const SERVER_CORE = 1;
export const BENCH_CORE = 0;

function findTaskset(): string | undefined {
  for (const path of ['/usr/bin/taskset', '/bin/taskset', '/usr/local/bin/taskset']) if (existsSync(path)) return path;
  const which = spawnSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : undefined;
}

/** Pinning needs taskset and at least two cores; BENCH_PIN=0 turns it off. */
export function pinning(): { taskset?: string; reason?: string } {
  if (process.env.BENCH_PIN === '0') return { reason: 'BENCH_PIN=0' };
  if (availableParallelism() < 2) return { reason: `only ${availableParallelism()} core(s) available` };
  const taskset = findTaskset();
  return taskset ? { taskset } : { reason: 'taskset not found' };
}

/** Pins every thread of a running process (by default this one, the load generator) to `core`. */
export function pinProcess(taskset: string, core: number, pid = process.pid): boolean {
  const out = spawnSync(taskset, ['-a', '-p', '-c', String(core), String(pid)], { encoding: 'utf8' });
  return out.status === 0;
}

export interface Child {
  name: string;
  pid: number;
  url: string;
  process: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Last resort: SIGKILL whatever is still running (synchronous, for `exit`). */
export function killChildrenNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
process.on('exit', killChildrenNow);

const MAX_OUTPUT = 256 * 1024;

export interface SpawnOptions {
  name: string;
  script: string;
  /** Node and V8 flags before the script (those NODE_OPTIONS does not take). */
  nodeFlags?: string[];
  env: Record<string, string>;
  port: number;
  /** Path answering 200 once the child is ready. */
  readyPath: string;
  readyTimeoutMs?: number;
  taskset?: string;
  core?: number;
}

/** `node …args`, under `taskset -c core` when both are given: the command and its arguments. */
export function nodeCommand(args: string[], taskset?: string, core?: number): [string, string[]] {
  return taskset && core !== undefined ? [taskset, ['-c', String(core), NODE, ...args]] : [NODE, args];
}

/** Starts `node [flags] script` (under `taskset -c core` when given) and waits for `readyPath`. */
export async function spawnChild(options: SpawnOptions): Promise<Child> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), ...options.env };
  const [command, args] = nodeCommand([...(options.nodeFlags ?? []), options.script], options.taskset, options.core);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const collect = (chunk: string) => {
    if (output.length < MAX_OUTPUT) output += chunk;
  };
  child.stdout!.setEncoding('utf8').on('data', collect);
  child.stderr!.setEncoding('utf8').on('data', collect);
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      done = true;
      children.delete(child);
      setImmediate(() => resolve(code));
    });
    child.once('error', (err) => {
      collect(`spawn failed: ${err.message}\n`);
      done = true;
      children.delete(child);
      resolve(null);
    });
  });
  const url = `http://127.0.0.1:${options.port}`;
  const handle: Child = {
    name: options.name,
    pid: child.pid ?? -1,
    url,
    process: child,
    output: () => output,
    exited,
    hasExited: () => done,
    async stop(graceMs = 5000) {
      if (done) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  while (!done && Date.now() < deadline) {
    try {
      const res = await fetch(`${url}${options.readyPath}`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) return handle;
    } catch {
      // not listening yet
    }
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), exited]);
  }
  await handle.stop(1000);
  throw new Error(`${options.name} did not become ready${done ? ' (it exited)' : ''}; its output:\n${output.slice(-4000)}`);
}

/** VmRSS and VmHWM of a process in MB, from /proc (undefined when unreadable). */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

// Clock ticks per second of /proc/<pid>/stat's times: 100 on every Linux we run on.
const CLOCK_TICKS = 100;

/** CPU time (user + system) a process has used so far, in seconds; undefined where /proc is not there. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), 1-based 14 and 15: utime, stime.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Samples a process's resident set every `intervalMs` until stopped; `stop()` answers the peak (MB). */
export function sampleRss(pid: number, intervalMs = 100): { stop(): number | null } {
  let peak: number | null = null;
  const take = () => {
    const memory = memoryOf(pid);
    if (memory && Number.isFinite(memory.rssMb)) peak = Math.max(peak ?? 0, memory.rssMb);
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return peak;
    },
  };
}

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
