import autocannon from 'autocannon';
import { runCodeFlow, type CodeFlowClient, type CodeFlowUser, type TokenSet } from '../test/support/code-flow.ts';
import { cpuSecondsOf, sampleRss } from './processes.ts';

// The load of each scenario and how it is measured. HTTP scenarios run
// autocannon in this process against one server; the code flow runs a few
// browser-less flows in parallel with fetch. Both report the same numbers.

export const SCENARIOS = [
  'client_credentials_opaque',
  'client_credentials_jwt',
  'client_credentials_dpop',
  'introspection',
  'jwt_profile',
  'refresh_token',
  'userinfo',
  'code_flow',
  'users_search',
  'client_credentials_jwt_hook',
  'action_deliveries',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Measurement {
  /** Successful (2xx) requests, or complete flows, per second. */
  rps: number;
  p50_ms: number | null;
  p99_ms: number | null;
  /** Connection errors, timeouts, non-2xx answers and failed body checks. */
  errors: number;
  /** Highest VmRSS of the server process seen during the scenario. */
  peak_rss_mb: number | null;
  /** The server's CPU time (user + system, all threads) per answered request or complete flow, in µs. */
  server_cpu_us_per_request: number | null;
}

export interface RunSettings {
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
}

/** Where bodies come from when each request needs a fresh one (assertions, refresh tokens). */
export interface Feeder {
  next(): string | undefined;
  remaining(): number;
}

export function arrayFeeder(values: string[]): Feeder {
  let index = 0;
  return {
    next: () => (index < values.length ? values[index++] : undefined),
    remaining: () => values.length - index,
  };
}

/**
 * Refresh tokens rotate on every use: each answer brings the next token of
 * its chain, which goes back into the queue, so a pool of a few times the
 * connection count lasts any duration while no token is used twice. A failed
 * refresh ends its chain; the next request takes a fresh token from the pool.
 */
export function rotatingFeeder(initial: string[]): Feeder & { give(token: string): void } {
  const queue = [...initial];
  let head = 0;
  return {
    next() {
      if (head >= queue.length) return undefined;
      const value = queue[head++];
      if (head > 4096 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      return value;
    },
    remaining: () => queue.length - head,
    give(token: string) {
      queue.push(token);
    },
  };
}

export interface HttpLoad {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** A fixed body... */
  body?: string;
  /** ...or one built per request from a feeder value; undefined = nothing left, the run stops. */
  bodyFrom?: { feeder: Feeder; build(value: string): string };
  /** Headers made anew for each request (e.g. a DPoP proof), over `headers`. */
  headersFrom?: () => Record<string, string>;
  /** A body check per answer (failures count as errors). */
  verify?: (body: string) => boolean;
  /** Sees every answer (e.g. to put rotated refresh tokens back). */
  onAnswer?: (status: number, body: string) => void;
}

// Requests sent after a feeder ran dry, while autocannon stops: they go to a
// path that answers 404 and are taken out of the error count.
const DRY_PATH = '/bench-feeder-exhausted';

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

interface Pass {
  ok: number;
  errors: number;
  seconds: number;
  p50: number | null;
  p99: number | null;
  statusCodes: Record<string, number>;
  ranDry: boolean;
}

function autocannonPass(url: string, load: HttpLoad, seconds: number, connections: number): Promise<Pass> {
  return new Promise((resolve, reject) => {
    let dry = 0;
    let ranDry = false;
    let instance: autocannon.Instance | undefined;
    const request: autocannon.Request = { method: load.method, path: load.path, headers: load.headers, body: load.body };
    if (load.headersFrom && !load.bodyFrom) {
      const fresh = load.headersFrom;
      request.setupRequest = (raw) => ({ ...raw, headers: { ...raw.headers, ...fresh() } });
    }
    if (load.bodyFrom) {
      const { feeder, build } = load.bodyFrom;
      request.setupRequest = (raw) => {
        const value = feeder.next();
        if (value === undefined) {
          if (!ranDry) {
            ranDry = true;
            setImmediate(() => instance?.stop());
          }
          dry++;
          return { ...raw, method: 'GET', path: DRY_PATH, body: undefined };
        }
        return { ...raw, method: load.method, path: load.path, body: build(value) };
      };
    }
    if (load.onAnswer) {
      const onAnswer = load.onAnswer;
      request.onResponse = (status, body) => onAnswer(status, body);
    }
    instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        timeout: 10,
        sampleInt: 100,
        requests: [request],
        ...(load.verify ? { verifyBody: load.verify } : {}),
      },
      (err, result) => {
        if (err) return reject(err);
        const statusCodes: Record<string, number> = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = Number(count);
        if (dry && statusCodes['404']) statusCodes['404'] -= Math.min(dry, statusCodes['404']);
        if (statusCodes['404'] === 0) delete statusCodes['404'];
        const non2xx = Math.max(0, result.non2xx - dry);
        resolve({
          ok: result['2xx'],
          errors: result.errors + non2xx + result.mismatches,
          seconds: result.duration,
          p50: result['2xx'] ? result.latency.p50 : null,
          p99: result['2xx'] ? result.latency.p99 : null,
          statusCodes,
          ranDry,
        });
      },
    );
  });
}

export interface ScenarioReport extends Measurement {
  /** For the log: answers by status, why the run ended early, and so on. */
  detail: string;
}

/** Runs `work` while sampling the server's RSS; the peak goes into the report. */
async function withRss<T extends { peak_rss_mb: number | null }>(serverPid: number, work: () => Promise<T>): Promise<T> {
  const rss = sampleRss(serverPid);
  let peak: number | null = null;
  let report: T;
  try {
    report = await work();
  } finally {
    peak = rss.stop();
  }
  return { ...report, peak_rss_mb: peak === null ? null : round(peak, 1) };
}

/** Warm-up (not counted), then the measured run, with the server's RSS sampled throughout. */
export function measureHttp(url: string, serverPid: number, load: HttpLoad, settings: RunSettings): Promise<ScenarioReport> {
  return withRss(serverPid, async () => {
    if (settings.warmupSeconds > 0) await autocannonPass(url, load, settings.warmupSeconds, settings.connections);
    const cpuBefore = cpuSecondsOf(serverPid);
    const pass = await autocannonPass(url, load, settings.durationSeconds, settings.connections);
    const cpuAfter = cpuSecondsOf(serverPid);
    // Less sensitive to a drifting machine than requests/s: what each answer cost the server.
    const cpuUs = cpuBefore !== undefined && cpuAfter !== undefined && pass.ok > 0 ? Math.round(((cpuAfter - cpuBefore) * 1e6) / pass.ok) : null;
    const cpu = cpuUs === null ? '' : `; server CPU ${cpuUs} µs/request`;
    const statuses = Object.entries(pass.statusCodes)
      .map(([code, count]) => `${code}×${count}`)
      .join(' ');
    return {
      rps: pass.seconds > 0 ? round(pass.ok / pass.seconds, 1) : 0,
      p50_ms: pass.p50,
      p99_ms: pass.p99,
      errors: pass.errors,
      peak_rss_mb: null,
      server_cpu_us_per_request: cpuUs,
      detail: `${pass.ok} ok in ${pass.seconds.toFixed(2)} s; ${statuses || 'no answers'}${cpu}${pass.ranDry ? '; ran out of fresh bodies before the duration ended' : ''}`,
    };
  });
}

export interface CodeFlowRun extends ScenarioReport {
  /** Token responses of the measured flows (their refresh and access tokens are used later). */
  tokens: TokenSet[];
  /** The first few failures, for the log. */
  failures: string[];
}

/** `concurrency` loops of complete code flows for the duration (after a warm-up); flows per second. */
export function measureCodeFlow(
  client: CodeFlowClient,
  user: CodeFlowUser,
  serverPid: number,
  settings: RunSettings & { concurrency: number },
): Promise<CodeFlowRun> {
  const tokens: TokenSet[] = [];
  const failures: string[] = [];
  return withRss(serverPid, async () => {
    const loop = async (until: number, record: boolean, latencies: number[], counts: { errors: number }) => {
      while (performance.now() < until) {
        const started = performance.now();
        try {
          const set = await runCodeFlow(client, user, AbortSignal.timeout(30_000));
          if (record) {
            latencies.push(performance.now() - started);
            tokens.push(set);
          }
        } catch (err) {
          if (record) {
            counts.errors++;
            if (failures.length < 5) failures.push((err as Error).message);
          }
        }
      }
    };
    if (settings.warmupSeconds > 0) {
      const until = performance.now() + settings.warmupSeconds * 1000;
      await Promise.all(Array.from({ length: settings.concurrency }, () => loop(until, false, [], { errors: 0 })));
    }
    const latencies: number[] = [];
    const counts = { errors: 0 };
    const cpuBefore = cpuSecondsOf(serverPid);
    const started = performance.now();
    const until = started + settings.durationSeconds * 1000;
    await Promise.all(Array.from({ length: settings.concurrency }, () => loop(until, true, latencies, counts)));
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = cpuSecondsOf(serverPid);
    // All of the server's threads: the event loop and the password checks on the thread pool.
    const cpuUs =
      cpuBefore !== undefined && cpuAfter !== undefined && latencies.length > 0 ? Math.round(((cpuAfter - cpuBefore) * 1e6) / latencies.length) : null;
    const cpu = cpuUs === null ? '' : `; server CPU ${(cpuUs / 1000).toFixed(1)} ms/flow`;
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    return {
      rps: round(latencies.length / seconds, 1),
      p50_ms: p50 === null ? null : round(p50, 1),
      p99_ms: p99 === null ? null : round(p99, 1),
      errors: counts.errors,
      peak_rss_mb: null,
      server_cpu_us_per_request: cpuUs,
      detail: `${latencies.length} flows in ${seconds.toFixed(2)} s, ${settings.concurrency} at a time${cpu}${failures.length ? `; first failure: ${failures[0]}` : ''}`,
      tokens,
      failures,
    };
  });
}

/** Mints token sets with code flows until `count` are there or `seconds` have passed. */
export async function mintWithCodeFlows(
  client: CodeFlowClient,
  user: CodeFlowUser,
  count: number,
  seconds: number,
  concurrency: number,
): Promise<{ tokens: TokenSet[]; failures: string[] }> {
  const tokens: TokenSet[] = [];
  const failures: string[] = [];
  const until = performance.now() + seconds * 1000;
  const loop = async () => {
    while (tokens.length < count && performance.now() < until && failures.length < 20) {
      try {
        tokens.push(await runCodeFlow(client, user, AbortSignal.timeout(30_000)));
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { tokens, failures };
}
