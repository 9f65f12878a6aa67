import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { testServer } from '../test/support/server.ts';

// `node bench/scim-list.ts`: one org with 100,000 human users (SCIM_USERS
// sets another number), then GET /scim/v2/{orgId}/Users with filters of
// several kinds, one request at a time, and the latency percentiles of
// each. The server runs in this process (PostgreSQL and Redis when
// DATABASE_URL / REDIS_URL are set, the embedded database otherwise); the
// users are written straight into its tables in one statement, as
// bench/users-search.ts does. Not part of `npm run bench`.

const USERS = Number(process.env.SCIM_USERS ?? 100_000);
const REQUESTS = Number(process.env.SCIM_REQUESTS ?? 500);
const WARMUP = 50;
const pad = (i: number) => String(i).padStart(6, '0');
const pick = () => Math.floor(Math.random() * USERS);

/** Filters of the kinds clients send, each made anew per request so no answer is cached anywhere. */
const FILTERS: Record<string, () => string> = {
  'no filter, first page (by userName)': () => '',
  'userName eq (how clients look a user up)': () => `userName eq "scim-${pad(pick())}"`,
  'externalId eq': () => `externalId eq "ext-${pad(pick())}"`,
  'userName sw … and active eq true (10 matches)': () => `userName sw "scim-${pad(pick()).slice(0, -1)}" and active eq true`,
  'emails[type eq "work"].value eq': () => `emails[type eq "work"].value eq "scim-${pad(pick())}@bench.test"`,
  'name.familyName eq (no index)': () => `name.familyName eq "User ${pick()}"`,
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const server = await testServer({ env: { LOG_LEVEL: 'silent' } });
try {
  const db = server.running.db;
  const { rows } = await db.query<{ org_id: string }>("SELECT org_id FROM users WHERE user_name = 'portcullis-admin'");
  const orgId = rows[0]!.org_id;
  const started = performance.now();
  await db.query(
    `INSERT INTO users (id, org_id, type, user_name, first_name, last_name, display_name, email, email_verified, external_id, state, sequence, creation_date, change_date)
     SELECT 'bench-scim-' || i, $1, 'human', 'scim-' || lpad(i::text, 6, '0'), 'Scim', 'User ' || i, 'Scim User ' || i,
            'scim-' || lpad(i::text, 6, '0') || '@bench.test', true, 'ext-' || lpad(i::text, 6, '0'),
            CASE WHEN i % 10 = 0 THEN 'inactive' ELSE 'active' END, 1, now(), now()
       FROM generate_series(0, $2 - 1) AS i`,
    [orgId, USERS],
  );
  await db.query('ANALYZE users');
  process.stdout.write(`${db.kind}: ${USERS} users written in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

  const base = `${server.url}/scim/v2/${orgId}/Users`;
  const headers = { authorization: `Bearer ${server.pat}` };
  const list = async (filter: string) => {
    const query = new URLSearchParams({ count: '50', ...(filter ? { filter } : {}) });
    const response = await fetch(`${base}?${query}`, { headers });
    const body = (await response.json()) as { totalResults?: number };
    if (response.status !== 200 || typeof body.totalResults !== 'number') throw new Error(`${filter}: HTTP ${response.status} ${JSON.stringify(body)}`);
  };

  // What every request costs besides its filter: the token, the caller's roles, the org.
  const config = async () => {
    const response = await fetch(`${server.url}/scim/v2/${orgId}/ServiceProviderConfig`, { headers });
    if (response.status !== 200) throw new Error(`ServiceProviderConfig: HTTP ${response.status}`);
    await response.arrayBuffer();
  };
  const measure = async (request: () => Promise<void>) => {
    for (let i = 0; i < WARMUP; i++) await request();
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const at = performance.now();
      await request();
      times.push(performance.now() - at);
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99), max: times.at(-1)! };
  };
  const results: Record<string, { p50: number; p95: number; p99: number; max: number }> = {
    'GET /ServiceProviderConfig (authentication only)': await measure(config),
  };
  for (const [name, filter] of Object.entries(FILTERS)) results[name] = await measure(() => list(filter()));
  process.stdout.write(
    `GET /Users?filter=…&count=50, ${REQUESTS} requests each, one at a time, load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs (ms):\n`,
  );
  for (const [name, r] of Object.entries(results)) {
    process.stdout.write(
      `  ${name.padEnd(48)} p50 ${r.p50.toFixed(2).padStart(7)}  p95 ${r.p95.toFixed(2).padStart(7)}  p99 ${r.p99.toFixed(2).padStart(7)}  max ${r.max.toFixed(2).padStart(7)}\n`,
    );
  }
} finally {
  await server.stop();
}
