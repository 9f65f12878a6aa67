import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { deleteRedisPrefix, dropSchema, freePort, randomMasterKey } from '../test/support/server.ts';
import { readResponse, type ApiResponse } from '../test/support/api.ts';
import { signAssertions, type MachineKeyFile } from './assertions.ts';
import { dpopProofs } from './dpop-proofs.ts';
import { basicAuth, runCodeFlow, type CodeFlowClient, type CodeFlowUser } from '../test/support/code-flow.ts';
import { addSearchUsersThroughApi, insertSearchUsers, usersSearchLoad } from './users-search.ts';
import { table, targets, type Floors, type ScenarioResult } from './report.ts';
import { startBenchStores } from './stores.ts';
import { deliveryScenario, receiverCaFile, tokenHookScenario } from './hooks.ts';
import {
  BENCH_CORE,
  NODE,
  ROOT,
  SERVER_CORE,
  killChildrenNow,
  memoryOf,
  nodeCommand,
  pinProcess,
  pinning,
  spawnChild,
  tempDir,
  type Child,
} from './processes.ts';
import {
  SCENARIOS,
  arrayFeeder,
  measureCodeFlow,
  measureHttp,
  mintWithCodeFlows,
  rotatingFeeder,
  type HttpLoad,
  type Measurement,
  type RunSettings,
  type ScenarioName,
  type ScenarioReport,
} from './scenarios.ts';

// `npm run bench`: our server (PostgreSQL + Redis when DATABASE_URL /
// REDIS_URL are set, the embedded database otherwise) and then a bare
// oidc-provider, each alone on core 1, loaded from this process on core 0
// with the same scenarios; writes bench/results.json and prints a table.
// See bench/README.md.

// ---- settings

function numberSetting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    process.stderr.write(`bench: ${name} must be a number from ${min} to ${max} (got ${JSON.stringify(raw)})\n`);
    process.exit(2);
  }
  return value;
}

const DURATION = numberSetting('BENCH_DURATION', 10, 1, 120);
const WARMUP = numberSetting('BENCH_WARMUP', Math.min(2, Math.max(1, Math.round(DURATION / 5))), 0, 30);
const CONNECTIONS = Math.round(numberSetting('BENCH_CONNECTIONS', 16, 1, 512));
const FLOW_CONCURRENCY = Math.round(numberSetting('BENCH_FLOW_CONCURRENCY', 8, 1, 64));
// Enough fresh assertions for about 2000 grants/s over warm-up and run; the
// scenario ends early (rps over the time spent) if the server is faster.
const ASSERTIONS = Math.round(numberSetting('BENCH_JWT_ASSERTIONS', Math.min(60_000, Math.max(2000, (DURATION + WARMUP) * 2000)), 100, 500_000));
const OUTPUT = process.env.BENCH_OUTPUT || join(ROOT, 'bench/results.json');
const RUN_BARE = process.env.BENCH_BARE !== '0';
const OWN_STORES = storesSetting();
// Set by main() when the benchmark starts stores of its own (BENCH_STORES=own).
let DATABASE_URL = process.env.DATABASE_URL || undefined;
let REDIS_URL = process.env.REDIS_URL || undefined;
// Users in the org of the users_search scenario: 100,000 on PostgreSQL, 10,000 on the embedded database.
// Events written at once for action_deliveries (bench/hooks.ts).
const DELIVERY_EVENTS = Math.round(numberSetting('BENCH_DELIVERY_EVENTS', 2000, 10, 1_000_000));
const SEARCH_USERS = Math.round(numberSetting('BENCH_SEARCH_USERS', DATABASE_URL || OWN_STORES ? 100_000 : 10_000, 10, 1_000_000));

/** BENCH_STORES: `own` starts a PostgreSQL and a Redis for the run; unset or `given`: DATABASE_URL / REDIS_URL as set. */
function storesSetting(): boolean {
  const raw = process.env.BENCH_STORES || 'given';
  if (raw !== 'own' && raw !== 'given') {
    process.stderr.write(`bench: BENCH_STORES must be "own" or "given" (got ${JSON.stringify(raw)})\n`);
    process.exit(2);
  }
  if (raw === 'own' && (process.env.DATABASE_URL || process.env.REDIS_URL)) {
    process.stderr.write('bench: BENCH_STORES=own starts its own PostgreSQL and Redis; unset DATABASE_URL and REDIS_URL\n');
    process.exit(2);
  }
  return raw === 'own';
}

function selectedScenarios(): ScenarioName[] {
  const raw = process.env.BENCH_SCENARIOS;
  if (!raw) return [...SCENARIOS];
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(SCENARIOS as readonly string[]).includes(n));
  if (unknown.length) {
    process.stderr.write(`bench: unknown scenario(s) in BENCH_SCENARIOS: ${unknown.join(', ')} (known: ${SCENARIOS.join(', ')})\n`);
    process.exit(2);
  }
  return names as ScenarioName[];
}
const SELECTED = selectedScenarios();
const wants = (name: ScenarioName) => SELECTED.includes(name);

const settings: RunSettings = { durationSeconds: DURATION, warmupSeconds: WARMUP, connections: CONNECTIONS };

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
}
const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

// ---- clean-up, also on Ctrl-C

const cleanups: Array<() => Promise<unknown> | unknown> = [];
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length) {
      const step = cleanups.pop()!;
      await Promise.race([
        Promise.resolve()
          .then(step)
          .catch((err) => log(`clean-up step failed: ${(err as Error).message}`)),
        new Promise((r) => setTimeout(r, 15_000).unref()),
      ]);
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping the servers and cleaning up…`);
    killChildrenNow();
    const force = setTimeout(() => process.exit(130), 20_000);
    force.unref();
    cleanUp().finally(() => process.exit(130));
  });
}
// A safety net: the whole run is bounded even if something hangs.
// (ten scenario runs, code flows to mint refresh tokens, start-ups and set-up)
const WATCHDOG_SECONDS = Math.round(150 + 1.5 * (SCENARIOS.length + 3) * (DURATION + WARMUP));
const watchdog = setTimeout(() => {
  log(`bench: still running after ${WATCHDOG_SECONDS} s; giving up`);
  killChildrenNow();
  cleanUp().finally(() => process.exit(1));
}, WATCHDOG_SECONDS * 1000);
watchdog.unref();

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

// ---- HTTP helpers

async function call(url: string, init: RequestInit = {}): Promise<ApiResponse> {
  if (!isLoopback(hostOf(url))) throw new Error(`refusing a non-loopback target: ${url}`);
  return readResponse(await fetch(url, { redirect: 'manual', ...init, signal: AbortSignal.timeout(30_000) }));
}

function adminApi(base: string, pat: string) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await call(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${pat}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (answer.status !== 200) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    return answer.body;
  };
}

const FORM = 'application/x-www-form-urlencoded';

async function token(base: string, authorization: string | undefined, form: Record<string, string>): Promise<any> {
  const answer = await call(`${base}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': FORM, ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(form).toString(),
  });
  if (answer.status !== 200) throw new Error(`token endpoint answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  return answer.body;
}

// ---- the scenarios' loads

interface MachineClient {
  clientId: string;
  clientSecret: string;
}

function clientCredentialsLoad(client: MachineClient): HttpLoad {
  return {
    method: 'POST',
    path: '/oauth/v2/token',
    headers: { authorization: basicAuth(client.clientId, client.clientSecret), 'content-type': FORM },
    body: 'grant_type=client_credentials&scope=openid',
  };
}

function introspectionLoad(client: MachineClient, accessToken: string): HttpLoad {
  return {
    method: 'POST',
    path: '/oauth/v2/introspect',
    headers: { authorization: basicAuth(client.clientId, client.clientSecret), 'content-type': FORM },
    body: new URLSearchParams({ token: accessToken }).toString(),
    verify: (body) => body.includes('"active":true'),
  };
}

const isJwt = (value: unknown) => typeof value === 'string' && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value);

/** One request of the load by hand, before the run: fails the scenario early with a readable reason. */
async function preflight(base: string, load: HttpLoad, body: string | undefined, check?: (answer: ApiResponse) => string | undefined): Promise<ApiResponse> {
  const answer = await call(`${base}${load.path}`, { method: load.method, headers: { ...load.headers, ...load.headersFrom?.() }, body });
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`preflight ${load.method} ${load.path} answered ${answer.status}: ${answer.text.slice(0, 400)}`);
  if (load.verify && !load.verify(answer.text)) throw new Error(`preflight ${load.method} ${load.path}: unexpected body ${answer.text.slice(0, 400)}`);
  const problem = check?.(answer);
  if (problem) throw new Error(`preflight ${load.method} ${load.path}: ${problem}`);
  return answer;
}

// ---- results

const results = new Map<ScenarioName, { ours: Measurement | null; bare: Measurement | null }>();
const details: string[] = [];

function failed(reason: string): Measurement {
  return {
    rps: 0,
    p50_ms: null,
    p99_ms: null,
    errors: 1,
    peak_rss_mb: null,
    server_cpu_us_per_request: null,
    ...({ failure: reason } as object),
  } as Measurement;
}

function strip(report: ScenarioReport): Measurement {
  return {
    rps: report.rps,
    p50_ms: report.p50_ms,
    p99_ms: report.p99_ms,
    errors: report.errors,
    peak_rss_mb: report.peak_rss_mb,
    server_cpu_us_per_request: report.server_cpu_us_per_request,
  };
}

async function scenario(side: 'ours' | 'bare', name: ScenarioName, run: () => Promise<ScenarioReport>): Promise<void> {
  log(`  ${side} ${name}: ${WARMUP ? `${WARMUP} s warm-up + ` : ''}${DURATION} s…`);
  let measurement: Measurement;
  try {
    const report = await run();
    measurement = strip(report);
    details.push(`${side} ${name}: ${report.detail}`);
    log(
      `    ${report.rps} /s, p50 ${report.p50_ms ?? '-'} ms, p99 ${report.p99_ms ?? '-'} ms, errors ${report.errors}, peak RSS ${report.peak_rss_mb ?? '-'} MB (${report.detail})`,
    );
  } catch (err) {
    const reason = (err as Error).message;
    measurement = failed(reason);
    details.push(`${side} ${name}: FAILED: ${reason}`);
    log(`    FAILED: ${reason}`);
  }
  const entry = results.get(name) ?? { ours: null, bare: null };
  entry[side] = measurement;
  results.set(name, entry);
  // Requests cut off when the load stopped may still be running on the server: let them finish.
  await settle();
}

const settle = (ms = 750) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- our server

/**
 * Our server runs as the container image runs it (Dockerfile): the built
 * output, NODE_ENV=production, and the image's Node flags (on the command
 * line, as the image passes them: NODE_OPTIONS refuses some V8 flags) and
 * malloc setting. docs/operations.md says why each is there.
 */
const IMAGE_RUNTIME = {
  env: { NODE_ENV: 'production', MALLOC_ARENA_MAX: '2' },
  nodeFlags: ['--max-semi-space-size=8'],
};

/** The server core's crypto floor (bench/floors.ts), measured on that core while nothing else runs there; null if it could not be. */
function measureFloors(taskset: string | undefined): Floors | null {
  log(`measuring the crypto floor${taskset ? ` of core ${SERVER_CORE}` : ''} (RS256 signatures, argon2id checks)…`);
  const [command, args] = nodeCommand([join(ROOT, 'bench/floors.ts')], taskset, SERVER_CORE);
  const run = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  try {
    return JSON.parse(run.stdout.trim()) as Floors;
  } catch {
    log(`bench: the crypto floor could not be measured: ${(run.stderr || run.error?.message || '').slice(0, 500)}`);
    return null;
  }
}

function buildServer(): void {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
}

/** VmRSS of our server once set up, before any load (MB). */
let rssAfterSetup: number | null = null;

interface ServerFindings {
  warnings: string[];
  /** Everything the server printed (LOG_LEVEL=warn). */
  logFile: string;
  hwmMb: number | null;
}

async function benchOurs(taskset: string | undefined, beforeLoad: () => void): Promise<ServerFindings> {
  const started = new Date().toISOString();
  const dataDir = tempDir('portcullis-bench-');
  cleanups.push(() => dataDir.remove());
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir.path,
    LOG_LEVEL: 'warn',
    INSTANCE_DOMAIN: 'bench.test',
    MASTER_KEY: randomMasterKey(),
    ...IMAGE_RUNTIME.env,
    // Add more for profiling, e.g. BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof".
    NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS ?? '',
  };
  // The action scenarios' receivers have a self-signed certificate.
  if (wants('client_credentials_jwt_hook') || wants('action_deliveries')) env.NODE_EXTRA_CA_CERTS = receiverCaFile();
  const suffix = randomBytes(5).toString('hex');
  const schema = `bench_${suffix}`;
  if (DATABASE_URL) {
    Object.assign(env, { DATABASE_URL, DATABASE_SCHEMA: schema });
    cleanups.push(() => dropSchema(DATABASE_URL, schema));
  }
  if (REDIS_URL) {
    const prefix = `bench_${suffix}:`;
    Object.assign(env, { REDIS_URL, REDIS_PREFIX: prefix });
    cleanups.push(() => deleteRedisPrefix(REDIS_URL, prefix));
  }

  log(`starting our server (${DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}${REDIS_URL ? ' + Redis' : ''})${taskset ? ` on core ${SERVER_CORE}` : ''}…`);
  log('building the server (npm run build)…');
  buildServer();
  const server = await spawnChild({
    name: 'portcullis',
    script: join(ROOT, 'dist/src/main.js'),
    // BENCH_SERVER_NODE_FLAGS replaces the image's flags, e.g. to compare GC settings.
    nodeFlags: process.env.BENCH_SERVER_NODE_FLAGS === undefined ? IMAGE_RUNTIME.nodeFlags : process.env.BENCH_SERVER_NODE_FLAGS.split(' ').filter(Boolean),
    env,
    port,
    readyPath: '/healthz',
    taskset,
    core: SERVER_CORE,
  });
  cleanups.push(() => server.stop(15_000));
  const base = server.url;
  const pat = readFileSync(join(dataDir.path, 'admin.pat'), 'utf8').trim();
  const api = adminApi(base, pat);

  // Machine users: client_credentials with opaque and with JWT access tokens, and one with a key for the JWT profile grant.
  log('setting up users, project and app through the admin API…');
  const machine = async (userName: string, accessTokenType?: string) => {
    const { userId } = await api('POST', '/management/v1/users/machine', { userName, name: userName, ...(accessTokenType ? { accessTokenType } : {}) });
    return userId as string;
  };
  const secretOf = async (userId: string): Promise<MachineClient> => {
    const { clientId, clientSecret } = await api('PUT', `/management/v1/users/${userId}/secret`, {});
    return { clientId, clientSecret };
  };
  const opaque = await secretOf(await machine(`bench-cc-${suffix}`));
  const jwt = await secretOf(await machine(`bench-cc-jwt-${suffix}`, 'ACCESS_TOKEN_TYPE_JWT'));
  const profileUser = await machine(`bench-jwt-profile-${suffix}`);
  const { keyDetails } = await api('POST', `/management/v1/users/${profileUser}/keys`, { type: 'KEY_TYPE_JSON' });
  const keyFile = JSON.parse(Buffer.from(keyDetails, 'base64').toString('utf8')) as MachineKeyFile;

  // A project, a confidential web app and a human with a password for the code flow.
  const project = await api('POST', '/management/v1/projects', { name: `Bench ${suffix}` });
  const app = await api('POST', `/management/v1/projects/${project.id}/apps/oidc`, {
    name: 'Bench RP',
    redirectUris: ['https://rp.example.com/cb'],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
  });
  const password = `Bench-${randomBytes(9).toString('base64url')}1!`;
  const human = await api('POST', '/management/v1/users/human', {
    userName: `bench-user-${suffix}`,
    profile: { firstName: 'Bench', lastName: 'User' },
    email: { email: `bench-user-${suffix}@bench.test`, isEmailVerified: true },
    password,
  });
  const { user } = await api('GET', `/management/v1/users/${human.userId}`);
  const flowClient: CodeFlowClient = {
    baseUrl: base,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: 'https://rp.example.com/cb',
    scope: 'openid profile email offline_access',
  };
  const flowUser: CodeFlowUser = { loginName: user.preferredLoginName ?? user.loginNames?.[0], password };

  let assertions: string[] = [];
  if (wants('jwt_profile')) {
    const started = performance.now();
    assertions = await signAssertions(keyFile, `http://127.0.0.1:${port}`, ASSERTIONS);
    log(`signed ${assertions.length} JWT profile assertions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  beforeLoad();
  const afterSetup = memoryOf(server.pid)?.rssMb;
  rssAfterSetup = afterSetup === undefined ? null : Math.round(afterSetup * 10) / 10;

  const bare = RUN_BARE && COMPARABLE.some(wants) ? await startBare(taskset, { opaque, jwt }) : undefined;
  log(`${bare ? 'our server, then the bare engine, scenario by scenario' : 'our server'}, ${CONNECTIONS} connections:`);
  const pid = server.pid;
  const ours: Target = { base, pid, clients: { opaque, jwt } };
  for (const name of COMPARABLE) {
    if (!wants(name)) continue;
    await scenario('ours', name, () => SHARED_SCENARIOS[name](ours));
    await bare?.run(name);
  }
  await bare?.stop();
  if (wants('jwt_profile')) {
    await scenario('ours', 'jwt_profile', async () => {
      const feeder = arrayFeeder(assertions);
      const build = (assertion: string) =>
        `grant_type=${encodeURIComponent('urn:ietf:params:oauth:grant-type:jwt-bearer')}&scope=openid&assertion=${assertion}`;
      const load: HttpLoad = { method: 'POST', path: '/oauth/v2/token', headers: { 'content-type': FORM }, bodyFrom: { feeder, build } };
      await preflight(base, load, build(feeder.next()!), (a) => (a.body?.access_token ? undefined : 'no access_token'));
      return measureHttp(base, pid, load, settings);
    });
  }

  // The code flow: measured itself, and the source of refresh and access tokens for the next two.
  const minted: Array<{ access_token: string; refresh_token?: string }> = [];
  const needFlows = wants('code_flow') || wants('refresh_token') || wants('userinfo');
  if (needFlows) {
    try {
      const first = await runCodeFlow(flowClient, flowUser, AbortSignal.timeout(30_000));
      if (!first.refresh_token) throw new Error('the code flow with offline_access answered no refresh_token');
      minted.push(first);
    } catch (err) {
      const reason = `the code flow does not work: ${(err as Error).message}`;
      for (const name of ['code_flow', 'refresh_token', 'userinfo'] as const) {
        if (wants(name)) await scenario('ours', name, () => Promise.reject(new Error(reason)));
      }
    }
  }
  if (minted.length && wants('code_flow')) {
    await scenario('ours', 'code_flow', async () => {
      const run = await measureCodeFlow(flowClient, flowUser, pid, { ...settings, concurrency: FLOW_CONCURRENCY });
      minted.push(...run.tokens);
      for (const failure of run.failures) details.push(`ours code_flow failure: ${failure}`);
      return run;
    });
  }
  if (minted.length && wants('refresh_token')) {
    await scenario('ours', 'refresh_token', async () => {
      // Each connection keeps a chain going; the end of the warm-up drops the
      // tokens in flight, so the pool holds twice the connections and some.
      const want = CONNECTIONS * 2 + 8;
      // The first flow's grant stays untouched: its access token is the userinfo one.
      const pool = minted
        .slice(1)
        .map((t) => t.refresh_token)
        .filter((t): t is string => Boolean(t));
      if (pool.length < want) {
        const started = performance.now();
        const more = await mintWithCodeFlows(flowClient, flowUser, want - pool.length, 60, FLOW_CONCURRENCY);
        pool.push(...more.tokens.map((t) => t.refresh_token!).filter(Boolean));
        log(
          `    minted ${more.tokens.length} more refresh tokens with code flows in ${((performance.now() - started) / 1000).toFixed(1)} s${more.failures.length ? ` (${more.failures.length} failed: ${more.failures[0]})` : ''}`,
        );
      }
      // Refresh tokens are spent below; keep the access tokens (userinfo) apart.
      for (const t of minted) delete t.refresh_token;
      const feeder = rotatingFeeder(pool);
      const app: MachineClient = { clientId: flowClient.clientId, clientSecret: flowClient.clientSecret };
      const build = (refreshToken: string) => `grant_type=refresh_token&refresh_token=${encodeURIComponent(refreshToken)}`;
      const load: HttpLoad = {
        method: 'POST',
        path: '/oauth/v2/token',
        headers: { authorization: basicAuth(app.clientId, app.clientSecret), 'content-type': FORM },
        bodyFrom: { feeder, build },
        onAnswer: (status, body) => {
          if (status !== 200) return;
          const next = /"refresh_token":"([^"]+)"/.exec(body)?.[1];
          if (next) feeder.give(next);
        },
      };
      const first = await preflight(base, load, build(feeder.next()!), (a) => (a.body?.refresh_token ? undefined : 'no rotated refresh_token in the answer'));
      feeder.give(first.body.refresh_token);
      return measureHttp(base, pid, load, settings);
    });
  }
  if (minted.length && wants('userinfo')) {
    await scenario('ours', 'userinfo', async () => {
      const load: HttpLoad = { method: 'GET', path: '/oidc/v1/userinfo', headers: { authorization: `Bearer ${minted[0]!.access_token}` } };
      await preflight(base, load, undefined, (a) => (a.body?.sub ? undefined : 'no sub in the userinfo answer'));
      return measureHttp(base, pid, load, settings);
    });
  }

  if (wants('users_search')) {
    await scenario('ours', 'users_search', async () => {
      const started = performance.now();
      if (DATABASE_URL) await insertSearchUsers(DATABASE_URL, schema, SEARCH_USERS);
      else await addSearchUsersThroughApi(api, SEARCH_USERS);
      log(`    loaded ${SEARCH_USERS} users in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      const load = usersSearchLoad(pat, SEARCH_USERS);
      await preflight(base, load, load.bodyFrom!.build(load.bodyFrom!.feeder.next()!));
      const report = await measureHttp(base, pid, load, settings);
      return { ...report, detail: `${SEARCH_USERS} users in the org, login-name prefix matching 10, page of 50; ${report.detail}` };
    });
  }

  if (wants('client_credentials_jwt_hook')) {
    await scenario('ours', 'client_credentials_jwt_hook', () =>
      tokenHookScenario({ base, pid, api, load: clientCredentialsLoad(jwt), settings }, (load, check) =>
        preflight(base, load, load.body, (a) => check(a.body)),
      ),
    );
  }
  if (wants('action_deliveries')) {
    await scenario('ours', 'action_deliveries', () =>
      deliveryScenario({ pid, api, databaseUrl: DATABASE_URL, schema, events: DELIVERY_EVENTS, timeoutSeconds: Math.max(60, DURATION * 6) }),
    );
  }

  const hwm = memoryOf(pid)?.hwmMb ?? null;
  await server.stop(15_000);
  const output = server.output();
  const logFile = join(tmpdir(), `portcullis-bench-server-${started.replace(/[:.]/g, '-')}.log`);
  writeFileSync(logFile, output);
  const warnings = output
    .split('\n')
    .filter((line) => line.trim())
    .filter((line) => !/"msg":"(shutting down|listening;)/.test(line));
  return { warnings, logFile, hwmMb: hwm === null ? null : Math.round(hwm * 10) / 10 };
}

// ---- the scenarios both servers run

/** A server under load: where it answers, its process, and the machine clients it knows (same ids and secrets on both). */
interface Target {
  base: string;
  pid: number;
  clients: { opaque: MachineClient; jwt: MachineClient };
}

type Comparable = 'client_credentials_opaque' | 'client_credentials_jwt' | 'client_credentials_dpop' | 'introspection';
const COMPARABLE: Comparable[] = ['client_credentials_opaque', 'client_credentials_jwt', 'client_credentials_dpop', 'introspection'];

/** One table of the scenarios both can run, each a function of its target: ours and the bare engine run the very same code. */
const SHARED_SCENARIOS: Record<Comparable, (target: Target) => Promise<ScenarioReport>> = {
  async client_credentials_opaque({ base, pid, clients }) {
    const load = clientCredentialsLoad(clients.opaque);
    await preflight(base, load, load.body, (a) => (isJwt(a.body?.access_token) ? 'expected an opaque access token, got a JWT' : undefined));
    return measureHttp(base, pid, load, settings);
  },
  async client_credentials_jwt({ base, pid, clients }) {
    const load = clientCredentialsLoad(clients.jwt);
    await preflight(base, load, load.body, (a) => (isJwt(a.body?.access_token) ? undefined : 'expected a JWT access token'));
    return measureHttp(base, pid, load, settings);
  },
  async client_credentials_dpop({ base, pid, clients }) {
    // Both sides check each proof (signature, htm, htu, iat) and keep its
    // jti against replay: ours in Redis or PostgreSQL, the bare engine in memory.
    const proofs = dpopProofs(`${base}/oauth/v2/token`);
    const load: HttpLoad = { ...clientCredentialsLoad(clients.opaque), headersFrom: () => ({ dpop: proofs.next() }) };
    await preflight(base, load, load.body, (a) =>
      a.body?.token_type === 'DPoP' ? undefined : `expected a DPoP-bound token, got token_type ${a.body?.token_type}`,
    );
    return measureHttp(base, pid, load, settings);
  },
  async introspection({ base, pid, clients }) {
    const basic = clientCredentialsLoad(clients.opaque).headers.authorization;
    const { access_token } = await token(base, basic, { grant_type: 'client_credentials', scope: 'openid' });
    const load = introspectionLoad(clients.opaque, access_token);
    await preflight(base, load, load.body);
    return measureHttp(base, pid, load, settings);
  },
};

// ---- the bare engine

interface BareEngine {
  /** Runs the bare engine's side of a scenario both can run. */
  run(name: Comparable): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the bare engine beside ours, with the same machine clients
 * (client_id and secret). Each scenario both can run goes to ours and then
 * at once to the bare engine, so that the two measurements of a ratio are
 * seconds apart, not minutes: this machine's speed drifts.
 */
async function startBare(taskset: string | undefined, clients: { opaque: MachineClient; jwt: MachineClient }): Promise<BareEngine> {
  const port = await freePort();
  log(`starting the bare oidc-provider${taskset ? ` on core ${SERVER_CORE}` : ''}…`);
  const bare: Child = await spawnChild({
    name: 'bare oidc-provider',
    script: join(ROOT, 'bench/bare-provider.ts'),
    env: {
      BARE_PORT: String(port),
      NODE_ENV: 'production',
      // For profiling the baseline, e.g. BENCH_BARE_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof-bare".
      NODE_OPTIONS: process.env.BENCH_BARE_NODE_OPTIONS ?? '',
      BARE_CLIENTS: JSON.stringify([
        { client_id: clients.opaque.clientId, client_secret: clients.opaque.clientSecret },
        { client_id: clients.jwt.clientId, client_secret: clients.jwt.clientSecret, jwt: true },
      ]),
    },
    port,
    readyPath: '/.well-known/openid-configuration',
    taskset,
    core: SERVER_CORE,
  });
  cleanups.push(() => bare.stop());
  const target: Target = { base: bare.url, pid: bare.pid, clients };
  return {
    run: (name) => scenario('bare', name, () => SHARED_SCENARIOS[name](target)),
    async stop() {
      const output = bare.output();
      await bare.stop();
      const problems = output.split('\n').filter((line) => /server_error|Error/.test(line));
      if (problems.length) details.push(`bare engine output: ${problems.slice(0, 5).join(' | ')}`);
    },
  };
}

// ---- main

async function main(): Promise<void> {
  const pin = pinning();
  // Which URLs were used is recorded beside it (database_url_used, redis_url_used).
  let stores = DATABASE_URL || REDIS_URL ? 'as given, not pinned' : 'the embedded database';
  if (OWN_STORES) {
    log(`bench: starting a PostgreSQL and a Redis of our own${pin.taskset ? ` on core ${BENCH_CORE}` : ''}…`);
    const own = await startBenchStores(pin.taskset, BENCH_CORE);
    cleanups.push(() => own.cleanup());
    DATABASE_URL = own.databaseUrl;
    REDIS_URL = own.redisUrl;
    stores = own.description;
  }
  for (const [name, url] of [
    ['DATABASE_URL', DATABASE_URL],
    ['REDIS_URL', REDIS_URL],
  ] as const) {
    if (url && !isLoopback(hostOf(url))) log(`bench: note: ${name} is not on this machine (${hostOf(url)}); the targets assume local stores`);
  }
  const started = new Date();
  const load = loadavg();
  log(
    `bench: ${DURATION} s per scenario (+${WARMUP} s warm-up), ${CONNECTIONS} connections, ${SELECTED.length} scenario(s); pinning: ${pin.taskset ? `server core ${SERVER_CORE}, load generator core ${BENCH_CORE}` : `off (${pin.reason})`}`,
  );

  let pinnedSelf = false;
  const pinLoadGenerator = () => {
    if (pin.taskset && !pinnedSelf) pinnedSelf = pinProcess(pin.taskset, BENCH_CORE);
  };
  const floors = measureFloors(pin.taskset);
  const findings = await benchOurs(pin.taskset, pinLoadGenerator);
  await cleanUp();
  cleaning = undefined;

  const scenarios: Record<string, ScenarioResult> = {};
  for (const name of SELECTED) {
    const r = results.get(name) ?? { ours: null, bare: null };
    const ratio = r.ours && r.bare && r.bare.rps > 0 ? Math.round((r.ours.rps / r.bare.rps) * 1000) / 1000 : null;
    scenarios[name] = { ours: r.ours, bare: r.bare, ratio };
  }
  const nodeVersion = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim() || process.version;
  const machine = {
    cpu_model: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_mb: Math.round(totalmem() / 2 ** 20),
    node_version: nodeVersion,
    database_url_used: Boolean(DATABASE_URL),
    redis_url_used: Boolean(REDIS_URL),
    stores,
    taskset: pin.taskset
      ? { used: true, server_core: SERVER_CORE, load_generator_core: BENCH_CORE, load_generator_pinned: pinnedSelf }
      : { used: false, reason: pin.reason },
    date: started.toISOString(),
    load_average_at_start: load.map((v) => Math.round(v * 100) / 100),
    duration_s: DURATION,
    warmup_s: WARMUP,
    connections: CONNECTIONS,
    code_flow_concurrency: FLOW_CONCURRENCY,
    server_rss_before_load_mb: rssAfterSetup,
    server_vm_hwm_mb: findings.hwmMb,
    crypto_floor: floors,
  };
  writeFileSync(OUTPUT, `${JSON.stringify({ machine, scenarios }, null, 2)}\n`);

  const out = process.stdout;
  out.write(
    `\nPortcullis vs bare oidc-provider — ${machine.cpu_model}, ${machine.cores} cores, node ${nodeVersion}, ${DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}${REDIS_URL ? ' + Redis' : ''}, ${DURATION} s per scenario, ${CONNECTIONS} connections${pin.taskset ? `, server on core ${SERVER_CORE}` : ', not pinned'}\n`,
  );
  out.write(
    '(p50, p99, errors and peak RSS show "ours / bare" where the bare engine ran the scenario; ratio = ours rps / bare rps; code_flow rps = complete flows per second)\n\n',
  );
  out.write(`${table(scenarios)}\n\n`);
  if (floors) {
    out.write(
      `Crypto floor of the server core: ${floors.rs256_signs_per_s} RS256 signatures/s, ${floors.argon2id_checks_per_s} argon2id checks/s (node:crypto's OpenSSL argon2id: ${floors.argon2id_openssl_checks_per_s}/s)\n\n`,
    );
  }
  out.write(
    `Targets (informational):\n${targets(scenarios, floors, Boolean(DATABASE_URL))
      .map((l) => `  ${l}`)
      .join('\n')}\n`,
  );
  if (details.length) out.write(`\nDetails:\n${details.map((d) => `  ${d}`).join('\n')}\n`);
  if (findings.warnings.length) {
    out.write(`\nOur server printed ${findings.warnings.length} warning/error line(s) (LOG_LEVEL=warn; all of it in ${findings.logFile}); the first ones:\n`);
    for (const line of findings.warnings.slice(0, 8)) out.write(`  ${line.slice(0, 1500)}\n`);
  }
  out.write(`\nWrote ${OUTPUT}\n`);
}

main()
  .then(() => {
    clearTimeout(watchdog);
    process.exitCode = 0;
  })
  .catch(async (err) => {
    log(`bench failed: ${(err as Error).stack ?? String(err)}`);
    killChildrenNow();
    await cleanUp();
    process.exitCode = 1;
  })
  .finally(() => {
    // autocannon and fetch keep-alive sockets must not hold the process open.
    setTimeout(() => process.exit(), 200).unref();
  });
