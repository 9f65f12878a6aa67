import { readFileSync, writeFileSync } from 'node:fs';
import type { Measurement } from './scenarios.ts';
import { table, targets, type Floors, type ScenarioResult } from './report.ts';

// The figures to report: the medians of several `npm run bench` runs
// (this machine's speed drifts between runs), optionally beside the medians
// of runs of the code before a change, made alternately in the same sitting.
//
//   node bench/medians.ts --out bench/results.json after1.json after2.json after3.json [--before b1.json b2.json b3.json]

interface RunFile {
  machine: Record<string, unknown> & { crypto_floor?: Floors | null; date?: string; load_average_at_start?: number[]; database_url_used?: boolean };
  scenarios: Record<string, ScenarioResult>;
}

function parseArgs(argv: string[]): { out: string; after: string[]; before: string[] } {
  const out = argv[argv.indexOf('--out') + 1];
  const split = argv.indexOf('--before');
  const files = (split < 0 ? argv : argv.slice(0, split)).filter((a, i, all) => a !== '--out' && all[i - 1] !== '--out');
  const before = split < 0 ? [] : argv.slice(split + 1);
  if (!out || argv.indexOf('--out') < 0 || files.length === 0) {
    process.stderr.write('usage: node bench/medians.ts --out results.json run1.json [run2.json …] [--before b1.json …]\n');
    process.exit(2);
  }
  return { out, after: files, before };
}

function median(values: Array<number | null | undefined>): number | null {
  const known = values.filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
  if (!known.length) return null;
  const mid = Math.floor(known.length / 2);
  return known.length % 2 ? known[mid]! : Math.round(((known[mid - 1]! + known[mid]!) / 2) * 1000) / 1000;
}

const FIELDS = ['rps', 'p50_ms', 'p99_ms', 'errors', 'peak_rss_mb', 'server_cpu_us_per_request'] as const;

function medianMeasurement(measurements: Array<Measurement | null>): Measurement | null {
  const present = measurements.filter((m): m is Measurement => m !== null);
  if (!present.length) return null;
  const result = {} as Record<string, number | null>;
  for (const field of FIELDS) result[field] = median(present.map((m) => m[field]));
  // An error in any run is not hidden by the median.
  result.errors = Math.max(...present.map((m) => m.errors));
  return result as unknown as Measurement;
}

function medianFloors(runs: RunFile[]): Floors | null {
  const floors = runs.map((r) => r.machine.crypto_floor).filter((f): f is Floors => Boolean(f));
  if (!floors.length) return null;
  return {
    rs256_signs_per_s: median(floors.map((f) => f.rs256_signs_per_s))!,
    argon2id_checks_per_s: median(floors.map((f) => f.argon2id_checks_per_s))!,
    argon2id_openssl_checks_per_s: median(floors.map((f) => f.argon2id_openssl_checks_per_s))!,
  };
}

function medians(runs: RunFile[]) {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.scenarios)))];
  const scenarios: Record<string, ScenarioResult & Record<string, unknown>> = {};
  for (const name of names) {
    const of = runs.map((r) => r.scenarios[name]).filter((s): s is ScenarioResult => Boolean(s));
    scenarios[name] = {
      ours: medianMeasurement(of.map((s) => s.ours)),
      bare: medianMeasurement(of.map((s) => s.bare)),
      // The median of the runs' ratios: each ratio's two halves were measured seconds apart.
      ratio: median(of.map((s) => s.ratio)),
      ratios_of_runs: of.map((s) => s.ratio),
      rps_of_runs: of.map((s) => s.ours?.rps ?? null),
      server_cpu_us_per_request_of_runs: of.map((s) => s.ours?.server_cpu_us_per_request ?? null),
    };
  }
  return { scenarios, floors: medianFloors(runs) };
}

const args = parseArgs(process.argv.slice(2));
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as RunFile;
const after = args.after.map(read);
const before = args.before.map(read);
const now = medians(after);
const then = before.length ? medians(before) : undefined;
if (then) {
  for (const [name, result] of Object.entries(now.scenarios)) {
    const old = then.scenarios[name];
    if (!old) continue;
    result.before = {
      ours_rps: old.ours?.rps ?? null,
      ratio: old.ratio,
      server_cpu_us_per_request: old.ours?.server_cpu_us_per_request ?? null,
      peak_rss_mb: old.ours?.peak_rss_mb ?? null,
    };
  }
}

const machine = {
  ...after[0]!.machine,
  crypto_floor: now.floors,
  median_of_runs: after.length,
  dates: after.map((r) => r.machine.date),
  load_average_at_start: after.map((r) => r.machine.load_average_at_start),
  ...(then ? { before: { runs: before.length, dates: before.map((r) => r.machine.date), crypto_floor: then.floors } } : {}),
};
writeFileSync(args.out, `${JSON.stringify({ machine, scenarios: now.scenarios }, null, 2)}\n`);

const out = process.stdout;
out.write(`Medians of ${after.length} run(s)${before.length ? ` (before: ${before.length} run(s))` : ''}\n\n${table(now.scenarios)}\n\n`);
if (now.floors)
  out.write(`Crypto floor of the server core: ${now.floors.rs256_signs_per_s} RS256 signatures/s, ${now.floors.argon2id_checks_per_s} argon2id checks/s\n\n`);
out.write(
  `Targets (informational):\n${targets(now.scenarios, now.floors, Boolean(after[0]!.machine.database_url_used))
    .map((l) => `  ${l}`)
    .join('\n')}\n\n`,
);
out.write(`Server CPU per request (µs; per flow for code_flow), median${before.length ? ' before → after' : ''}:\n`);
for (const [name, result] of Object.entries(now.scenarios)) {
  const was = (result.before as { server_cpu_us_per_request: number | null } | undefined)?.server_cpu_us_per_request;
  out.write(
    `  ${name}: ${was !== undefined ? `${was ?? 'n/a'} → ` : ''}${result.ours?.server_cpu_us_per_request ?? 'n/a'}${result.bare ? ` (bare ${result.bare.server_cpu_us_per_request ?? 'n/a'})` : ''}\n`,
  );
}
out.write(`\nWrote ${args.out}\n`);
